"""Driver for ``memory_hints.json``: static memory policy hints and pod-level requests.

It also holds what both memory drivers share (building pods, machine states, the fake affinity
store, comparisons); ``memory_allocate`` imports it. Either driver accepts every memory op, so a
vector filed under the other area still runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from numaplane.api.pod import Container, Pod
from numaplane.node.errors import NodeError
from numaplane.node.memorymanager.policy_static import ReusableMemory, StaticPolicy
from numaplane.node.memorymanager.state import (
    Block,
    InMemoryState,
    machine_states_equal,
)
from numaplane.node.requests import MemoryRequestError, pod_memory_requests
from numaplane.node.topologymanager.bitmask import BitMask
from numaplane.node.topologymanager.hint import ProviderHints, TopologyHint
from numaplane.testing.upstream_fixtures import (
    assignments_from_json,
    machine_from_cadvisor,
    machine_state_from_json,
    machine_state_to_json,
)
from tests.conformance.drivers import VectorContext

Op = Callable[[Mapping[str, Any], Mapping[str, Any]], None]


@dataclass(frozen=True)
class FixedAffinity:
    """The fake Topology Manager store: the same hint for every container."""

    hint: TopologyHint

    def get_affinity(self, pod_uid: str, container_name: str) -> TopologyHint:
        """The fixed hint."""
        return self.hint


def hint_of(data: Mapping[str, Any] | None) -> TopologyHint:
    """A hint from ``{"numa": [...] | null, "preferred": b}`` (``None`` = the empty hint)."""
    if data is None:
        return TopologyHint(None, False)
    numa = data.get("numa")
    return TopologyHint(None if numa is None else BitMask(*numa), bool(data.get("preferred")))


def container_of(data: Mapping[str, Any]) -> Container:
    """A container from the vectors' shape."""
    return Container.of(
        data["name"],
        requests=data.get("requests") or {},
        limits=data.get("limits") or {},
        restart_policy=data.get("restartPolicy") or data.get("restart_policy"),
    )


def pod_of(data: Mapping[str, Any]) -> Pod:
    """A pod from the vectors' shape; ``qos`` (when given) is the recorded QoS class."""
    return Pod.of(
        data.get("uid", ""),
        containers=[container_of(c) for c in data.get("containers") or ()],
        init_containers=[container_of(c) for c in data.get("init_containers") or ()],
        qos=data.get("qos"),
    )


def system_reserved_of(data: Mapping[str, Any] | None) -> dict[int, dict[str, int]]:
    """``{"<node>": {resource: bytes}}`` with integer node ids."""
    return {
        int(node): {name: int(size) for name, size in (res or {}).items()}
        for node, res in (data or {}).items()
    }


def reusable_of(data: Mapping[str, Any] | None) -> ReusableMemory | None:
    """Upstream's ``initContainersReusableMemory`` (masks as ``BitMask.String()`` binary text or
    as comma-separated / listed node ids)."""
    if data is None:
        return None

    def mask(key: Any) -> BitMask:
        if isinstance(key, list):
            return BitMask(*key)
        text = str(key)
        if len(text) >= 2 and set(text) <= {"0", "1"}:
            return BitMask.from_int(int(text, 2))
        return BitMask(*(int(n) for n in text.split(",") if n))

    return {
        pod: {mask(k): {r: int(v) for r, v in sizes.items()} for k, sizes in masks.items()}
        for pod, masks in data.items()
    }


def new_policy_and_state(
    inp: Mapping[str, Any], hint: TopologyHint | None = None
) -> tuple[StaticPolicy, InMemoryState]:
    """Upstream ``initTests``: the policy on the vector's machine, the state as given."""
    policy = StaticPolicy(
        machine_from_cadvisor(inp.get("machine_info")),
        system_reserved_of(inp.get("system_reserved")),
        FixedAffinity(hint if hint is not None else TopologyHint(None, False)),
        init_containers_reusable_memory=reusable_of(inp.get("init_containers_reusable_memory")),
    )
    state = InMemoryState(
        machine_state_from_json(inp.get("machine_state")),
        assignments_from_json(inp.get("assignments")),
    )
    return policy, state


