"""The API server as a pod source: the pods bound to one node, as the kubelet's API source.

``ApiPodSource.run`` lists and watches the pods with ``fieldSelector=spec.nodeName=<node>``
(relisting on 410 Gone, reconnecting with back-off) into a store that the agent's thread reads
with ``scan``. The store keeps the order in which pods were first seen: the watch delivers pods
in the order they were bound, and the agent admits them in that order (the scheduler predicts a
node's NUMA placements by replaying its admissions in bind order). A relist orders pods it had
not seen by resourceVersion (the binding is a pod's last write before the agent acts on it).

``scan`` gives the pods to run (pinned: an API pod is never restarted for a change of its
object), leaves out terminal pods (``Succeeded``/``Failed``: never run again) and names the
pods being deleted with their deletion's grace period (``deletionGracePeriodSeconds``). Before
a pod is converted (``pod_from_dict``), each ``env[].valueFrom`` is resolved as the kubelet
does (``resolve_env``); its status is left out, so that the pod is the same whatever status it
carries.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
import math
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from numaplane.agent.podsource import ManifestFault, ManifestPod, ScanResult
from numaplane.api.manifest import pod_from_dict
from numaplane.api.quantity import Quantity
from numaplane.errors import InputError, NumaplaneError
from numaplane.kube.client import KubeClient
from numaplane.kube.errors import ApiError, KubeError

_log = logging.getLogger(__name__)

#: Phases after which a pod never runs again.
TERMINAL_PHASES = frozenset({"Succeeded", "Failed"})


class ApiPodSource:
    """The pods bound to ``node_name`` (see the module docstring). Thread-safe: ``run`` feeds it
    from an event loop, ``scan`` reads it from the agent's thread."""

    def __init__(
        self,
        node_name: str,
        *,
        host_ip: str = "127.0.0.1",
        on_change: Callable[[], None] = lambda: None,
    ) -> None:
        self.node_name = node_name
        self.host_ip = host_ip
        #: Called (from the loop's thread) after each change of the store.
        self.on_change = on_change
        self._lock = threading.Lock()
        self._objects: dict[str, dict[str, Any]] = {}  # by uid, in the order first seen
        self._converted: dict[str, ManifestPod | ManifestFault] = {}
        self._synced = False

    @property
    def field_selector(self) -> str:
        """The selector of the pods bound to the node."""
        return f"spec.nodeName={self.node_name}"

    # -- the store ------------------------------------------------------------------------

    def replace(self, items: list[dict[str, Any]]) -> None:
        """A (re)list: the store becomes ``items``; known pods keep their place."""
        fresh = {_uid(o): o for o in sorted(items, key=_rv_key) if _uid(o)}
        with self._lock:
            objects = {uid: fresh[uid] for uid in self._objects if uid in fresh}
            objects.update((uid, o) for uid, o in fresh.items() if uid not in objects)
            self._objects = objects
            self._converted = {u: c for u, c in self._converted.items() if u in objects}
            self._synced = True
        self.on_change()

    def apply(self, event_type: str, obj: dict[str, Any]) -> None:
        """One watch event."""
        uid = _uid(obj)
        if not uid:
            return
        with self._lock:
            if event_type == "DELETED":
                self._objects.pop(uid, None)
                self._converted.pop(uid, None)
            elif event_type in ("ADDED", "MODIFIED"):
                self._objects[uid] = obj
            else:
                return
        self.on_change()

    def objects(self) -> list[dict[str, Any]]:
        """The pods' objects as last seen, in the order first seen."""
        with self._lock:
            return list(self._objects.values())

    def get(self, uid: str) -> dict[str, Any] | None:
        """The object of pod ``uid`` as last seen."""
        with self._lock:
            return self._objects.get(uid)

    @property
    def synced(self) -> bool:
        """Whether the first list arrived."""
        return self._synced

    def scan(self) -> ScanResult:
        """The pods to run, in the order first seen; the pods being deleted."""
        with self._lock:
            if not self._synced:
                return ScanResult(
                    error=f"waiting for the API server's pods of node {self.node_name}"
                )
            objects = list(self._objects.items())
        pods: dict[str, ManifestPod] = {}
        faults: list[ManifestFault] = []
        stopping: dict[str, int] = {}
        for uid, obj in objects:
            meta = obj.get("metadata") or {}
            if (obj.get("status") or {}).get("phase") in TERMINAL_PHASES:
                continue
            if meta.get("deletionTimestamp"):
                stopping[uid] = deletion_grace(obj)
                continue
            converted = self._converted.get(uid)
            if converted is None:
                converted = self._convert(obj)
                with self._lock:
                    if uid in self._objects:
                        self._converted[uid] = converted
            if isinstance(converted, ManifestFault):
                faults.append(converted)
            else:
                pods[uid] = converted
        return ScanResult(pods, tuple(faults), stopping=stopping)

    def _convert(self, obj: dict[str, Any]) -> ManifestPod | ManifestFault:
        meta = obj.get("metadata") or {}
        where = f"pod {meta.get('namespace', 'default')}/{meta.get('name', '?')}"
        try:
            doc = resolve_env(obj, self.host_ip)
            pod = pod_from_dict(doc, where)
        except InputError as err:
            _log.error("%s", err)
            return ManifestFault(Path(where), "InvalidPod", str(err))
        return ManifestPod(pod, None, pinned=True)

    # -- list and watch -------------------------------------------------------------------

    async def run(self, client: KubeClient) -> None:
        """List and watch the node's pods until cancelled (errors: back-off, then relist)."""
        delay = 0.1
        while True:
            try:
                items, rv = await client.list_all(
                    "v1", "pods", None, field_selector=self.field_selector
                )
                self.replace(items)
                delay = 0.1
                stream = client.watch(
                    "v1", "pods", None, resource_version=rv, field_selector=self.field_selector
                )
                # Closed here, not by the garbage collector: a cancelled watch must release
                # its connection before the client closes.
                async with contextlib.aclosing(stream):
                    async for event in stream:
                        self.apply(event.type, event.object)
            except ApiError as err:
                if err.is_gone:
                    continue  # compacted: relist at once, as a reflector does
                _log.warning("watching the pods of node %s: %s", self.node_name, err)
            except KubeError as err:
                _log.warning("watching the pods of node %s: %s", self.node_name, err)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 5.0)


