"""Laws of ``CPUSet``: the kernel list syntax round-trips and the set algebra holds."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from numaplane.cpuset import MASK_LIMIT
from numaplane.topology.cpuset import CPUSet, CPUSetParseError, format_cpu_list

ids = st.frozensets(st.integers(0, 300), max_size=40)
sets = ids.map(CPUSet)


@given(ids)
def test_str_parse_round_trip(values: frozenset[int]) -> None:
    s = CPUSet(values)
    assert CPUSet.parse(str(s)) == s
    assert str(CPUSet.parse(str(s))) == str(s)


@given(ids)
def test_canonical_form_merges_runs(values: frozenset[int]) -> None:
    text = str(CPUSet(values))
    for item in filter(None, text.split(",")):
        lo, _, hi = item.partition("-")
        if hi:
            assert int(hi) > int(lo)
    assert sorted(values) == list(CPUSet(values))


@given(sets, sets, sets)
def test_algebra_laws(a: CPUSet, b: CPUSet, c: CPUSet) -> None:
    assert a | b == b | a
    assert a & b == b & a
    assert (a | b) | c == a | (b | c)
    assert a & (b | c) == (a & b) | (a & c)
    assert a - b == a - (a & b)
    assert (a - b).is_disjoint(b)
    assert (a & b).is_subset_of(a)
    assert a ^ b == (a | b) - (a & b)
    assert len(a | b) == len(a) + len(b) - len(a & b)
    assert (a <= b) == a.is_subset_of(b)


@given(sets)
def test_hash_and_equality_agree(a: CPUSet) -> None:
    assert CPUSet(list(a)) == a
    assert hash(CPUSet(list(a))) == hash(a)


@dataclass(frozen=True)
class Parse:
    name: str
    text: str
    expected: tuple[int, ...] | None  # None: a parse error


PARSES = (
    Parse("empty", "", ()),
    Parse("single", "5", (5,)),
    Parse("range and single", "0-2,8", (0, 1, 2, 8)),
    Parse("spaces and newline", " 0-1 , 3\n", (0, 1, 3)),
    Parse("unordered and overlapping", "8,0-3,2", (0, 1, 2, 3, 8)),
    Parse("reversed range", "3-1", None),
    Parse("empty item", "1,,2", None),
    Parse("negative", "-1", None),
    Parse("letters", "a-b", None),
)


@pytest.mark.parametrize("case", PARSES, ids=lambda c: c.name)
def test_parse(case: Parse) -> None:
    if case.expected is None:
        with pytest.raises(CPUSetParseError):
            CPUSet.parse(case.text)
    else:
        assert CPUSet.parse(case.text).sorted() == case.expected


def test_format_examples() -> None:
    assert format_cpu_list([0, 1, 2, 4, 6, 7]) == "0-2,4,6-7"
    assert str(CPUSet.range(0, 1)) == "0"


# -- representation: bitmask for ordinary ids, frozenset once an id is too large ---------------

mixed_ids = st.frozensets(
    st.one_of(st.integers(0, 300), st.integers(MASK_LIMIT - 2, MASK_LIMIT + 2)), max_size=20
)


@given(mixed_ids, mixed_ids)
def test_algebra_agrees_with_frozenset_in_both_representations(
    a: frozenset[int], b: frozenset[int]
) -> None:
    x, y = CPUSet(a), CPUSet(b)
    assert list(x | y) == sorted(a | b)
    assert list(x & y) == sorted(a & b)
    assert list(x - y) == sorted(a - b)
    assert list(x ^ y) == sorted(a ^ b)
    assert list(x.union(b)) == sorted(a | b)
    assert list(x.intersection(b)) == sorted(a & b)
    assert list(x.difference(b)) == sorted(a - b)
    assert (x <= y) == (a <= b)
    assert (x < y) == (a < b)
    assert (x >= y) == (a >= b)
    assert x.is_disjoint(y) == a.isdisjoint(b)
    assert len(x) == len(a)
    assert bool(x) == bool(a)
    assert (x == y) == (a == b)
    if a == b:
        assert hash(x) == hash(y)
    if a:
        assert x.min() == min(a)
    for cpu in (0, 1, 299, MASK_LIMIT, MASK_LIMIT + 1, -1):
        assert (cpu in x) == (cpu in a)


@given(ids)
def test_from_mask_round_trips(values: frozenset[int]) -> None:
    s = CPUSet(values)
    assert s.mask() == sum(1 << v for v in values)
    assert CPUSet.from_mask(sum(1 << v for v in values)) == s


def test_large_ids_stay_a_frozenset() -> None:
    big = CPUSet([3, 10**12])
    assert big.mask() is None
    assert list(big | CPUSet([1])) == [1, 3, 10**12]
    assert CPUSet.from_mask(1 << MASK_LIMIT).mask() is None
    with pytest.raises(CPUSetParseError):
        CPUSet.from_mask(-1)


def test_membership_of_non_ints_is_the_frozensets() -> None:
    s = CPUSet([1, 2])
    assert True in s
    assert 2.0 in s
    assert "1" not in s
