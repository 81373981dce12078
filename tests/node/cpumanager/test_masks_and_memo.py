"""The bitmask views and memos of the CPU manager answer exactly what the plain definitions do:
the memoised hint rule (with free counts capped at what is needed) lists the exhaustive hints,
call after call on one topology; the mask test for uncore alignment agrees with the per-CPU
one; a state's per-pod view shows the pod's assignments."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from numaplane.node.cpumanager.cpu_hint_sets import cpu_hint_set
from numaplane.node.cpumanager.state import InMemoryState
from numaplane.node.cpumanager.topology import CPUTopology
from numaplane.testing.upstream_hints import generate_cpu_topology_hints
from numaplane.topology.cpuset import CPUSet
from tests.node.cpumanager.topos import (
    DUAL_SOCKET_MULTI_NUMA_HT,
    SINGLE_SOCKET_UNCORE_HT,
    grid,
)

TOPOLOGIES = (DUAL_SOCKET_MULTI_NUMA_HT, SINGLE_SOCKET_UNCORE_HT, grid(2, 2, 2, 1))
# Ids past the topologies' CPUs too: the definition counts such a CPU for NUMA node 0.
cpu_ids = st.frozensets(st.integers(0, 40), max_size=40)


@settings(max_examples=300)
@given(
    st.sampled_from(TOPOLOGIES),
    cpu_ids,
    st.frozensets(st.integers(0, 40), max_size=4),
    st.integers(0, 34),
    st.booleans(),
)
def test_memoised_rule_lists_the_exhaustive_hints(
    topology: CPUTopology,
    available: frozenset[int],
    reusable: frozenset[int],
    request: int,
    by_socket: bool,
) -> None:
    avail, reuse = CPUSet(available), CPUSet(reusable)
    expected = generate_cpu_topology_hints(topology, avail, reuse, request, by_socket)
    # Twice: the second answer comes from the memo other examples filled as well.
    for _ in range(2):
        rule = cpu_hint_set(topology, avail, reuse, request, by_socket)
        assert list(rule) == expected
        widths = [h.numa_affinity.count() for h in expected if h.numa_affinity is not None]
        assert rule.min_count() == min(widths, default=0)


@given(st.sampled_from(TOPOLOGIES), st.frozensets(st.integers(0, 40), max_size=6))
def test_uncore_alignment_by_mask_agrees_with_per_cpu(
    topology: CPUTopology, cpus: frozenset[int]
) -> None:
    by_mask = topology.is_aligned_at_uncore_cache(CPUSet(cpus))
    assert by_mask == topology.is_aligned_at_uncore_cache(sorted(cpus))


def test_pod_view_follows_the_state() -> None:
    state = InMemoryState()
    assert dict(state.get_pod_cpu_sets("p")) == {}
    state.set_cpu_set("p", "a", CPUSet([1]))
    state.set_cpu_set("p", "b", CPUSet([2]))
    view = state.get_pod_cpu_sets("p")
    assert dict(view) == {"a": CPUSet([1]), "b": CPUSet([2])}
    state.delete("p", "a")
    assert dict(view) == {"b": CPUSet([2])}
