"""``Node.admit``: behaviour of the wiring itself (the managers have their own tests)."""

from __future__ import annotations

import pytest

from numaplane.api.kubeletconfig import kubelet_config_from_dict
from numaplane.api.pod import Container, Pod
from numaplane.node.admission import Node
from numaplane.node.cpumanager.policy_static import StaticPolicy
from numaplane.node.errors import ConfigurationError
from numaplane.topology.discover import load_machine
from tests.node.node_fixtures import static_node

GIB = 1 << 30


def _free_memory(node: Node) -> int:
    state = node.memory_manager.state.get_machine_state()
    return sum(n.memory_map["memory"].free for n in state.values())


def test_pod_under_admission_keeps_its_init_container_memory() -> None:
    """The pod being admitted is active (upstream: known to the pod manager before admission),
    so stale-state cleanup during its app containers' allocation must not free what its init
    container just reserved: init 2Gi then app 1Gi reserve max(2Gi, 1Gi) = 2Gi in total."""
    node = static_node()
    before = _free_memory(node)
    guaranteed = {"cpu": "1", "memory": "2Gi"}
    pod = Pod.of(
        "p",
        init_containers=[Container.of("init", requests=guaranteed, limits=guaranteed)],
        containers=[
            Container.of(
                "app", requests={"cpu": "1", "memory": "1Gi"}, limits={"cpu": "1", "memory": "1Gi"}
            )
        ],
    )
    assert node.admit(pod).admitted
    assert before - _free_memory(node) == 2 * GIB
    node.release("p")
    assert _free_memory(node) == before


def test_rejected_pod_keeps_nothing() -> None:
    node = static_node()
    shared = node.cpu_manager.shared_pool()
    before = _free_memory(node)
    limits = {"cpu": "1", "memory": "1Gi"}
    too_big = {"cpu": "8", "memory": "1Gi"}  # 8 CPUs fit no single NUMA node
    pod = Pod.of(
        "p",
        containers=[
            Container.of("small", requests=limits, limits=limits),
            Container.of("big", requests=too_big, limits=too_big),
        ],
    )
    result = node.admit(pod)
    assert not result.admitted
    assert result.reason == "TopologyAffinityError"
    assert node.cpu_manager.shared_pool() == shared
    assert _free_memory(node) == before
    assert node.pods == ()


def test_kubelet_feature_gates_reach_the_cpu_manager() -> None:
    """The configuration's own gates decide which CPU options are available: the alpha option
    align-by-socket is refused until CPUManagerPolicyAlphaOptions is on."""
    base: dict[str, object] = {
        "kind": "KubeletConfiguration",
        "cpuManagerPolicy": "static",
        "reservedSystemCPUs": "0",
        "cpuManagerPolicyOptions": {"align-by-socket": "true"},
    }
    machine = load_machine("dual-socket-ht")
    with pytest.raises(ConfigurationError, match="Alpha-level Options not enabled"):
        Node(machine, kubelet_config_from_dict(base, "<test>"))
    gated = {**base, "featureGates": {"CPUManagerPolicyAlphaOptions": True}}
    policy = Node(machine, kubelet_config_from_dict(gated, "<test>")).cpu_manager.policy
    assert isinstance(policy, StaticPolicy)
    assert policy.options.align_by_socket


def test_active_containers_follow_admissions_and_releases() -> None:
    """The remembered active containers the managers' stale-state cleanups read equal a
    recomputation after every admission, rejection and release, and count the pod under
    admission while it is admitted."""
    node = static_node()
    seen: list[dict[str, frozenset[str]]] = []

    class Spy:
        """A hint provider that records what the managers would see as active."""

        def get_topology_hints(self, pod: Pod, container: Container) -> None:
            seen.append(dict(node._active_containers()))

        def get_pod_topology_hints(self, pod: Pod) -> None:
            seen.append(dict(node._active_containers()))

        def allocate(self, pod: Pod, container: Container) -> None:
            seen.append(dict(node._active_containers()))

    node.topology_manager.add_hint_provider(Spy(), "spy")

    def check() -> None:
        assert node._active_containers() == {p.uid: p.container_names for p in node.pods}

    one = {"cpu": "1", "memory": "1Gi"}
    huge = {"cpu": "64", "memory": "1Gi"}
    for uid, size in [("a", one), ("b", one), ("too-big", huge), ("c", one)]:
        seen.clear()
        pod = Pod.of(uid, containers=[Container.of("app", requests=size, limits=size)])
        node.admit(pod)
        assert seen
        for active in seen:
            assert active == {p.uid: p.container_names for p in (*node.pods, pod)}
        check()
    assert [p.uid for p in node.pods] == ["a", "b", "c"]
    node.release("b")
    check()
    assert set(node._active_containers()) == {"a", "c"}
