"""Laws of device allocation under random allocate/remove/health sequences.

- a device is never held by two pods, nor by two long-running containers (app containers and
  restartable init containers) of one pod; init containers of the same pod may share a device
  with each other and with one later container, as upstream's reuse allows;
- a device given to a container is healthy at that moment;
- a container that allocated successfully holds exactly what it requested.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import example, given, settings
from hypothesis import strategies as st

from numaplane.api.pod import Container, Pod
from numaplane.node.devicemanager.device import Device
from numaplane.node.devicemanager.errors import DeviceManagerError
from numaplane.node.devicemanager.manager import DeviceManager
from numaplane.node.devicemanager.source import InMemoryDeviceSource
from numaplane.node.topologymanager.bitmask import BitMask
from numaplane.node.topologymanager.hint import TopologyHint

NUMA = (0, 1, 2)


class Affinities:
    """Affinity store answering one fixed hint per container name."""

    def __init__(self, hints: dict[str, TopologyHint]) -> None:
        self.hints = hints

    def get_affinity(self, pod_uid: str, container_name: str) -> TopologyHint:
        return self.hints.get(container_name, TopologyHint(None, False))


@dataclass(frozen=True)
class Op:
    kind: str  # allocate | step | remove_container | remove_pod | health
    pod: int
    index: int = 0
    healthy: bool = True


devices_st = st.lists(
    st.one_of(st.none(), st.sampled_from(NUMA).map(lambda n: (n,))), min_size=1, max_size=8
)
container_st = st.tuples(st.integers(0, 3), st.booleans())  # (gpus, restartable)
pod_st = st.tuples(
    st.lists(container_st, max_size=2), st.lists(st.integers(0, 3), min_size=1, max_size=3)
)
op_st = st.builds(
    Op,
    kind=st.sampled_from(["allocate", "step", "step", "remove_container", "remove_pod", "health"]),
    pod=st.integers(0, 1),
    index=st.integers(0, 7),
    healthy=st.booleans(),
)
hint_st = st.one_of(st.none(), st.lists(st.sampled_from(NUMA), min_size=1, max_size=3, unique=True))


def make_pod(uid: str, spec: tuple[list[tuple[int, bool]], list[int]]) -> Pod:
    inits = [
        Container.of(f"init{i}", limits={"gpu": n}, restart_policy="Always" if side else None)
        for i, (n, side) in enumerate(spec[0])
    ]
    apps = [Container.of(f"app{i}", limits={"gpu": n}) for i, n in enumerate(spec[1])]
    return Pod.of(uid, apps, inits)


def check_holders(manager: DeviceManager, pods: dict[str, Pod]) -> None:
    holders: dict[str, list[tuple[str, str]]] = {}
    for entry in manager.state.entries():
        for device_id in entry.allocation.device_ids:
            holders.setdefault(device_id, []).append((entry.pod_uid, entry.container_name))
    for device_id, owners in holders.items():
        assert len({uid for uid, _ in owners}) == 1, f"{device_id} held by pods {owners}"
        pod = pods[owners[0][0]]
        regular_inits = {c.name for c in pod.init_containers if not c.is_restartable}
        long_running = [name for _, name in owners if name not in regular_inits]
        assert len(long_running) <= 1, f"{device_id} held by {owners}"


@settings(max_examples=300, deadline=None)
@given(
    devices=devices_st,
    specs=st.lists(pod_st, min_size=2, max_size=2),
    ops=st.lists(op_st, max_size=25),
    hint_nodes=st.dictionaries(
        st.sampled_from(["init0", "init1", "app0", "app1", "app2"]), hint_st
    ),
)
# Re-admitting a pod after removing one of its app containers once re-offered the init
# container's device for reuse although another app already held it (two apps on one device).
@example(
    devices=[None, None],
    specs=[([(1, False)], [1, 1]), ([], [0])],
    ops=[
        Op(kind="step", pod=0, index=0, healthy=False),
        Op(kind="allocate", pod=1, index=0, healthy=False),
        Op(kind="step", pod=0, index=0, healthy=False),
        Op(kind="allocate", pod=0, index=0, healthy=False),
        Op(kind="remove_container", pod=0, index=1, healthy=False),
        Op(kind="allocate", pod=0, index=0, healthy=False),
    ],
    hint_nodes={},
)
def test_allocation_laws(
    devices: list[tuple[int, ...] | None],
    specs: list[tuple[list[tuple[int, bool]], list[int]]],
    ops: list[Op],
    hint_nodes: dict[str, list[int] | None],
) -> None:
    hints = {
        name: TopologyHint(None if nodes is None else BitMask(*nodes), True)
        for name, nodes in hint_nodes.items()
    }
    source = InMemoryDeviceSource("gpu", [Device(f"d{i}", n) for i, n in enumerate(devices)])
    manager = DeviceManager(NUMA, Affinities(hints))
    manager.add_source(source)
    pods = {f"p{i}": make_pod(f"p{i}", spec) for i, spec in enumerate(specs)}

    progress = dict.fromkeys(pods, 0)

    def allocate(pod: Pod, container: Container) -> bool:
        before = manager.container_devices(pod.uid, container.name).get("gpu", frozenset())
        healthy = manager.allocatable("gpu")
        try:
            manager.allocate(pod, container)
        except DeviceManagerError:
            return False
        held = manager.container_devices(pod.uid, container.name).get("gpu", frozenset())
        assert held - before <= healthy, "an unhealthy device was handed out"
        want = container.limits_of("gpu").value()
        assert len(held) == (want if want else len(before))
        return True

    for op in ops:
        uid = f"p{op.pod}"
        pod = pods[uid]
        if op.kind == "allocate":
            for container in pod.all_containers():
                if not allocate(pod, container):
                    break
        elif op.kind == "step":
            # One container at a time, in admission order, so health can change in between.
            containers = pod.all_containers()
            allocate(pod, containers[progress[uid] % len(containers)])
            progress[uid] += 1
        elif op.kind == "remove_container":
            names = [c.name for c in pod.all_containers()]
            manager.remove_container(uid, names[op.index % len(names)])
        elif op.kind == "remove_pod":
            manager.remove_pod(uid)
            progress[uid] = 0
        else:
            # Mostly fail devices someone holds: that is where reuse could hand out a bad one.
            held = sorted(manager.allocated("gpu"))
            pool = held if held and op.index % 2 else [f"d{i}" for i in range(len(devices))]
            manager.set_device_health("gpu", pool[op.index % len(pool)], op.healthy)
        check_holders(manager, pods)
