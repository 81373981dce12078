"""Driver for ``cpu_assignment.json``: the CPU accumulator and the topology-aware takes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from numaplane.node.cpumanager.cpu_assignment import (
    CPUAccumulator,
    CPUSortingStrategy,
    take_by_topology_numa_packed,
)
from numaplane.node.cpumanager.numa_distributed import take_by_topology_numa_distributed
from numaplane.node.cpumanager.topology import CPUTopology
from numaplane.node.errors import NodeError
from numaplane.testing.upstream_fixtures import cpu_topology_from_fixture
from numaplane.topology.cpuset import CPUSet
from tests.conformance.drivers import VectorContext


def topology_of(name_or_fixture: Any, ctx: VectorContext) -> CPUTopology:
    """A named fixture of ``topologies.json`` or an inline fixture."""
    if isinstance(name_or_fixture, str):
        return cpu_topology_from_fixture(ctx.topologies[name_or_fixture])
    return cpu_topology_from_fixture(name_or_fixture)


def _check_list(actual: list[int], expected: Mapping[str, Any], key: str = "result") -> None:
    want = list(expected[key])
    if expected.get("compare") == "sorted":
        assert sorted(actual) == sorted(want), f"{key}: got {actual}, want {want}"
    else:
        assert actual == want, f"{key}: got {actual}, want {want}"


def run(vector: Mapping[str, Any], ctx: VectorContext) -> None:
    """Check one vector; dispatch on ``input.op``."""
    inp = vector["input"]
    expected = vector["expected"]
    op = inp["op"]
    topo = topology_of(inp["topology"], ctx)
    available = CPUSet(inp.get("available", ()))
    strategy = CPUSortingStrategy(inp.get("cpu_sorting_strategy") or inp.get("sorting") or "packed")
    num_cpus = int(inp.get("num_cpus", 0))

    if op in ("freeSockets", "freeNUMANodes", "freeCores", "freeCPUs", "freeUncoreCaches"):
        acc = CPUAccumulator(topo, available, num_cpus, strategy)
        method = {
            "freeSockets": acc.free_sockets,
            "freeNUMANodes": acc.free_numa_nodes,
            "freeCores": acc.free_cores,
            "freeCPUs": acc.free_cpus,
            "freeUncoreCaches": acc.free_uncore_caches,
        }[op]
        _check_list(method(), expected)
        return
    if op == "freeSockets+freeNUMANodes":
        acc = CPUAccumulator(topo, available, num_cpus, strategy)
        _check_list(acc.free_sockets(), expected, "sockets")
        _check_list(acc.free_numa_nodes(), expected, "numa_nodes")
        return
    if op == "take-sequence":
        acc = CPUAccumulator(topo, available, num_cpus, strategy)
        taken = CPUSet()
        for cpus in inp["take"]:
            acc.take(CPUSet(cpus))
            taken = taken | CPUSet(cpus)
            assert acc.details.cpus().is_disjoint(taken), "taken CPUs still in details"
            assert taken <= acc.result, "taken CPUs missing from result"
        assert acc.is_satisfied() == expected["satisfied"], "satisfied"
        assert acc.is_failed() == expected["failed"], "failed"
        assert acc.num_cpus_needed == expected["num_cpus_needed"], "num_cpus_needed"
        return
    if op in ("takeByTopologyNUMAPacked", "takeByTopologyNUMADistributed"):
        error: str | None = None
        result = CPUSet()
        try:
            if op == "takeByTopologyNUMAPacked":
                result = take_by_topology_numa_packed(
                    topo,
                    available,
                    num_cpus,
                    strategy,
                    bool(inp.get("prefer_align_by_uncore_cache", False)),
                )
            else:
                result = take_by_topology_numa_distributed(
                    topo, available, num_cpus, int(inp["cpu_group_size"]), strategy
                )
        except NodeError as err:
            error = str(err)
        assert error == expected.get("error"), f"error: got {error!r}"
        assert result == CPUSet(expected.get("result") or ()), (
            f"result: got {result}, want {CPUSet(expected.get('result') or ())}"
        )
        return
    raise AssertionError(f"unknown op {op!r}")
