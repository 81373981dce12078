"""The NUMA filter and score, from the node's NodeResourceTopology (NRT).

Three modes, per node:

- **exact** — the NRT carries the ``numaplane.io/node-snapshot`` annotation (a
  ``NodeSnapshot``). The scheduler keeps a *replica*: ``restore_node(snapshot, pods)``, minus
  the pods that have ended, plus the pods assigned to the node that the snapshot does not hold
  yet (assumed), admitted on the replica in assignment (= bind) order. ``replica.admit(pod)``
  is then the node's own Topology Manager answer: the filter rejects wherever it would not
  admit. Ends and bindings reach the replica in the pod watch's order, the order the node
  applies them in; the pods this scheduler is still binding follow them (``NumaNode._replay``).
  A newer snapshot replaces the replica only when it disagrees with it (a pod order or
  the CPU manager's free CPUs differ): restoring costs milliseconds, and a snapshot that only
  confirms the admissions the replica already made changes nothing.
- **estimate** — an NRT without the annotation (a real kubelet with NFD): scheduler-plugins'
  NodeResourceTopologyMatch ``single-numa-node`` fit. Under that policy only: with scope
  ``container`` every init container, then every app container (each taking its requests out
  of the zone it fits first), must fit in one zone's ``available``; with scope ``pod`` the
  pod's total requests must. cpu and memory count only for Guaranteed pods (integral cpu for
  cpu); hugepages and devices always. Pods assigned since the NRT was published are not
  subtracted (as the plugin without its reserve cache).
- **none** — no NRT: no NUMA filter, NUMA score 0.

Reasons: exact mode ``cannot align <scope>: <kubelet reason>`` (``container`` or ``pod``, e.g.
``cannot align container: TopologyAffinityError``); estimate mode the plugin's own ``cannot
align init container`` / ``cannot align container`` / ``cannot align pod``.

**NUMA score** (``stranded``): the unit ``u`` is the pod's exclusive-CPU size — its smallest
exclusive container under scope ``container``, the sum of its exclusive containers under scope
``pod``. After placing the pod, each zone's free exclusive CPUs ``f`` strand ``f mod u`` (CPUs
no further pod like this one can use there). ``score = 100 * (cpus - stranded) // cpus`` over
the node's CPUs; 0 for a pod without exclusive CPUs or a node in mode none. It is added to the
resource score with weight ``NUMA_SCORE_WEIGHT`` (1, the weight of an upstream score plugin).

Cost: ``quick`` (the necessary condition and the score, from the replica's free CPUs per zone)
is cached per node by the pod's resource signature and dropped whenever the node changes, so a
decision re-evaluates only the nodes that changed since the last one; the exact ``admit`` on a
replica runs only on the best-scored candidates, in order, and the first that admits keeps the
pod (``framework``). The zone-level code (estimate, stranded score) is in ``numa_zones``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any, Final

import orjson

from numaplane.controllers.scheduler.numa_zones import (
    PASS,
    SINGLE_NUMA_NODE,
    Prediction,
    estimate,
    score,
    stranded,
    unit,
    zones_of,
)
from numaplane.controllers.scheduler.podinfo import PodInfo
from numaplane.errors import NumaplaneError
from numaplane.node.admission import Node
from numaplane.node.snapshot import NodeSnapshot, restore_node
from numaplane.node.statedir import CPU_FILE
from numaplane.topology.cpuset import CPUSet

__all__ = [
    "NRT_API_VERSION",
    "NRT_RESOURCE",
    "NUMA_SCORE_WEIGHT",
    "SNAPSHOT_ANNOTATION",
    "NumaNode",
    "Prediction",
    "stranded",
]

log = logging.getLogger(__name__)

#: The answer for every other pod while a binding here is unconfirmed (``NumaNode.assume``).
SETTLING: Final = Prediction("waiting for a binding to the node to be confirmed", 0)

NRT_API_VERSION: Final = "topology.node.k8s.io/v1alpha2"
NRT_RESOURCE: Final = "noderesourcetopologies"
SNAPSHOT_ANNOTATION: Final = "numaplane.io/node-snapshot"
NUMA_SCORE_WEIGHT: Final = 1


class NumaNode:
    """One node's NUMA view (see the module doc): the NRT, and in exact mode the replica."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.policy = ""
        self.scope = "container"
        self.mode = "none"
        self.zones: list[dict[str, int]] = []
        self.replica: Node | None = None
        self.snapshot_text: str | None = None
        #: Bumped on every change of what the filter answers (the prediction cache's key).
        self.version = 0
        #: How many times the replica was restored from a snapshot.
        self.rebuilds = 0
        self._predictions: dict[bytes, Prediction] = {}
        self._zone_cpus: list[CPUSet] = []
        self._allocatable_cpus: CPUSet = CPUSet()
        self._free: list[int] | None = None
        self._free_memory: list[dict[str, int]] | None = None
        #: The pods on the replica (its admitted pods), by uid.
        self._on: set[str] = set()
        #: Pods this scheduler bound here whose binding its pod watch has not shown yet.
        self.unconfirmed: dict[str, PodInfo] = {}

    # -- the NRT ------------------------------------------------------------------------

    def clear(self) -> None:
        """The NRT is gone: no NUMA filter for this node."""
        self.mode = "none"
        self.replica = None
        self.snapshot_text = None
        self.zones = []
        self._changed()

    def set_nrt(
        self,
        obj: dict[str, Any],
        assigned: Mapping[str, PodInfo],
        ended: Callable[[str], bool],
        order: Callable[[str], tuple[float, float]],
    ) -> bool:
        """Take a new version of the node's NRT; whether the filter's answers may change.
        ``assigned`` are the pods assigned to the node in bind order, ``ended`` tells a pod that
        has ended (terminal or deleted), ``order`` when the pod watch showed a pod bound and
        ended (``Cache.watch_order``)."""
        attributes = {str(a.get("name")): str(a.get("value")) for a in obj.get("attributes") or []}
        self.policy = attributes.get("topologyManagerPolicy", "")
        self.scope = attributes.get("topologyManagerScope", "container")
        text = ((obj.get("metadata") or {}).get("annotations") or {}).get(SNAPSHOT_ANNOTATION)
        if text is None:
            self.replica = None
            self.snapshot_text = None
            self.mode = "estimate"
            self.zones = zones_of(obj)
            self._changed()
            return True
        if text == self.snapshot_text and self.replica is not None:
            return False
        self.snapshot_text = text
        try:
            doc = orjson.loads(text)
            if self.replica is not None and self._agrees(doc, ended):
                return False
            snapshot = NodeSnapshot.from_dict(doc, source=self._source)
            self._rebuild(snapshot, assigned, ended, order)
        except (NumaplaneError, ValueError, TypeError, KeyError) as err:
            # A snapshot this scheduler cannot read: the zone estimate still guards the node.
            log.warning("%s: %s; using the zone estimate", self._source, err)
            self.replica = None
            self.mode = "estimate"
            self.zones = zones_of(obj)
        self._changed()
        return True

    @property
    def _source(self) -> str:
        return f"NodeResourceTopology {self.name} annotation {SNAPSHOT_ANNOTATION}"

    def _agrees(self, doc: dict[str, Any], ended: Callable[[str], bool]) -> bool:
        # The replica already is this snapshot plus the assumed pods when the snapshot's live
        # pods are the replica's pods in the same order, and the free CPUs agree once the
        # assumed pods' CPUs (on the replica only) and the ended pods' (in the snapshot only)
        # are set aside.
        replica = self.replica
        assert replica is not None
        snap_uids = [str(p["uid"]) for p in doc["pods"]]
        in_snap = set(snap_uids)
        live = [u for u in snap_uids if not ended(u)]
        on_replica = [p.uid for p in replica.pods]
        if [u for u in on_replica if u in in_snap] != live:
            return False
        cpu_doc = doc["states"][CPU_FILE]
        snap_free = CPUSet.parse(str(cpu_doc.get("defaultCpuSet", "")))
        entries = cpu_doc.get("entries") or {}
        for uid in snap_uids:
            if ended(uid):
                for cpus in (entries.get(uid) or {}).values():
                    snap_free = snap_free.union(CPUSet.parse(str(cpus)))
        state = replica.cpu_manager.state
        mine = state.get_default_cpu_set()
        for uid in on_replica:
            if uid not in in_snap:
                for cpus in state.get_pod_cpu_sets(uid).values():
                    mine = mine.union(cpus)
        return bool(mine == snap_free)

    def _rebuild(
        self,
        snapshot: NodeSnapshot,
        assigned: Mapping[str, PodInfo],
        ended: Callable[[str], bool],
        order: Callable[[str], tuple[float, float]],
    ) -> None:
        # After the snapshot, the node freed its pods that ended and admitted the pods bound
        # since, each at its place in the pod watch: the replica does the same, in that order
        # (an end first at equal places: both came with the initial list).
        known = {uid: assigned[uid].pod for uid in snapshot.pod_uids if uid in assigned}
        replica = restore_node(snapshot, known, source=self._source)
        in_snap = set(snapshot.pod_uids)
        # A pod bound before a pod the snapshot holds was handled by the node before it:
        # absent from the snapshot, it has ended there (or was refused), seen here or not.
        handled = max((order(u)[0] for u in snapshot.pod_uids if u in assigned), default=-1.0)
        steps: list[tuple[float, int, str, PodInfo | None]] = [
            (order(uid)[1], 0, uid, None) for uid in snapshot.pod_uids if ended(uid)
        ]
        for uid, pod in assigned.items():
            bound = order(uid)[0]
            if uid not in in_snap and not (bound < handled):
                steps.append((bound, 1, uid, pod))
        steps.sort(key=lambda step: (step[0], step[1]))
        for _, _, uid, held in steps:
            if held is None:
                replica.release(uid)
                continue
            admission = replica.admit(held.pod)
            if not admission.admitted:
                # The node's agent will reject it too (it admits in the same order).
                log.info("%s: assumed %s not admitted: %s", self.name, held.key, admission.reason)
        self.replica = replica
        self._on = {p.uid for p in replica.pods}
        self.mode = "exact"
        self.rebuilds += 1
        machine = replica.machine
        reserved = replica.cpu_manager.reserved_cpus()
        self._allocatable_cpus = machine.all_cpu_ids.difference(reserved)
        self._zone_cpus = [machine.cpus_in_numa_nodes(z) for z in machine.numa_ids]

    def _changed(self) -> None:
        self.version += 1
        self._predictions.clear()
        self._free = None
        self._free_memory = None

    # -- filter, score, assume ---------------------------------------------------------------

    def quick(self, pod: PodInfo) -> Prediction:
        """The cheap answer for ``pod`` here (cached until the node changes): in exact mode a
        known rejection, the zone-level necessary condition, and the estimated NUMA score (the
        pod placed in the first zone with room, as the Topology Manager's lowest-id tie-break);
        in estimate mode the whole filter and score; nothing in mode none."""
        if self.mode == "none":
            return PASS
        if self.mode == "exact" and self.unconfirmed and pod.uid not in self.unconfirmed:
            return SETTLING
        cached = self._predictions.get(pod.signature)
        if cached is not None:
            return cached
        if self.mode == "exact":
            result = self._quick_exact(pod)
        else:
            result = estimate(pod, self.policy, self.scope, self.zones)
        self._predictions[pod.signature] = result
        return result

    def _quick_exact(self, pod: PodInfo) -> Prediction:
        replica = self.replica
        assert replica is not None
        config = replica.config
        scope = config.topology_manager_scope
        free = self._free_per_zone(replica)
        size = unit(pod, scope)
        refused = Prediction(f"cannot align {scope}: TopologyAffinityError", 0)
        single = config.topology_manager_policy == SINGLE_NUMA_NODE
        if single and scope == "container" and config.memory_manager_policy == "Static":
            # Necessary, as for the CPUs below: a container's memory of each kind comes from
            # one zone under single-numa-node.
            memory = self._free_memory_per_zone(replica)
            for name, need in pod.memory_needs.items():
                if max((zone.get(name, 0) for zone in memory), default=0) < need:
                    return refused
        if not size:
            return PASS
        needs = [sum(pod.exclusive_cpus)] if scope == "pod" else list(pod.exclusive_cpus)
        if single and config.cpu_manager_policy == "static" and max(free, default=0) < max(needs):
            # Necessary for single-numa-node: a container's exclusive CPUs come from one zone
            # (CPUs an init container frees for reuse came out of the same zone's free ones),
            # so without a zone that has them the merged hint cannot be preferred.
            return refused
        after = list(free)
        for need in needs:
            for i, f in enumerate(after):
                if f >= need:
                    after[i] = f - need
                    break
        return Prediction("", score(after, size, len(self._allocatable_cpus)))

    def admit(self, pod: PodInfo) -> str:
        """Exact mode: admit ``pod`` on the replica for real; ``""`` when it was admitted (it
        now holds its resources there: assume or ``forget`` it), else the rejection reason (which
        ``quick`` answers from then on, until the node changes); while another pod's binding
        here is unconfirmed, ``SETTLING``'s reason."""
        assert self.replica is not None
        if self.unconfirmed and pod.uid not in self.unconfirmed and pod.uid not in self._on:
            return SETTLING.reason
        return self._admit(pod)

    def _admit(self, pod: PodInfo) -> str:
        # ``admit`` without the wait for an unconfirmed binding: what the watch shows is
        # admitted in its order whatever waits behind it.
        replica = self.replica
        assert replica is not None
        if pod.uid in self._on:
            return ""
        scope = replica.config.topology_manager_scope
        try:
            admission = replica.admit(pod.pod)
        except NumaplaneError as err:
            reason = f"cannot align {scope}: {err}"
        else:
            if admission.admitted:
                self._on.add(pod.uid)
                self._changed()
                return ""
            reason = f"cannot align {scope}: {admission.reason}"
        self._predictions[pod.signature] = Prediction(reason, 0)
        return reason

    def _free_memory_per_zone(self, replica: Node) -> list[dict[str, int]]:
        memory = self._free_memory
        if memory is None:
            machine_state = replica.memory_manager.state.get_machine_state()
            memory = self._free_memory = [
                {name: table.free for name, table in tables.memory_map.items()}
                for tables in machine_state.values()
            ]
        return memory

    def _free_per_zone(self, replica: Node) -> list[int]:
        free = self._free
        if free is None:
            cpus = replica.cpu_manager.state.get_default_cpu_set()
            cpus = cpus.intersection(self._allocatable_cpus)
            free = self._free = [len(cpus.intersection(z)) for z in self._zone_cpus]
        return free

    def assume(self, pod: PodInfo) -> bool:
        """Admit ``pod`` on the replica for real, unless ``admit`` already did (this scheduler
        is binding it here); whether the replica admitted it (always true in the other modes).
        An admitted pod waits behind what the pod watch has shown until :meth:`confirm`, and
        until then no other pod is placed here: its place on the node, and so the node's answer
        for the next pod, depends on what the watch shows before its binding."""
        if self.mode != "exact":
            self._changed()
            return True
        if self.admit(pod):
            return False
        self.unconfirmed[pod.uid] = pod
        return True

    # The node admits a bound pod at its binding's place in the pod watch and frees an ended
    # pod at its terminal status's; the scheduler reads the same watch. So the replica is kept
    # as what the watch has shown (in its order) followed by the unconfirmed pods, in the order
    # they were admitted here. Whatever the watch shows next (an end, a binding by someone
    # else, or a binding other than the first unconfirmed one) came before every binding still
    # unconfirmed: the tail is taken off, the event applied, and the tail admitted again, each
    # pod getting what the node will give it. The tail is one pod at most (``SETTLING``): an
    # end only frees room, so that pod is admitted again; a longer tail, replayed after an end,
    # could leave a later pod without the room the filter saw (CI saw TopologyAffinityErrors).

    def _replay(self, change: Callable[[Node], None]) -> None:
        replica = self.replica
        assert replica is not None
        tail = [p for p in self.unconfirmed.values() if p.uid in self._on]
        for pod in reversed(tail):
            replica.release(pod.uid)
            self._on.discard(pod.uid)
        change(replica)
        for pod in tail:
            reason = self._admit(pod)
            if reason:
                log.info(
                    "%s: %s not admitted once replayed in the watch's order: %s",
                    self.name,
                    pod.key,
                    reason,
                )
        self._changed()

    def _in_watch_order(self, change: Callable[[Node], None]) -> None:
        # ``change`` came before the tail, if there is one.
        if any(uid in self._on for uid in self.unconfirmed):
            self._replay(change)
        else:
            assert self.replica is not None
            change(self.replica)
            self._changed()

    def confirm(self, uid: str) -> None:
        """The pod watch showed the binding of ``uid`` (assumed here): the node admits it after
        everything the watch showed before and before every binding still unconfirmed."""
        first = next(iter(self.unconfirmed), None)
        pod = self.unconfirmed.pop(uid, None)
        if pod is None or self.replica is None:
            return
        if uid == first:
            self._changed()  # the node takes other pods again
            return

        # Bound out of the order admitted here (the binds run concurrently).
        def admit_first(replica: Node) -> None:
            if uid in self._on:
                replica.release(uid)
                self._on.discard(uid)
            self._admit(pod)

        self._replay(admit_first)

    def bound_elsewhere(self, pod: PodInfo) -> None:
        """The pod watch showed ``pod`` bound here by someone else (another scheduler, a user,
        or this one before it started): the node admits it at that place, before every binding
        of this scheduler still unconfirmed."""
        if self.mode != "exact":
            self._changed()
            return
        if pod.uid in self._on:
            return

        def admit(replica: Node) -> None:
            reason = self._admit(pod)
            if reason:
                # The node's agent refuses it too (it admits in the same order).
                log.info("%s: %s bound here, not admitted: %s", self.name, pod.key, reason)

        self._in_watch_order(admit)

    def forget(self, uid: str) -> None:
        """The pod ``uid`` left the node (ended, or its bind failed): free it on the replica,
        at its place in the pod watch (before every binding still unconfirmed)."""
        self.unconfirmed.pop(uid, None)
        if self.replica is None or uid not in self._on:
            return

        def release(replica: Node) -> None:
            self._on.discard(uid)
            replica.release(uid)

        self._in_watch_order(release)
