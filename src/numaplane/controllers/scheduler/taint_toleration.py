"""TaintToleration: a node's ``NoSchedule`` and ``NoExecute`` taints must all be tolerated.

Toleration matching is upstream's ``Toleration.ToleratesTaint``
(:func:`numaplane.api.tolerations.tolerates`, re-exported here for this package's callers). The
reason names the first untolerated taint, as
upstream's ``node(s) had untolerated taint {key: value}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from numaplane.api.tolerations import tolerates
from numaplane.controllers.scheduler.nodeinfo import NodeInfo
from numaplane.controllers.scheduler.podinfo import PodInfo

__all__ = ["filter_node", "tolerates", "untolerated_reason"]

_FILTERED_EFFECTS = ("NoSchedule", "NoExecute")


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
