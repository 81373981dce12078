"""Laws of ``CPUDetails.keep_only`` / ``without``: they answer every query exactly as details
rebuilt from the kept CPUs would (the restriction filters indexes instead of rebuilding)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from numaplane.node.cpumanager.cpu_details import CPUDetails
from tests.node.cpumanager.topos import DUAL_SOCKET_MULTI_NUMA_HT

DETAILS = DUAL_SOCKET_MULTI_NUMA_HT.details
CPU_IDS = sorted(DETAILS)


def _answers(details: CPUDetails) -> tuple[object, ...]:
    units = range(-1, 40)
    return (
        dict(details.items()),
        str(details.cpus()),
        details.numa_nodes(),
        details.sockets(),
        details.cores(),
        details.uncore_caches(),
        [str(details.cpus_in_numa_nodes(u)) for u in units],
        [str(details.cpus_in_sockets(u)) for u in units],
        [str(details.cpus_in_cores(u)) for u in units],
        [str(details.cpus_in_uncore_caches(u)) for u in units],
        [details.count_in_core(u) for u in units],
        [details.cores_in_numa_nodes(u) for u in units],
        [details.sockets_in_numa_nodes(u) for u in units],
        [details.cores_in_uncore_caches(u) for u in units],
    )


def _rebuilt(kept: set[int]) -> CPUDetails:
    return CPUDetails.of((c, DETAILS[c]) for c in CPU_IDS if c in kept)


@given(st.sets(st.integers(min_value=-2, max_value=40)))
def test_keep_only_equals_rebuilt_details(cpus: set[int]) -> None:
    assert _answers(DETAILS.keep_only(cpus)) == _answers(_rebuilt(cpus))


@given(st.sets(st.integers(min_value=0, max_value=31)), st.sets(st.integers(0, 40)))
def test_without_equals_rebuilt_details(keep: set[int], drop: set[int]) -> None:
    start = DETAILS.keep_only(keep)
    assert _answers(start.without(drop)) == _answers(_rebuilt(keep - drop))


def test_keep_only_everything_is_the_same_details() -> None:
    assert DETAILS.keep_only(CPU_IDS) is DETAILS