def deletion_grace(obj: Mapping[str, Any]) -> int:
    """The grace period a deleted pod gets: the deletion's, else the pod's spec."""
    meta = obj.get("metadata") or {}
    grace = meta.get("deletionGracePeriodSeconds")
    if grace is None:
        grace = (obj.get("spec") or {}).get("terminationGracePeriodSeconds")
    return int(grace) if isinstance(grace, int) else 30


def _uid(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("uid") or "")


def _rv_key(obj: Mapping[str, Any]) -> tuple[int, str]:
    rv = str((obj.get("metadata") or {}).get("resourceVersion") or "")
    return (int(rv), "") if rv.isdigit() else (0, rv)


# -- env[].valueFrom ----------------------------------------------------------------------------


def resolve_env(obj: Mapping[str, Any], host_ip: str) -> dict[str, Any]:
    """A copy of the pod without its status (but its QoS class) and with every
    ``env[].valueFrom`` the agent can resolve turned into a ``value``, as the kubelet resolves
    them when it starts a container: ``fieldRef`` (the downward API's pod fields) and
    ``resourceFieldRef`` (the container's own requests and limits). ``configMapKeyRef`` and
    ``secretKeyRef`` are not read: such variables are left out (logged)."""
    doc = copy.deepcopy(dict(obj))
    status = doc.pop("status", None) or {}
    if status.get("qosClass"):
        doc["status"] = {"qosClass": status["qosClass"]}
    spec = doc.get("spec") or {}
    for group in ("initContainers", "containers"):
        for container in spec.get(group) or []:
            env = container.get("env")
            if isinstance(env, list):
                container["env"] = _resolved(doc, container, env, host_ip)
    return doc


