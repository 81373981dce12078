"""The FailedScheduling message: upstream's ``FitError.Error()`` plus the preemption
post-filter's message.

``0/<N> nodes are available: <histogram>. preemption: 0/<N> nodes are available: <histogram>.``
then ``.`` (upstream appends the post-filter message, which ends with a period, with its own
``" %v."`` separator: the real messages end with ``..``). A histogram is ``"<count> <reason>"``
per distinct reason, sorted as strings, joined with ``", "``.

numaplane has no preemption, so the post-filter part is what upstream's DefaultPreemption says
when no node has lower-priority victims: nodes rejected with an unresolvable status (node
affinity, taints, unschedulable) count as ``Preemption is not helpful for scheduling``; the
others (resources, NUMA alignment) as ``No preemption victims found for incoming pod``. A pod
with ``preemptionPolicy: Never`` gets ``preemption: not eligible due to preemptionPolicy=Never.``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Final

__all__ = [
    "NOT_HELPFUL",
    "NO_VICTIMS",
    "fit_error_message",
    "histogram",
]

NOT_HELPFUL: Final = "Preemption is not helpful for scheduling"
NO_VICTIMS: Final = "No preemption victims found for incoming pod"
NEVER: Final = "not eligible due to preemptionPolicy=Never."


def histogram(reasons: Iterable[str]) -> str:
    """``"<count> <reason>"`` per distinct reason, sorted, joined with ``", "``."""
    counts = Counter(reasons)
    return ", ".join(sorted(f"{n} {reason}" for reason, n in counts.items()))


def fit_error_message(
    num_nodes: int,
    node_reasons: Mapping[str, tuple[str, ...]],
    unresolvable: Mapping[str, bool],
    *,
    preemption_never: bool = False,
) -> str:
    """The message for a pod that fits on none of ``num_nodes`` nodes; ``node_reasons`` holds
    each rejecting node's reasons, ``unresolvable`` whether its rejection is one preemption
    cannot help."""
    head = f"0/{num_nodes} nodes are available"
    reasons = [r for rs in node_reasons.values() for r in rs]
    message = f"{head}: {histogram(reasons)}." if reasons else f"{head}."
    if preemption_never:
        post = f"preemption: {NEVER}"
    else:
        post_reasons = [NOT_HELPFUL if unresolvable.get(n) else NO_VICTIMS for n in node_reasons]
        post = f"preemption: {head}: {histogram(post_reasons)}."
    return f"{message} {post}."