def hints_to_json(hints: ProviderHints) -> dict[str, Any] | None:
    """Provider hints in the vectors' shape."""
    if hints is None:
        return None
    return {
        resource: None if found is None else [h.to_json() for h in found]
        for resource, found in hints.items()
    }


def check_error(err: NodeError | None, expected: Mapping[str, Any]) -> None:
    """The error matches ``expected["error"]`` exactly (``None`` = no error)."""
    got = None if err is None else str(err)
    want = expected.get("error")
    assert got == want, f"error: got {got!r}, want {want!r}"


def _block_key(block: Block) -> tuple[tuple[int, ...], str, int]:
    return (tuple(sorted(block.numa_affinity)), block.type, block.size)


def check_state(state: InMemoryState, expected: Mapping[str, Any]) -> None:
    """Machine state (group-sum rule) and assignments (blocks as multisets) match."""
    if expected.get("machine_state") is not None:
        want = machine_state_from_json(expected["machine_state"])
        got = state.get_machine_state()
        assert machine_states_equal(got, want), (
            f"machine state: got {machine_state_to_json(got)}, want {machine_state_to_json(want)}"
        )
    if expected.get("assignments") is not None:
        want_a = assignments_from_json(expected["assignments"])
        got_a = state.get_memory_assignments()
        got_keys = {p: sorted(c) for p, c in got_a.items()}
        want_keys = {p: sorted(c) for p, c in want_a.items()}
        assert got_keys == want_keys, f"assignments: got {got_keys}, want {want_keys}"
        for pod, containers in want_a.items():
            for name, blocks in containers.items():
                got_blocks = sorted(map(_block_key, got_a[pod][name]))
                want_blocks = sorted(map(_block_key, blocks))
                assert got_blocks == want_blocks, (
                    f"blocks of {pod}/{name}: got {got_blocks}, want {want_blocks}"
                )


# -- ops ---------------------------------------------------------------------------------------


def _get_topology_hints(inp: Mapping[str, Any], expected: Mapping[str, Any]) -> None:
    policy, state = new_policy_and_state(inp)
    pod = pod_of(inp["pod"])
    name = inp.get("container") or pod.containers[0].name
    hints = policy.get_topology_hints(state, pod, pod.container(name))
    got = hints_to_json(hints)
    assert got == expected["hints"], f"hints: got {got}, want {expected['hints']}"


def _get_pod_topology_hints(inp: Mapping[str, Any], expected: Mapping[str, Any]) -> None:
    policy, state = new_policy_and_state(inp)
    got = hints_to_json(policy.get_pod_topology_hints(state, pod_of(inp["pod"])))
    assert got == expected["hints"], f"hints: got {got}, want {expected['hints']}"


def _get_pod_requested_resources(inp: Mapping[str, Any], expected: Mapping[str, Any]) -> None:
    err: NodeError | None = None
    got: dict[str, int] | None = None
    try:
        got = pod_memory_requests(pod_of(inp["pod"]))
    except MemoryRequestError as exc:
        err = exc
    if "error" in expected:
        check_error(err, expected)
    if err is None:
        assert got == expected["requested"], f"requested: got {got}, want {expected['requested']}"


OPS: dict[str, Op] = {
    "GetTopologyHints": _get_topology_hints,
    "GetPodTopologyHints": _get_pod_topology_hints,
    "getPodRequestedResources": _get_pod_requested_resources,
}


def dispatch(vector: Mapping[str, Any], ops: Mapping[str, Op]) -> None:
    """Run the vector's op from ``ops``."""
    inp = vector["input"]
    op = inp["op"]
    assert op in ops, f"unknown memory op {op!r}"
    ops[op](inp, vector["expected"])


def run(vector: Mapping[str, Any], ctx: VectorContext) -> None:
    """Check one vector; dispatch on ``input.op`` (allocation ops go to ``memory_allocate``)."""
    from tests.conformance.drivers import memory_allocate

    dispatch(vector, {**OPS, **memory_allocate.OPS})
