"""The in-memory CPU manager state."""

from __future__ import annotations

from numaplane.node.cpumanager.state import InMemoryState, State
from numaplane.topology.cpuset import CPUSet


def test_assignments_are_copies() -> None:
    source = {"pod": {"c": CPUSet([1])}}
    state: State = InMemoryState(source, CPUSet([0]))
    source["pod"]["c"] = CPUSet([9])
    copy = state.get_cpu_assignments()
    copy["pod"]["c"] = CPUSet([8])
    assert state.get_cpu_set("pod", "c") == CPUSet([1])


def test_delete_drops_empty_pods_and_ignores_unknown() -> None:
    state = InMemoryState()
    state.set_cpu_set("pod", "a", CPUSet([1]))
    state.set_cpu_set("pod", "b", CPUSet([2]))
    state.delete("pod", "a")
    assert state.get_cpu_assignments() == {"pod": {"b": CPUSet([2])}}
    state.delete("pod", "b")
    state.delete("other", "x")
    assert state.get_cpu_assignments() == {}


def test_cpu_set_or_default_and_clear() -> None:
    state = InMemoryState({"pod": {"a": CPUSet([1])}}, CPUSet([0, 2]))
    assert state.get_cpu_set_or_default("pod", "a") == CPUSet([1])
    assert state.get_cpu_set_or_default("pod", "z") == CPUSet([0, 2])
    state.set_cpu_assignments({"p2": {"x": CPUSet([3])}})
    assert state.get_cpu_set("pod", "a") is None
    state.clear_state()
    assert state.get_default_cpu_set() == CPUSet()
    assert state.get_cpu_assignments() == {}
