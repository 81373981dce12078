"""The node lifecycle controller, as kube-controller-manager's (``pkg/controller/nodelifecycle``):

- **Health.** A node is alive while its kubelet renews its Lease in ``kube-node-lease`` or posts
  a new Ready ``lastHeartbeatTime``. Every ``node_monitor_period`` the controller looks at each
  node; one whose heartbeat it has not *seen change* for ``node_monitor_grace_period`` (40 s; a
  node that never posted a Ready condition: ``node_startup_grace_period``, 60 s, from its
  creation) gets its Ready, MemoryPressure, DiskPressure and PIDPressure conditions set to
  ``Unknown`` with reason ``NodeStatusUnknown`` and message ``Kubelet stopped posting node
  status.`` (``NodeStatusNeverUpdated`` / ``Kubelet never posted node status.`` for a condition
  the kubelet never posted). As upstream, the time is the controller's own observation time,
  never the kubelet's clock. A node that leaves Ready gets a ``NodeNotReady`` event and its pods'
  Ready condition set to False (``MarkPodsNotReady``).
- **NoSchedule taints** follow the conditions: Ready False → ``node.kubernetes.io/not-ready``,
  Unknown → ``node.kubernetes.io/unreachable``; MemoryPressure, DiskPressure, PIDPressure,
  NetworkUnavailable True → ``memory-pressure``, ``disk-pressure``, ``pid-pressure``,
  ``network-unavailable``; ``spec.unschedulable`` → ``unschedulable``; each removed when its
  cause is gone. Added taints carry ``timeAdded``.
- **NoExecute taints** (taint-based eviction): ``not-ready`` / ``unreachable`` NoExecute for a
  Ready False / Unknown node, removed when it is Ready again. As upstream, when every node of a
  zone is not Ready no new NoExecute taint is added there, and when every node of the cluster is
  not Ready (the "master disruption mode": the control plane's own connectivity is the likelier
  fault) the NoExecute taints are removed. Upstream's per-zone eviction rate limiting
  (0.1 node/s) is not reproduced: taints are applied at once.

Evicting pods from NoExecute-tainted nodes (upstream's taint eviction controller) is not part of
this controller.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from numaplane.kube.client import KubeClient
from numaplane.kube.errors import ApiError, KubeError
from numaplane.kube.events import EventRecorder, rfc3339
from numaplane.kube.informer import EventHandler, Informer
from numaplane.kube.workqueue import ShutDown, WorkQueue

log = logging.getLogger(__name__)

Obj = dict[str, Any]

UNREACHABLE: Final = "node.kubernetes.io/unreachable"
NOT_READY: Final = "node.kubernetes.io/not-ready"
UNSCHEDULABLE: Final = "node.kubernetes.io/unschedulable"
#: (condition type, status) → the NoSchedule taint key upstream puts on the node.
CONDITION_TAINTS: Final = {
    ("Ready", "False"): NOT_READY,
    ("Ready", "Unknown"): UNREACHABLE,
    ("MemoryPressure", "True"): "node.kubernetes.io/memory-pressure",
    ("DiskPressure", "True"): "node.kubernetes.io/disk-pressure",
    ("NetworkUnavailable", "True"): "node.kubernetes.io/network-unavailable",
    ("PIDPressure", "True"): "node.kubernetes.io/pid-pressure",
}
NO_SCHEDULE_KEYS: Final = frozenset({*CONDITION_TAINTS.values(), UNSCHEDULABLE})
NO_EXECUTE_KEYS: Final = frozenset({UNREACHABLE, NOT_READY})
#: The conditions the controller sets Unknown when the kubelet goes silent, Ready first.
KUBELET_CONDITIONS: Final = ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure")
STOPPED_REASON: Final = "NodeStatusUnknown"
STOPPED_MESSAGE: Final = "Kubelet stopped posting node status."
NEVER_REASON: Final = "NodeStatusNeverUpdated"
NEVER_MESSAGE: Final = "Kubelet never posted node status."
ZONE_LABELS: Final = ("topology.kubernetes.io/region", "topology.kubernetes.io/zone")


def parse_time(value: object) -> float | None:
    """A metav1.Time / MicroTime string as seconds since the epoch (``None`` when unset)."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def condition(node: Obj, kind: str) -> Obj | None:
    """The node's status condition of type ``kind``."""
    for cond in (node.get("status") or {}).get("conditions") or []:
        if isinstance(cond, dict) and cond.get("type") == kind:
            return cond
    return None


def ready_status(node: Obj) -> str:
    """``True``, ``False`` or ``Unknown`` (no Ready condition counts as Unknown)."""
    cond = condition(node, "Ready")
    return str(cond.get("status") or "Unknown") if cond else "Unknown"


