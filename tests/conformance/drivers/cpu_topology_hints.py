"""Driver for ``cpu_topology_hints.json``: static-policy hints and guaranteed CPU counts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from numaplane.node.cpumanager.policy_options import FeatureGates, StaticPolicyOptions
from numaplane.node.cpumanager.policy_static import StaticPolicy
from numaplane.node.requests import pod_guaranteed_cpus
from numaplane.node.topologymanager.hint import TopologyHint
from numaplane.testing.upstream_fixtures import cpu_topology_from_fixture
from tests.conformance.drivers import VectorContext
from tests.conformance.drivers.cpu_assignment import topology_of
from tests.conformance.drivers.static_policy_allocate import hint_of, pod_of, state_of


def _key(hint: TopologyHint) -> tuple[bool, int, tuple[int, ...]]:
    bits = () if hint.numa_affinity is None else hint.numa_affinity.bits
    return (not hint.preferred, len(bits), bits)


def _normalise(hints: Sequence[TopologyHint] | None) -> list[TopologyHint]:
    # Upstream sorts by LessThan and ties may come in any order; compare as sorted multisets.
    return sorted(hints or (), key=_key)


def run(vector: Mapping[str, Any], ctx: VectorContext) -> None:
    """Check one vector; dispatch on ``input.op``."""
    inp = vector["input"]
    expected = vector["expected"]
    op = inp["op"]
    if op == "podGuaranteedCPUs":
        count = pod_guaranteed_cpus(pod_of(inp["pod"]))
        assert count == expected["cpus"], f"got {count}, want {expected['cpus']}"
        return
    if op not in ("GetTopologyHints", "GetPodTopologyHints"):
        raise AssertionError(f"unknown op {op!r}")
    if "machine" in inp:
        topo = cpu_topology_from_fixture(inp["machine"])
    else:
        topo = topology_of(inp["topology"], ctx)
    policy = StaticPolicy(topo, int(inp.get("num_reserved_cpus") or 0))
    # Upstream's hint tests build the policy struct directly: options parsed, never validated
    # against the machine.
    policy.options = StaticPolicyOptions.parse(
        inp.get("policy_options") or {}, FeatureGates.all_enabled()
    )
    state = state_of(inp)
    pod = pod_of(inp["pod"])
    if op == "GetTopologyHints":
        name = inp.get("container_name") or pod.containers[0].name
        provided = policy.get_topology_hints(state, pod, pod.container(name))
    else:
        provided = policy.get_pod_topology_hints(state, pod)
    got = None if provided is None else provided.get("cpu")
    want_raw = expected.get("hints")
    want = None if want_raw is None else [hint_of(h) for h in want_raw]
    if not got and not want:
        return  # upstream skips the comparison when both are empty
    assert want is not None, f"got {got}, want no hints"
    assert got is not None, f"got no hints, want {want}"
    assert _normalise(got) == _normalise([h for h in want if h is not None]), (
        f"got {[str(h) for h in _normalise(got)]}, want {[str(h) for h in want if h]}"
    )
