"""One scheduling decision: the filter plugins, then the scores, over every node in the cache.

Filter order is upstream's default profile (NodeUnschedulable, TaintToleration, NodeAffinity,
NodeResourcesFit), then the NUMA filter (the most expensive, so only on nodes that passed the
others); a node is rejected by the first plugin that fails, as ``RunFilterPlugins``. The first
three answer ``UnschedulableAndUnresolvable`` (preemption is not helpful there), the others
``Unschedulable``. The score of a feasible node is NodeResourcesFit's plus
``NUMA_SCORE_WEIGHT`` times the NUMA score; the highest wins, ties broken at random as
upstream's ``selectHost``.

The NUMA filter's exact answer (a real admission on the node's replica, the one expensive step)
is asked last and lazily: the nodes that passed everything else, including the NUMA filter's
cheap necessary condition, are tried best score first, and the first replica that admits the
pod is the decision. So a decision usually costs one admission, which is also the assumption
(the pod stays admitted on that replica); a pod that fits nowhere costs one per remaining
node, and the rejections are cached until those nodes change.
"""

from __future__ import annotations

import random
from typing import Final

from numaplane.controllers.scheduler import (
    node_affinity,
    node_unschedulable,
    noderesources_fit,
    taint_toleration,
)
from numaplane.controllers.scheduler.cache import Cache
from numaplane.controllers.scheduler.fiterror import fit_error_message
from numaplane.controllers.scheduler.nodeinfo import NodeInfo
from numaplane.controllers.scheduler.numa import NUMA_SCORE_WEIGHT, NumaNode
from numaplane.controllers.scheduler.options import SchedulerOptions
from numaplane.controllers.scheduler.podinfo import PodInfo

__all__ = ["NO_NODES", "Decision", "decide"]

NO_NODES: Final = "no nodes available to schedule pods"
"""Upstream's ``ErrNoNodesAvailable``."""

#: The first filters, each with whether its rejection is unresolvable by preemption.
FILTERS: Final = (
    (node_unschedulable.filter_node, True),
    (taint_toleration.filter_node, True),
    (node_affinity.filter_node, True),
    (noderesources_fit.filter_node, False),
)


class Decision:
    """One scheduling attempt's outcome: the chosen node, or the FailedScheduling message."""

    __slots__ = ("message", "node")

    def __init__(self, node: str | None, message: str = "") -> None:
        self.node = node
        self.message = message


def _evaluate(
    pod: PodInfo, node: NodeInfo, numa: NumaNode | None, strategy: str
) -> tuple[tuple[str, ...], bool, int]:
    """The cheap part for one node: (reasons, unresolvable, score)."""
    for filter_node, hard in FILTERS:
        why = filter_node(pod, node)
        if why:
            return why, hard, 0
    score = noderesources_fit.score(strategy, pod, node)
    if numa is not None:
        prediction = numa.quick(pod)
        if prediction.reason:
            return (prediction.reason,), False, 0
        score += NUMA_SCORE_WEIGHT * prediction.score
    return (), False, score


def decide(cache: Cache, options: SchedulerOptions, pod: PodInfo, rng: random.Random) -> Decision:
    """Filter and score every node for ``pod``; in exact NUMA mode the nodes are then asked in
    score order and the chosen one's replica holds the pod already (``Cache.assume`` it)."""
    nodes = cache.nodes
    if not nodes:
        return Decision(None, NO_NODES)
    numa_on = options.numa_filter
    strategy = options.scoring_strategy
    reasons: dict[str, tuple[str, ...]] = {}
    unresolvable: dict[str, bool] = {}
    candidates: list[tuple[int, float, NodeInfo]] = []
    for node in nodes.values():
        numa = cache.numa.get(node.name) if numa_on else None
        version = numa.version if numa is not None else 0
        memo = node.memo.get(pod.filter_key)
        if memo is None or memo[3] != version:
            memo = (*_evaluate(pod, node, numa, strategy), version)
            node.memo[pod.filter_key] = memo
        why, hard, score, _ = memo
        if why:
            reasons[node.name] = why
            unresolvable[node.name] = hard
            continue
        # The random second key breaks ties between equal scores (upstream's selectHost).
        candidates.append((score, rng.random(), node))
    candidates.sort(key=lambda c: (-c[0], c[1]))
    for _, _, node in candidates:
        numa = cache.numa.get(node.name) if numa_on else None
        if numa is not None and numa.mode == "exact":
            # The node engine's own answer, best node first: the first that admits wins (and
            # holds the pod on its replica from now on).
            reason = numa.admit(pod)
            if reason:
                reasons[node.name] = (reason,)
                unresolvable[node.name] = False
                # Remembered until the node changes (a rejection leaves the replica as it was).
                node.memo[pod.filter_key] = ((reason,), False, 0, numa.version)
                continue
        return Decision(node.name)
    never = (pod.obj.get("spec") or {}).get("preemptionPolicy") == "Never"
    message = fit_error_message(len(nodes), reasons, unresolvable, preemption_never=never)
    return Decision(None, message)
