"""Driver for ``policy_basics.json``: ``Name()`` of every manager's policies, and the admit rule
(``canAdmitPodResult``) of the Topology Manager policies whose tests no other file covers.

Dispatches on ``input.manager``: Topology Manager vectors go through ``merge_policies`` (the
same policy construction as the merge vectors); CPU and memory manager policies are built by
the managers' own ``new_policy`` factories, the static memory policy as ``memory_hints`` builds
it (upstream ``initTests``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from numaplane.node.cpumanager.manager import new_policy as new_cpu_policy
from numaplane.node.memorymanager.manager import new_policy as new_memory_policy
from numaplane.node.topologymanager.hint import TopologyHint
from numaplane.testing.upstream_fixtures import machine_from_cadvisor
from tests.conformance.drivers import VectorContext, merge_policies
from tests.conformance.drivers.cpu_assignment import topology_of
from tests.conformance.drivers.memory_hints import FixedAffinity, new_policy_and_state


def _cpu_policy_name(inp: Mapping[str, Any], ctx: VectorContext) -> str:
    topology = topology_of(inp["topology"], ctx)
    reserved = inp.get("num_reserved_cpus", 0)
    return new_cpu_policy(inp["policy"], topology, num_reserved_cpus=reserved).name


def _memory_policy_name(inp: Mapping[str, Any]) -> str:
    if inp["policy"] == "Static":
        return new_policy_and_state(inp)[0].name
    machine = machine_from_cadvisor(inp.get("machine_info"))
    affinity = FixedAffinity(TopologyHint(None, False))
    return new_memory_policy(inp["policy"], machine, {}, (), affinity).name


def run(vector: Mapping[str, Any], ctx: VectorContext) -> None:
    """Check one vector; dispatch on ``input.manager``, then ``input.op``."""
    inp, expected = vector["input"], vector["expected"]
    manager, op = inp["manager"], inp["op"]
    if manager == "topologymanager":
        merge_policies.run(vector, ctx)
        return
    assert op == "Name", f"unknown {manager} op {op!r}"
    if manager == "cpumanager":
        got = _cpu_policy_name(inp, ctx)
    elif manager == "memorymanager":
        got = _memory_policy_name(inp)
    else:
        raise AssertionError(f"unknown manager {manager!r}")
    assert got == expected["name"], f"{vector['name']}: name {got!r}, want {expected['name']!r}"
