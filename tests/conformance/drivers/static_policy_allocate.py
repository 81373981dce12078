"""Driver for ``static_policy_allocate.json`` (``TestStaticPolicyAdd``).

Also holds the helpers the other CPU-manager drivers share: building pods the way upstream's
``makePod`` / ``makeMultiContainerPod`` do, policies, states and stored affinities.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from numaplane.api.pod import Container, Pod, QOSClass
from numaplane.node.cpumanager.policy_options import FeatureGates
from numaplane.node.cpumanager.policy_static import StaticPolicy
from numaplane.node.cpumanager.state import InMemoryState
from numaplane.node.cpumanager.topology import CPUTopology
from numaplane.node.errors import NodeError
from numaplane.node.topologymanager.bitmask import BitMask
from numaplane.node.topologymanager.hint import TopologyHint
from numaplane.topology.cpuset import CPUSet
from tests.conformance.drivers import VectorContext
from tests.conformance.drivers.cpu_assignment import topology_of


class FixedAffinity:
    """An affinity store that answers one hint for every container (upstream fake manager)."""

    def __init__(self, hint: TopologyHint | None) -> None:
        self._hint = hint if hint is not None else TopologyHint(None, False)

    def get_affinity(self, pod_uid: str, container_name: str) -> TopologyHint:
        """The fixed hint."""
        return self._hint


def hint_of(data: Mapping[str, Any] | None) -> TopologyHint | None:
    """A vector hint ``{"numa": [...] | None, "preferred": b}``."""
    if data is None:
        return None
    numa = data.get("numa")
    mask = None if numa is None else BitMask.from_bits(numa)
    return TopologyHint(mask, bool(data.get("preferred", False)))


def container_of(data: Mapping[str, Any], default_name: str) -> Container:
    """A container as ``makePod`` builds it: cpu as given, memory request == limit."""
    requests: dict[str, str] = {"memory": "1G"}
    limits: dict[str, str] = {"memory": "1G"}
    if data.get("cpu_request") not in (None, ""):
        requests["cpu"] = str(data["cpu_request"])
    if data.get("cpu_limit") not in (None, ""):
        limits["cpu"] = str(data["cpu_limit"])
    restart = data.get("restart_policy") or data.get("restartPolicy")
    return Container.of(data.get("name") or default_name, requests, limits, restart)


def pod_of(data: Mapping[str, Any]) -> Pod:
    """A pod from a vector (names default to ``initContainer-<i>`` / ``appContainer-<i>``)."""
    inits = [
        container_of(c, f"initContainer-{i}") for i, c in enumerate(data.get("init_containers", ()))
    ]
    apps = [container_of(c, f"appContainer-{i}") for i, c in enumerate(data.get("containers", ()))]
    qos_values = {c.get("qos") for c in data.get("containers", ()) if c.get("qos")}
    qos = QOSClass(qos_values.pop()) if len(qos_values) == 1 else None
    return Pod.of(data.get("uid") or "fakePod", apps, inits, qos=qos)


def cpuset_of(ids: Sequence[int] | None) -> CPUSet:
    """A CPU set from a sorted id list (``None`` = empty)."""
    return CPUSet(ids or ())


def state_of(inp: Mapping[str, Any]) -> InMemoryState:
    """The state a vector starts from."""
    assignments = {
        pod: {name: CPUSet(cpus) for name, cpus in containers.items()}
        for pod, containers in (
            inp.get("state_assignments") or inp.get("assignments") or {}
        ).items()
    }
    default = inp.get("state_default_cpuset", inp.get("default_cpuset"))
    return InMemoryState(assignments, cpuset_of(default))


def policy_of(
    topo: CPUTopology,
    inp: Mapping[str, Any],
    options: Mapping[str, str] | None = None,
    hint: TopologyHint | None = None,
) -> StaticPolicy:
    """``NewStaticPolicy`` as upstream tests call it (alpha and beta option gates on)."""
    reserved = inp.get("reserved_cpus")
    return StaticPolicy(
        topo,
        int(inp.get("num_reserved_cpus") or 0),
        cpuset_of(reserved),
        FixedAffinity(hint),
        options if options is not None else (inp.get("policy_options") or {}),
        gates=FeatureGates.all_enabled(),
        topology_manager_policy=inp.get("topology_manager_policy") or "none",
    )


def check_allocate(
    vector: Mapping[str, Any], ctx: VectorContext, options: Mapping[str, str] | None
) -> None:
    """One ``staticPolicy.Allocate`` run against the vector's expectation."""
    inp = vector["input"]
    expected = vector["expected"]
    topo = topology_of(inp["topology"], ctx)
    policy = policy_of(topo, inp, options, hint_of(inp.get("topology_manager_hint")))
    state = state_of(inp)
    pod = pod_of(inp["pod"])
    container = pod.containers[0]
    error: str | None = None
    try:
        policy.allocate(state, pod, container)
    except NodeError as err:
        error = str(err)
    assert error == expected.get("error"), f"options={options}: error {error!r}"
    cpus = state.get_cpu_set(pod.uid, container.name)
    if expected.get("cpu_allocated"):
        assert cpus is not None, f"options={options}: container not in assignments"
        want = cpuset_of(expected.get("container_cpuset"))
        assert cpus == want, f"options={options}: got {cpus}, want {want}"
        assert cpus.is_disjoint(state.get_default_cpu_set()), "allocated CPUs still shared"
    else:
        before = (inp.get("state_assignments") or {}).get(pod.uid, {})
        if container.name not in before:
            assert cpus is None, f"options={options}: unexpected assignment {cpus}"


def run(vector: Mapping[str, Any], ctx: VectorContext) -> None:
    """Check one vector; dispatch on ``input.op``."""
    op = vector["input"]["op"]
    if op != "staticPolicy.Allocate":
        raise AssertionError(f"unknown op {op!r}")
    runs = vector["input"].get("run_with_each_policy_options")
    if runs:
        for options in runs:
            check_allocate(vector, ctx, options)
    else:
        check_allocate(vector, ctx, None)
