"""``NodeInfo``: one node as the scheduler's cache holds it — the Node's labels, taints and
allocatable, and the pods assigned to it (bound or assumed) with what they request, as
upstream's ``framework.NodeInfo``."""

from __future__ import annotations

from typing import Any

from numaplane.api.quantity import Quantity
from numaplane.controllers.scheduler.podinfo import PODS, PodInfo
from numaplane.errors import NumaplaneError
from numaplane.node.requests import scheduler_units

__all__ = ["NodeInfo", "allocatable_units"]


def allocatable_units(node: dict[str, Any]) -> dict[str, int]:
    """``status.allocatable`` in scheduler units (unparseable quantities left out)."""
    out: dict[str, int] = {}
    for name, text in ((node.get("status") or {}).get("allocatable") or {}).items():
        try:
            out[name] = scheduler_units(name, Quantity.parse(text))
        except NumaplaneError:
            continue
    return out


class NodeInfo:
    """A node and its pods (see the module doc). ``pods`` keeps assignment order: for the pods
    this scheduler bound, the bind order (the order the node's agent admits them in)."""

    def __init__(self, obj: dict[str, Any]) -> None:
        self.pods: dict[str, PodInfo] = {}
        self.obj: dict[str, Any] = {}
        self.name = ""
        self.labels: dict[str, str] = {}
        self.taints: list[dict[str, Any]] = []
        self.unschedulable = False
        self.allocatable: dict[str, int] = {}
        self._known = False
        #: The filters' and score's answers by ``PodInfo.filter_key`` (see ``framework``),
        #: dropped whenever the node or its pods change.
        self.memo: dict[bytes, tuple[tuple[str, ...], bool, int, int]] = {}
        self.requested: dict[str, int] = {}
        #: Scoring's non-zero cpu and memory requested by the pods.
        self.score_requested = [0, 0]
        self.set_node(obj)

    def set_node(self, obj: dict[str, Any]) -> bool:
        """Take a new version of the Node; whether anything the filters read changed."""
        meta = obj.get("metadata") or {}
        spec = obj.get("spec") or {}
        labels = dict(meta.get("labels") or {})
        taints = list(spec.get("taints") or [])
        unschedulable = bool(spec.get("unschedulable"))
        allocatable = allocatable_units(obj)
        changed = not self._known or (
            labels != self.labels
            or taints != self.taints
            or unschedulable != self.unschedulable
            or allocatable != self.allocatable
        )
        self._known = True
        self.memo.clear()
        self.obj = obj
        self.name = str(meta.get("name"))
        self.labels = labels
        self.taints = taints
        self.unschedulable = unschedulable
        self.allocatable = allocatable
        return changed

    def add_pod(self, pod: PodInfo) -> None:
        """Count ``pod`` as assigned here (no-op when it already is)."""
        if pod.uid in self.pods:
            return
        self.pods[pod.uid] = pod
        self.memo.clear()
        for name, amount in pod.requests.items():
            self.requested[name] = self.requested.get(name, 0) + amount
        self.score_requested[0] += pod.score_requests[0]
        self.score_requested[1] += pod.score_requests[1]

    def remove_pod(self, uid: str) -> PodInfo | None:
        """Stop counting the pod ``uid``; the pod, or ``None`` when it was not here."""
        pod = self.pods.pop(uid, None)
        if pod is None:
            return None
        self.memo.clear()
        for name, amount in pod.requests.items():
            self.requested[name] = self.requested.get(name, 0) - amount
        self.score_requested[0] -= pod.score_requests[0]
        self.score_requested[1] -= pod.score_requests[1]
        return pod

    @property
    def pod_count(self) -> int:
        """How many pods are assigned here."""
        return self.requested.get(PODS, 0)
