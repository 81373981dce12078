"""Laws of ``BitMask`` and ``TopologyHint`` (upstream orderings), checked with hypothesis."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from numaplane.node.topologymanager.bitmask import BitMask, BitMaskError, bit_mask_subsets
from numaplane.node.topologymanager.hint import TopologyHint
from tests.node.topologymanager.strategies import any_masks, masks

bits = st.lists(st.integers(min_value=0, max_value=63), max_size=8)


@given(bits)
def test_bits_round_trip(values: list[int]) -> None:
    """A mask built from bits gives back the sorted distinct bits and their count."""
    mask = BitMask.from_bits(values)
    assert list(mask.bits) == sorted(set(values))
    assert mask.count() == len(set(values))
    assert mask.is_empty() == (not values)


@given(any_masks, any_masks)
def test_narrower_is_a_strict_total_order(a: BitMask, b: BitMask) -> None:
    """Exactly one of a<b, b<a, a==b under ``is_narrower_than`` (count, then value)."""
    outcomes = [a.is_narrower_than(b), b.is_narrower_than(a), a == b]
    assert outcomes.count(True) == 1
    if a.count() != b.count():
        assert a.is_narrower_than(b) == (a.count() < b.count())


@given(any_masks, any_masks)
def test_less_than_is_numeric(a: BitMask, b: BitMask) -> None:
    """``is_less_than``/``is_greater_than`` compare the raw integers, not bit lists."""
    assert a.is_less_than(b) == (a.value < b.value)
    assert a.is_greater_than(b) == (a.value > b.value)


@given(any_masks, any_masks)
def test_and_or_are_set_operations(a: BitMask, b: BitMask) -> None:
    """AND is intersection, OR is union of the bit sets."""
    assert set((a & b).bits) == set(a.bits) & set(b.bits)
    assert set((a | b).bits) == set(a.bits) | set(b.bits)
    assert (a & b).is_subset_of(a)


@given(masks, st.lists(st.integers(min_value=-3, max_value=70), max_size=4))
def test_add_is_all_or_nothing(mask: BitMask, extra: list[int]) -> None:
    """``add`` with any out-of-range bit fails and changes nothing (masks are immutable)."""
    before = mask.value
    if all(0 <= b < 64 for b in extra):
        assert set(mask.add(*extra).bits) == set(mask.bits) | set(extra)
    else:
        with pytest.raises(BitMaskError, match=r"^bit number must be in range 0-63$"):
            mask.add(*extra)
    assert mask.value == before


@given(st.lists(st.integers(min_value=0, max_value=63), unique=True, max_size=6))
def test_subsets_visit_each_subset_once_by_size(values: list[int]) -> None:
    """2^n - 1 distinct subsets, never decreasing in size."""
    subsets = list(bit_mask_subsets(values))
    assert len(subsets) == 2 ** len(values) - 1
    assert len(set(subsets)) == len(subsets)
    sizes = [m.count() for m in subsets]
    assert sizes == sorted(sizes)


@given(any_masks)
def test_string_is_binary_of_the_value(mask: BitMask) -> None:
    """``str`` is the binary value, zero-padded to at least two digits."""
    text = str(mask)
    assert int(text, 2) == mask.value
    assert len(text) >= 2


@given(
    st.builds(TopologyHint, st.one_of(st.none(), any_masks), st.booleans()),
    st.builds(TopologyHint, st.one_of(st.none(), any_masks), st.booleans()),
)
def test_hint_equality_and_order(a: TopologyHint, b: TopologyHint) -> None:
    """Equal hints are never less than each other; a preferred hint sorts first."""
    assert a.is_equal(b) == (a == b)
    if a == b:
        assert not a.less_than(b)
    if a.preferred != b.preferred:
        assert a.less_than(b) == a.preferred
        assert b.less_than(a) == b.preferred