def wanted_taints(node: Obj, effect: str) -> set[str]:
    """The controller's taint keys of ``effect`` that ``node``'s conditions call for."""
    if effect == "NoExecute":
        status = ready_status(node)
        return {NOT_READY} if status == "False" else {UNREACHABLE} if status == "Unknown" else set()
    wanted = {
        key
        for (kind, status), key in CONDITION_TAINTS.items()
        if (cond := condition(node, kind)) is not None and cond.get("status") == status
    }
    if (node.get("spec") or {}).get("unschedulable"):
        wanted.add(UNSCHEDULABLE)
    return wanted


@dataclass
class _Health:
    """What the controller last saw of a node's heartbeats, and when (its clock)."""

    probe_time: float
    heartbeat: float | None
    lease_renew: float | None


class NodeLifecycleController:
    """Marks silent nodes Unknown and keeps the node-condition taints in step."""

    def __init__(
        self,
        client: KubeClient,
        *,
        recorder: EventRecorder | None = None,
        node_monitor_period: float = 5.0,
        node_monitor_grace_period: float = 40.0,
        node_startup_grace_period: float = 60.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.client = client
        self.recorder = recorder
        self.node_monitor_period = node_monitor_period
        self.grace_period = node_monitor_grace_period
        self.startup_grace_period = node_startup_grace_period
        self._clock = clock
        self.nodes = Informer(client, "v1", "nodes")
        self.leases = Informer(
            client, "coordination.k8s.io/v1", "leases", namespace="kube-node-lease"
        )
        self._health: dict[str, _Health] = {}
        self._queue = WorkQueue()
        self.nodes.add_handler(
            EventHandler(
                on_add=lambda n: self._queue.add(n["metadata"]["name"]),
                on_update=lambda old, new: self._queue.add(new["metadata"]["name"]),
                on_delete=self._forget,
            )
        )

    def _forget(self, node: Obj) -> None:
        self._health.pop(node["metadata"]["name"], None)

    async def run(self) -> None:
        """Watch Nodes and Leases; monitor health every ``node_monitor_period`` and reconcile
        taints on every node change, until cancelled."""
        informers = [asyncio.ensure_future(i.run()) for i in (self.nodes, self.leases)]
        worker = asyncio.ensure_future(self._work())
        try:
            await self.nodes.wait_synced()
            await self.leases.wait_synced()
            while True:
                try:
                    await self.monitor_once()
                except KubeError as err:
                    log.warning("node health pass failed: %s", err)
                await asyncio.sleep(self.node_monitor_period)
        finally:
            self._queue.shutdown()
            for task in (*informers, worker):
                task.cancel()
            for task in (*informers, worker):
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    async def _work(self) -> None:
        while True:
            try:
                name = await self._queue.get()
            except ShutDown:
                return
            try:
                node = self.nodes.get(None, name)
                if node is not None:
                    await self._reconcile_taints(node)
                self._queue.forget(name)
            except KubeError as err:
                log.info("node %s: taints not reconciled: %s", name, err)
                self._queue.add_rate_limited(name)
            finally:
                self._queue.done(name)

    # ----- health -----

    async def monitor_once(self) -> None:
        """One ``monitorNodeHealth`` pass over every node (the informers' current view)."""
        nodes = self.nodes.list()
        updated: list[Obj] = []
        for node in nodes:
            before = ready_status(node)
            node = await self._update_health(node)
            updated.append(node)
            if before == "True" and ready_status(node) != "True":
                await self._node_not_ready(node)
        for node in updated:
            await self._reconcile_taints(node, all_nodes=updated)

    async def _update_health(self, node: Obj) -> Obj:
        """``tryUpdateNodeHealth``: note heartbeats; past the grace period set the kubelet's
        conditions Unknown. Returns the node as now stored."""
        name = node["metadata"]["name"]
        now = self._clock()
        ready = condition(node, "Ready")
        heartbeat = parse_time(ready.get("lastHeartbeatTime")) if ready else None
        lease = self.leases.get("kube-node-lease", name)
        renew = parse_time(((lease or {}).get("spec") or {}).get("renewTime"))
        saved = self._health.get(name)
        if saved is None:
            if ready is None:
                # Never posted: the startup grace period runs from the node's creation.
                created = parse_time(node["metadata"].get("creationTimestamp"))
                probe = created if created is not None else now
            else:
                probe = now
            saved = self._health[name] = _Health(probe, heartbeat, renew)
        else:
            if heartbeat != saved.heartbeat:
                saved.heartbeat, saved.probe_time = heartbeat, now
            if renew is not None and (saved.lease_renew is None or renew > saved.lease_renew):
                saved.lease_renew, saved.probe_time = renew, now
        grace = self.grace_period if ready is not None else self.startup_grace_period
        if now <= saved.probe_time + grace:
            return node
        stamp = rfc3339(now)
        created_at = node["metadata"].get("creationTimestamp") or stamp
        status = dict(node.get("status") or {})
        conditions = [dict(c) for c in status.get("conditions") or []]
        changed = False
        for kind in KUBELET_CONDITIONS:
            cond = next((c for c in conditions if c.get("type") == kind), None)
            if cond is None:
                conditions.append(
                    {
                        "type": kind,
                        "status": "Unknown",
                        "reason": NEVER_REASON,
                        "message": NEVER_MESSAGE,
                        "lastHeartbeatTime": created_at,
                        "lastTransitionTime": stamp,
                    }
                )
                changed = True
            elif cond.get("status") != "Unknown":
                cond.update(
                    status="Unknown",
                    reason=STOPPED_REASON,
                    message=STOPPED_MESSAGE,
                    lastTransitionTime=stamp,
                )
                changed = True
        if not changed:
            return node
        log.info(
            "node %s: no heartbeat for %.0fs: conditions Unknown", name, now - saved.probe_time
        )
        stored = await self.client.update(
            "v1",
            "nodes",
            {**node, "status": {**status, "conditions": conditions}},
            subresource="status",
        )
        return stored

    async def _node_not_ready(self, node: Obj) -> None:
        name = node["metadata"]["name"]
        if self.recorder is not None:
            self.recorder.event(
                node, "Normal", "NodeNotReady", f"Node {name} status is now: NodeNotReady"
            )
        pods = await self.client.list_all("v1", "pods", field_selector=f"spec.nodeName={name}")
        stamp = rfc3339(self._clock())
        for pod in pods[0]:
            conditions = (pod.get("status") or {}).get("conditions") or []
            ready = next((c for c in conditions if c.get("type") == "Ready"), None)
            if ready is None or ready.get("status") == "False":
                continue
            ready["status"] = "False"
            ready["lastTransitionTime"] = stamp
            with contextlib.suppress(ApiError):
                # A pod changed meanwhile is the kubelet's to report: skip it, as upstream.
                await self.client.update(
                    "v1", "pods", pod, pod["metadata"]["namespace"], subresource="status"
                )

    # ----- taints -----

    def _zone(self, node: Obj) -> str:
        labels = node["metadata"].get("labels") or {}
        return ":".join(str(labels.get(k, "")) for k in ZONE_LABELS)

    def _no_execute_frozen(self, node: Obj, all_nodes: list[Obj]) -> tuple[bool, bool]:
        """(every node of the cluster is not Ready, every node of ``node``'s zone is not
        Ready)."""
        everyone = all(ready_status(n) != "True" for n in all_nodes)
        zone = self._zone(node)
        in_zone = [n for n in all_nodes if self._zone(n) == zone]
        return everyone, all(ready_status(n) != "True" for n in in_zone)

    async def _reconcile_taints(self, node: Obj, *, all_nodes: list[Obj] | None = None) -> None:
        """Bring ``node``'s controller-owned taints in line with its conditions."""
        nodes = all_nodes if all_nodes is not None else self.nodes.list()
        cluster_down, zone_down = self._no_execute_frozen(node, nodes or [node])
        for _ in range(5):
            taints = [dict(t) for t in (node.get("spec") or {}).get("taints") or []]
            want_ns = wanted_taints(node, "NoSchedule")
            want_ne = wanted_taints(node, "NoExecute")
            have = {(t.get("key"), t.get("effect")) for t in taints}
            if cluster_down:
                want_ne = set()  # master disruption mode: no NoExecute taints anywhere
            elif zone_down:
                # A fully disrupted zone gets no new NoExecute taints; present ones stay.
                want_ne = {k for k in NO_EXECUTE_KEYS if (k, "NoExecute") in have}
            keep = [
                t
                for t in taints
                if not (
                    t.get("effect") == "NoSchedule"
                    and t.get("key") in NO_SCHEDULE_KEYS
                    and t.get("key") not in want_ns
                )
                and not (
                    t.get("effect") == "NoExecute"
                    and t.get("key") in NO_EXECUTE_KEYS
                    and t.get("key") not in want_ne
                )
            ]
            stamp = rfc3339(self._clock())
            add = [
                {"key": k, "effect": effect, "timeAdded": stamp}
                for effect, keys in (("NoSchedule", want_ns), ("NoExecute", want_ne))
                for k in sorted(keys)
                if (k, effect) not in have
            ]
            if not add and len(keep) == len(taints):
                return
            spec = {**(node.get("spec") or {}), "taints": keep + add}
            if not spec["taints"]:
                del spec["taints"]
            try:
                await self.client.update("v1", "nodes", {**node, "spec": spec})
                return
            except ApiError as err:
                if err.is_not_found:
                    return
                if not err.is_conflict:
                    raise
            node = await self.client.get("v1", "nodes", node["metadata"]["name"])
