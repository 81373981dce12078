"""The merge of single-node hint lists, read off per node (the single-numa-node shortcut).

Under ``single-numa-node`` every list is filtered down to preferred single-node hints and
"any"; the merge of such lists needs no search (see ``fold_single_nodes``), and its preferred
single-node candidates are the ties ``prefer-most-allocated-numa-node`` breaks.
"""

from __future__ import annotations

from collections.abc import Sequence

from numaplane.cpuset import set_bits
from numaplane.node.topologymanager.bitmask import BitMask
from numaplane.node.topologymanager.hint import TopologyHint
from numaplane.node.topologymanager.hint_sets import StructuredHints, single_node_hint
from numaplane.node.topologymanager.merge_search import Merged


def fold_single_nodes(default: int, hints: Sequence[StructuredHints]) -> Merged | None:
    """The merge of lists of preferred "any" or single-node hints, read off per node; ``None``
    when some list has another shape (or the machine has no node).

    A permutation's AND is empty unless its non-nil masks all name the same node ``n``, so the
    merged candidates are ``({n}, preferred)`` for each ``n`` that every list allows (through
    ``{n}`` or "any") and some list names, and ``(all nodes, preferred)`` when every list holds
    "any". All are preferred, so ``Narrowest`` picks the lowest such ``n``, else all nodes; no
    candidate at all gives ``(all nodes, not preferred)``.
    """
    if default == 0:
        return None
    accepted = default
    named = 0
    all_any = True
    for hint_set in hints:
        shape = hint_set.single_node_shape()
        if shape is None:
            return None
        has_any, singles = shape
        singles &= default
        named |= singles
        if has_any:
            continue
        all_any = False
        accepted &= singles
    candidates = accepted & named
    if all_any and default & (default - 1) == 0:
        # One node in all: the all-"any" candidate is that single node too.
        candidates |= default
    ties = set_bits(candidates)
    if ties:
        return Merged(single_node_hint(ties[0]), ties)
    return Merged(TopologyHint(BitMask.from_int(default), all_any))
