"""``Node.admit``: behaviour of the wiring itself (the managers have their own tests)."""

from __future__ import annotations

from numaplane.api.pod import Container, Pod
from numaplane.node.admission import Node
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
