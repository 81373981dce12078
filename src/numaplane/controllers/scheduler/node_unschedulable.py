"""NodeUnschedulable: a cordoned node (``spec.unschedulable``) takes only pods that tolerate
the ``node.kubernetes.io/unschedulable:NoSchedule`` taint, as upstream's plugin."""

from __future__ import annotations

from typing import Final

from numaplane.controllers.scheduler.nodeinfo import NodeInfo
from numaplane.controllers.scheduler.podinfo import PodInfo
from numaplane.controllers.scheduler.taint_toleration import tolerates

__all__ = ["REASON", "UNSCHEDULABLE_TAINT", "filter_node"]

REASON: Final = "node(s) were unschedulable"
"""Upstream's ``ErrReasonUnschedulable``."""

UNSCHEDULABLE_TAINT: Final = {
    "key": "node.kubernetes.io/unschedulable",
    "effect": "NoSchedule",
}
"""The taint a cordoned node stands for (upstream ``v1.TaintNodeUnschedulable``)."""


def filter_node(pod: PodInfo, node: NodeInfo) -> tuple[str, ...]:
    """``(REASON,)`` when the node is unschedulable and the pod does not tolerate it."""
    if not node.unschedulable:
        return ()
    if any(tolerates(t, UNSCHEDULABLE_TAINT) for t in pod.tolerations):
        return ()
    return (REASON,)
