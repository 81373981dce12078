"""TaintToleration: a node's ``NoSchedule`` and ``NoExecute`` taints must all be tolerated.

Toleration matching is upstream's ``Toleration.ToleratesTaint``: an empty effect matches every
effect; an empty key with ``Exists`` matches every taint; ``Exists`` ignores the value; ``Equal``
(the default operator) needs the same value. The reason names the first untolerated taint, as
upstream's ``node(s) had untolerated taint {key: value}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from numaplane.controllers.scheduler.nodeinfo import NodeInfo
from numaplane.controllers.scheduler.podinfo import PodInfo

__all__ = ["filter_node", "tolerates", "untolerated_reason"]

_FILTERED_EFFECTS = ("NoSchedule", "NoExecute")


def tolerates(toleration: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    """``toleration`` tolerates ``taint`` (see the module doc)."""
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    if key and key != taint.get("key"):
        return False
    operator = toleration.get("operator") or "Equal"
    if operator == "Exists":
        return True
    if operator == "Equal":
        # An empty key must go with Exists (validation refuses it); it tolerates nothing here.
        return bool(key) and (toleration.get("value") or "") == (taint.get("value") or "")
    return False


def untolerated_reason(taint: Mapping[str, Any]) -> str:
    """Upstream's reason for an untolerated taint."""
    return f"node(s) had untolerated taint {{{taint.get('key', '')}: {taint.get('value', '')}}}"


def filter_node(pod: PodInfo, node: NodeInfo) -> tuple[str, ...]:
    """The first NoSchedule/NoExecute taint the pod does not tolerate, as a reason."""
    for taint in node.taints:
        if taint.get("effect") not in _FILTERED_EFFECTS:
            continue
        if not any(tolerates(t, taint) for t in pod.tolerations):
            return (untolerated_reason(taint),)
    return ()