def _resolved(
    doc: Mapping[str, Any], container: Mapping[str, Any], env: list[Any], host_ip: str
) -> list[Any]:
    out: list[Any] = []
    for entry in env:
        source = entry.get("valueFrom") if isinstance(entry, dict) else None
        if not source:
            out.append(entry)
            continue
        value = _value_from(doc, container, source, host_ip)
        if value is None:
            _log.warning(
                "pod %s: env %s: valueFrom %s is not supported; left out",
                (doc.get("metadata") or {}).get("name"),
                entry.get("name"),
                sorted(source),
            )
            continue
        out.append({"name": entry.get("name"), "value": value})
    return out


def _value_from(
    doc: Mapping[str, Any], container: Mapping[str, Any], source: Mapping[str, Any], host_ip: str
) -> str | None:
    field_ref = source.get("fieldRef")
    if isinstance(field_ref, dict):
        return field_value(doc, str(field_ref.get("fieldPath") or ""), host_ip)
    resource_ref = source.get("resourceFieldRef")
    if isinstance(resource_ref, dict):
        return resource_value(container, resource_ref)
    return None


def field_value(doc: Mapping[str, Any], path: str, host_ip: str) -> str | None:
    """The downward API's value of ``path`` for pod ``doc`` (``None``: not a supported path).
    The pod's IP is the host's: containers share the host's network."""
    meta = doc.get("metadata") or {}
    spec = doc.get("spec") or {}
    simple: dict[str, Any] = {
        "metadata.name": meta.get("name"),
        "metadata.namespace": meta.get("namespace") or "default",
        "metadata.uid": meta.get("uid"),
        "spec.nodeName": spec.get("nodeName"),
        "spec.serviceAccountName": spec.get("serviceAccountName"),
        "status.hostIP": host_ip,
        "status.hostIPs": host_ip,
        "status.podIP": host_ip,
        "status.podIPs": host_ip,
    }
    if path in simple:
        return "" if simple[path] is None else str(simple[path])
    for prefix, values in (
        ("metadata.labels", meta.get("labels") or {}),
        ("metadata.annotations", meta.get("annotations") or {}),
    ):
        if path == prefix:
            # The whole map, as the kubelet formats it: one key="value" per line, sorted.
            return "\n".join(f'{k}="{values[k]}"' for k in sorted(values))
        if path.startswith(f"{prefix}[") and path.endswith("]"):
            key = path[len(prefix) + 1 : -1].strip("'\"")
            return str(values.get(key, ""))
    return None


def resource_value(container: Mapping[str, Any], ref: Mapping[str, Any]) -> str | None:
    """``resourceFieldRef`` of the container itself (``requests.cpu``, ``limits.memory``,
    ...), divided by ``divisor`` and rounded up as the kubelet does; ``None`` when the
    container does not set the resource (the kubelet then reports the node's allocatable,
    which this source does not know)."""
    resource = str(ref.get("resource") or "")
    kind, _, name = resource.partition(".")
    if kind not in ("requests", "limits") or not name:
        return None
    values = (container.get("resources") or {}).get(kind) or {}
    if kind == "requests" and name not in values:
        values = (container.get("resources") or {}).get("limits") or {}
    if name not in values:
        return None
    try:
        quantity = Quantity.parse(str(values[name]))
        divisor = Quantity.parse(str(ref.get("divisor") or "1"))
    except (NumaplaneError, ValueError):
        return None
    if divisor.is_zero():
        return None
    if name == "cpu":
        ratio = quantity.milli_value() / divisor.milli_value()
    else:
        ratio = quantity.value() / divisor.value() if divisor.value() else 0
    return str(math.ceil(ratio))
