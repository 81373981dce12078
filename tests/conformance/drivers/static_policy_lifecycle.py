"""Driver for ``static_policy_lifecycle.json``: reserved CPUs, Start, reuse, removal, options."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from numaplane.node.cpumanager.policy_options import FeatureGates, StaticPolicyOptions
from numaplane.node.errors import NodeError
from numaplane.node.topologymanager.bitmask import BitMask
from numaplane.topology.cpuset import CPUSet
from tests.conformance.drivers import VectorContext
from tests.conformance.drivers.cpu_assignment import topology_of
from tests.conformance.drivers.static_policy_allocate import (
    check_allocate,
    cpuset_of,
    pod_of,
    policy_of,
    state_of,
)

# The Go field names of StaticPolicyOptions, which the vectors may list in ``options_set``.
_GO_FIELDS = {
    "full-pcpus-only": "FullPhysicalCPUsOnly",
    "distribute-cpus-across-numa": "DistributeCPUsAcrossNUMA",
    "align-by-socket": "AlignBySocket",
    "distribute-cpus-across-cores": "DistributeCPUsAcrossCores",
    "strict-cpu-reservation": "StrictCPUReservation",
    "prefer-align-cpus-by-uncorecache": "PreferAlignByUncoreCacheOption",
}


def _new_and_start(vector: Mapping[str, Any], ctx: VectorContext) -> None:
    inp, expected = vector["input"], vector["expected"]
    topo = topology_of(inp["topology"], ctx)
    new_error: str | None = None
    try:
        policy = policy_of(topo, inp)
    except NodeError as err:
        new_error = str(err)
    assert new_error == expected.get("new_error"), f"new error {new_error!r}"
    if new_error is not None:
        return
    state = state_of(inp)
    error: str | None = None
    try:
        policy.start(state)
    except NodeError as err:
        error = str(err)
    assert error == expected.get("error"), f"start error {error!r}"
    if expected.get("default_cpuset") is not None:
        want = cpuset_of(expected["default_cpuset"])
        got = state.get_default_cpu_set()
        assert got == want, f"default cpuset {got}, want {want}"


def _remove(vector: Mapping[str, Any], ctx: VectorContext) -> None:
    inp, expected = vector["input"], vector["expected"]
    policy = policy_of(topology_of(inp["topology"], ctx), inp)
    state = state_of(inp)
    policy.remove_container(state, inp["pod_uid"], inp["container_name"])
    got = state.get_default_cpu_set()
    assert got == cpuset_of(expected["default_cpuset"]), f"default cpuset {got}"
    if expected.get("container_removed_from_assignments"):
        assert state.get_cpu_set(inp["pod_uid"], inp["container_name"]) is None


def _allocate_cpus(vector: Mapping[str, Any], ctx: VectorContext) -> None:
    inp, expected = vector["input"], vector["expected"]
    policy = policy_of(topology_of(inp["topology"], ctx), inp)
    state = state_of(inp)
    policy.start(state)
    numa = inp.get("numa_affinity")
    mask = None if numa is None else BitMask.from_bits(numa)
    error: str | None = None
    cpus = CPUSet()
    try:
        cpus = policy.allocate_cpus(
            state, int(inp["num_requested"]), mask, cpuset_of(inp.get("reusable_cpus"))
        )
    except NodeError as err:
        error = str(err)
    assert error == expected.get("error"), f"error {error!r}"
    if error is None:
        assert cpus == cpuset_of(expected["cpus"]), f"got {cpus}"


def _allocate_all_then_remove(vector: Mapping[str, Any], ctx: VectorContext) -> None:
    inp, expected = vector["input"], vector["expected"]
    policy = policy_of(topology_of(inp["topology"], ctx), inp)
    state = state_of(inp)
    pod = pod_of(inp["pod"])
    errors: list[str | None] = []
    for container in pod.all_containers():
        try:
            policy.allocate(state, pod, container)
            errors.append(None)
        except NodeError as err:
            errors.append(str(err))
    if expected.get("errors") is not None:
        assert errors == list(expected["errors"]), f"errors {errors}"
    if expected.get("default_cpuset_after_alloc") is not None:
        got = state.get_default_cpu_set()
        want = cpuset_of(expected["default_cpuset_after_alloc"])
        assert got == want, f"default after alloc {got}, want {want}"
    for name, cpus in (expected.get("assignments_after_alloc") or {}).items():
        got_cpus = state.get_cpu_set(pod.uid, name)
        assert got_cpus == CPUSet(cpus), f"{name}: got {got_cpus}, want {cpus}"
    remove = inp.get("remove_container")
    if remove:
        policy.remove_container(state, pod.uid, remove)
        assert state.get_cpu_set(pod.uid, remove) is None, "container still assigned"
        if expected.get("default_cpuset_after_remove") is not None:
            got = state.get_default_cpu_set()
            want = cpuset_of(expected["default_cpuset_after_remove"])
            assert got == want, f"default after remove {got}, want {want}"


def _options(vector: Mapping[str, Any]) -> None:
    inp, expected = vector["input"], vector["expected"]
    try:
        opts = StaticPolicyOptions.parse(inp.get("policy_options"), FeatureGates.all_enabled())
    except NodeError:
        assert expected["error"], "unexpected error"
        return
    assert not expected["error"], "expected an error"
    want = expected.get("options_set")
    if want is not None:
        names = set(opts.enabled())
        fields = {_GO_FIELDS[n] for n in names}
        assert set(want) in (names, fields), f"options set {sorted(names)}, want {want}"


def run(vector: Mapping[str, Any], ctx: VectorContext) -> None:
    """Check one vector; dispatch on ``input.op``."""
    inp = vector["input"]
    op = inp["op"]
    if op == "Name":
        policy = policy_of(topology_of(inp["topology"], ctx), inp)
        assert policy.name == vector["expected"]["name"]
    elif op == "NewStaticPolicy+Start":
        _new_and_start(vector, ctx)
    elif op == "RemoveContainer":
        _remove(vector, ctx)
    elif op == "Start+allocateCPUs":
        _allocate_cpus(vector, ctx)
    elif op == "NewStaticPolicyOptions":
        _options(vector)
    elif op == "staticPolicy.Allocate":
        check_allocate(vector, ctx, None)
    elif op.startswith("Allocate all containers"):
        _allocate_all_then_remove(vector, ctx)
    else:
        raise AssertionError(f"unknown op {op!r}")
