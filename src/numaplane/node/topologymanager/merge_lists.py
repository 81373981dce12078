"""A resource's hint list as the merge search reads it, and the cover test over rule families.

A listed hint set (or a rule naming nodes outside the machine, which upstream ANDs with the
machine's nodes) is indexed as ``ExplicitHints``: masks as integers, the preferred ones and the
merged masks apart. A rule (``StructuredHints``) is asked membership directly. ``cover`` decides
whether a candidate mask ``m`` is the AND of one member per family: the nodes outside ``m`` must
be shared out among the families so that each keeps a member without the nodes it took.
"""

from __future__ import annotations

from collections.abc import Sequence

from numaplane.cpuset import set_bits
from numaplane.node.topologymanager.hint import TopologyHint
from numaplane.node.topologymanager.hint_rules import Family
from numaplane.node.topologymanager.hint_sets import StructuredHints


class ExplicitHints:
    """One listed resource's hints, indexed for the search (masks as integers)."""

    def __init__(self, hints: Sequence[TopologyHint], default: int) -> None:
        self.nil_preferred = False
        self.preferred_masks: list[int] = []
        seen_preferred: set[int] = set()
        merged: set[int] = set()
        widths: list[int] = []
        for hint in hints:
            if hint.numa_affinity is None:
                self.nil_preferred = self.nil_preferred or hint.preferred
                merged.add(default)
                continue
            value = hint.numa_affinity.value
            widths.append(value.bit_count())
            merged.add(value & default)
            if hint.preferred and value not in seen_preferred:
                seen_preferred.add(value)
                self.preferred_masks.append(value)
        self._preferred = seen_preferred
        self.merged = frozenset(merged)
        self.min_count = min(widths, default=0)

    def accepts_preferred(self, mask: int) -> bool:
        """Whether a preferred permutation may use ``mask`` (or "any") from this list."""
        return self.nil_preferred or mask in self._preferred

    def has_superset(self, mask: int) -> bool:
        """Whether some hint's merged mask contains ``mask``."""
        return any(v & mask == mask for v in self.merged)

    def superset_options(self, mask: int) -> list[int]:
        """The smallest merged masks containing ``mask`` (larger ones never help)."""
        found = [v for v in self.merged if v & mask == mask]
        return [v for v in found if not any(w != v and w & v == w for w in found)]


HintList = ExplicitHints | StructuredHints
"""A resource's hints as the search reads them."""


def indexed(hints: StructuredHints, default: int) -> HintList:
    """The form the search reads a list in: listed sets and rules naming nodes outside the
    machine (``default``) as ``ExplicitHints``, other rules as they are."""
    if hints.listed_hints is not None:
        return ExplicitHints(hints.listed_hints, default)
    if hints.universe & ~default:
        # Upstream ANDs each mask with the machine's nodes: list the rule to reason about it.
        return ExplicitHints(hints.materialize(), default)
    return hints


def is_empty(hints: HintList) -> bool:
    """Whether the list allows no mask at all (the merge is then not preferred)."""
    if isinstance(hints, StructuredHints):
        return hints.is_empty()
    return not hints.merged


def minimal_masks(masks: set[int]) -> set[int]:
    """Masks no other mask of the set is a strict subset of."""
    return {v for v in masks if not any(w != v and w & v == w for w in masks)}


def cover(need: int, families: list[Family]) -> bool:
    """Whether the nodes of ``need`` can be shared out so each family keeps a member.

    Family ``j`` keeps ``universe_j`` minus the nodes it took; members are closed under adding
    nodes, so taking fewer never hurts, and one family taking all of ``need`` is tried first.
    """
    for family in families:
        if family.contains(family.universe & ~need):
            return True
    bits = set_bits(need)
    taken = [0] * len(families)
    failed: set[tuple[int, tuple[int, ...]]] = set()

    def walk(index: int) -> bool:
        if index == len(bits):
            return True
        key = (index, tuple(taken))
        if key in failed:
            return False
        bit = 1 << bits[index]
        tried: set[tuple[Family, int]] = set()
        for j, family in enumerate(families):
            # Identical families with identical shares are the same subproblem.
            signature = (family, taken[j])
            if signature in tried:
                continue
            tried.add(signature)
            trial = taken[j] | bit
            if family.contains(family.universe & ~trial):
                taken[j] = trial
                if walk(index + 1):
                    return True
                taken[j] = trial ^ bit
        failed.add(key)
        return False

    return walk(0)
