"""Laws of the static policy over random allocate/remove sequences.

Whatever the order of admissions and removals: no CPU is in two exclusive sets (except the
init-container CPUs a later container of the same pod reuses), no exclusive CPU is in the
shared pool, reserved CPUs are never exclusive, and the pools always cover the machine.
"""

from __future__ import annotations

import contextlib

from hypothesis import given, settings
from hypothesis import strategies as st

from numaplane.api.pod import Container, Pod
from numaplane.node.cpumanager.policy_options import FeatureGates
from numaplane.node.cpumanager.policy_static import StaticPolicy
from numaplane.node.cpumanager.state import InMemoryState
from numaplane.node.cpumanager.topology import CPUTopology
from numaplane.node.errors import NodeError
from numaplane.topology.cpuset import CPUSet
from tests.node.cpumanager.topos import DUAL_SOCKET_HT, DUAL_SOCKET_MULTI_NUMA_HT

TOPOLOGIES: dict[str, CPUTopology] = {
    "dual-socket-ht": DUAL_SOCKET_HT,
    "dual-socket-multi-numa-ht": DUAL_SOCKET_MULTI_NUMA_HT,
}

OPTION_SETS: list[dict[str, str]] = [
    {},
    {"full-pcpus-only": "true"},
    {"distribute-cpus-across-numa": "true"},
    {"distribute-cpus-across-cores": "true"},
    {"prefer-align-cpus-by-uncorecache": "true"},
    {"strict-cpu-reservation": "true"},
]

# ("add", pod index, cpus) or ("remove", pod index); requests may be fractional (shared pool).
steps = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.integers(0, 5), st.sampled_from(["1", "2", "3", "4", "500m"])),
        st.tuples(st.just("remove"), st.integers(0, 5), st.just("")),
    ),
    max_size=25,
)


def _check(
    policy: StaticPolicy, state: InMemoryState, topo: CPUTopology, *, share_in_pod: bool = False
) -> None:
    default = state.get_default_cpu_set()
    seen: dict[int, tuple[str, str]] = {}
    exclusive = CPUSet()
    for pod_uid, containers in state.get_cpu_assignments().items():
        for name, cpus in containers.items():
            for cpu in cpus:
                owner = seen.setdefault(cpu, (pod_uid, name))
                if owner != (pod_uid, name):
                    assert share_in_pod, f"CPU {cpu} exclusive twice"
                    assert owner[0] == pod_uid, f"CPU {cpu} exclusive to two pods"
            exclusive = exclusive | cpus
    assert exclusive.is_disjoint(default), "exclusive CPU in the shared pool"
    assert exclusive.is_disjoint(policy.reserved_cpus), "reserved CPU given exclusively"
    known = default | exclusive
    if policy.options.strict_cpu_reservation:
        known = known | policy.reserved_cpus
    assert known == topo.all_cpus, "pools do not cover the machine"


@settings(max_examples=60, deadline=None)
@given(
    topo_name=st.sampled_from(sorted(TOPOLOGIES)),
    options=st.sampled_from(OPTION_SETS),
    reserved=st.integers(0, 3),
    sequence=steps,
)
def test_pools_stay_consistent(
    topo_name: str, options: dict[str, str], reserved: int, sequence: list[tuple[str, int, str]]
) -> None:
    topo = TOPOLOGIES[topo_name]
    policy = StaticPolicy(topo, reserved, options=options, gates=FeatureGates.all_enabled())
    state = InMemoryState()
    policy.start(state)
    for action, index, cpus in sequence:
        uid = f"pod-{index}"
        if action == "add":
            res = {"cpu": cpus, "memory": "1G"}
            container = Container.of("main", res, res)
            # A rejection must leave the state consistent too, checked below.
            with contextlib.suppress(NodeError):
                policy.allocate(state, Pod.of(uid, [container]), container)
        else:
            policy.remove_container(state, uid, "main")
        _check(policy, state, topo)


@settings(max_examples=30, deadline=None)
@given(init_cpus=st.integers(1, 4), app_cpus=st.integers(1, 4), sidecar=st.booleans())
def test_init_reuse_stays_within_the_pod(init_cpus: int, app_cpus: int, sidecar: bool) -> None:
    policy = StaticPolicy(DUAL_SOCKET_HT, 1)
    state = InMemoryState()
    policy.start(state)
    res_i = {"cpu": str(init_cpus), "memory": "1G"}
    res_a = {"cpu": str(app_cpus), "memory": "1G"}
    init = Container.of("init", res_i, res_i, "Always" if sidecar else None)
    app = Container.of("app", res_a, res_a)
    pod = Pod.of("p", [app], [init])
    for container in pod.all_containers():
        policy.allocate(state, pod, container)
    init_set = state.get_cpu_set("p", "init") or CPUSet()
    app_set = state.get_cpu_set("p", "app") or CPUSet()
    if sidecar:
        assert init_set.is_disjoint(app_set), "sidecar CPUs handed to the app"
    _check(policy, state, DUAL_SOCKET_HT, share_in_pod=True)
    policy.remove_container(state, "p", "init")
    policy.remove_container(state, "p", "app")
    assert state.get_default_cpu_set() == DUAL_SOCKET_HT.all_cpus
