"""``InMemoryState.allocated_devices`` is maintained on every write: it must always equal the
union of the recorded allocations, including devices held by two containers at once."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from numaplane.node.devicemanager.state import DeviceAllocation, InMemoryState

GPU = "example.com/gpu"
NIC = "example.com/nic"


def _scan(state: InMemoryState) -> dict[str, frozenset[str]]:
    found: dict[str, set[str]] = {}
    for entry in state.entries():
        found.setdefault(entry.resource_name, set()).update(entry.allocation.device_ids)
    return {resource: frozenset(ids) for resource, ids in found.items()}


_WRITE = st.one_of(
    st.tuples(
        st.just("set"),
        st.sampled_from(["p1", "p2"]),
        st.sampled_from(["init", "app"]),
        st.sampled_from([GPU, NIC]),
        st.sets(st.sampled_from(["d0", "d1", "d2"]), min_size=1),
    ),
    st.tuples(st.just("remove"), st.sampled_from(["p1", "p2"]), st.sampled_from(["init", "app"])),
    st.tuples(st.just("remove_pod"), st.sampled_from(["p1", "p2"])),
)


@given(st.lists(_WRITE, max_size=12))
def test_allocated_devices_matches_a_full_scan(writes: list[tuple[object, ...]]) -> None:
    state = InMemoryState()
    for write in writes:
        if write[0] == "set":
            _, uid, name, resource, ids = write
            allocation = DeviceAllocation.of({0: sorted(ids)})  # type: ignore[call-overload]
            state.set_allocation(uid, name, resource, allocation)  # type: ignore[arg-type]
        elif write[0] == "remove":
            state.remove_container(write[1], write[2])  # type: ignore[arg-type]
        else:
            state.remove_pods([write[1]])  # type: ignore[list-item]
        assert state.allocated_devices() == _scan(state)


@dataclass(frozen=True)
class Case:
    name: str
    release: tuple[tuple[str, str], ...]
    expected: frozenset[str]


CASES = [
    Case("both hold d0", (), frozenset({"d0", "d1"})),
    Case("init released: app still holds d0", (("p", "init"),), frozenset({"d0", "d1"})),
    Case("app released: init still holds d0", (("p", "app"),), frozenset({"d0"})),
    Case("both released", (("p", "init"), ("p", "app")), frozenset()),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_shared_device_stays_allocated_until_its_last_holder_goes(case: Case) -> None:
    state = InMemoryState()
    state.set_allocation("p", "init", GPU, DeviceAllocation.of({0: ["d0"]}))
    state.set_allocation("p", "app", GPU, DeviceAllocation.of({0: ["d0", "d1"]}))
    for uid, name in case.release:
        state.remove_container(uid, name)
    assert state.allocated_devices().get(GPU, frozenset()) == case.expected
