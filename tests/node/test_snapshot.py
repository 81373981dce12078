"""``snapshot_of``/``restore_node``: a restored node decides exactly as the original.

Each case admits a seeded stream of pods (with releases interleaved) on a node, snapshots it at
a seeded point, carries the snapshot through JSON text, restores it (with every pod known, none
known, or some), then admits and releases the same further pods on both nodes: every
``Admission.to_json()`` (explanation included) must be the same, and so must the final
snapshots.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from numaplane.api.kubeletconfig import KubeletConfiguration, kubelet_config_from_dict
from numaplane.api.pod import Container, Pod
from numaplane.node.admission import Node, NodeStates
from numaplane.node.devicemanager.device import Device
from numaplane.node.devicemanager.source import InMemoryDeviceSource
from numaplane.node.snapshot import (
    NodeSnapshot,
    SnapshotError,
    restore_node,
    snapshot_of,
    state_documents,
    states_from_documents,
)
from numaplane.node.statedir import CPU_FILE, DEVICE_FILE, MEMORY_FILE, StateFiles, encode_states
from numaplane.testing.kubeletconfigs import static_single_numa_config
from numaplane.topology.model import Machine
from numaplane.topology.presets import PRESETS
from numaplane.topology.synthetic import parse_synthetic

GPU = "example.com/gpu"
NIC = "example.com/nic"

MACHINES = {
    "dual-socket-multi-numa": lambda: PRESETS["dual-socket-multi-numa"].build(),
    "single-socket-ht": lambda: PRESETS["single-socket-ht"].build(),
    "hugepages": lambda: parse_synthetic(
        "sockets=2,numa-per-socket=2,cores-per-numa=4,threads-per-core=2,memory-per-numa=8Gi,"
        "hugepages-2Mi-per-numa=512,hugepages-1Gi-per-numa=2"
    ),
}


def _config(machine: Machine, **overrides: Any) -> KubeletConfiguration:
    return static_single_numa_config(machine, **overrides)


def _devices(machine: Machine) -> list[InMemoryDeviceSource]:
    ids = list(machine.numa_ids)
    gpus = [Device(f"gpu{i}", (n,)) for i, n in enumerate(ids)]
    gpus.append(Device("gpu-sick", (ids[0],), healthy=False))
    nics = [Device(f"nic{i}", tuple(ids[i : i + 2])) for i in range(0, len(ids), 2)]
    nics.append(Device("nic-any", None))
    return [InMemoryDeviceSource(GPU, gpus), InMemoryDeviceSource(NIC, nics)]


def _container(rng: random.Random, name: str, machine: Machine, devices: bool) -> Container:
    per_node = max(len(n.cpus) for n in machine.numa_nodes)
    kind = rng.choice(["guaranteed", "guaranteed", "fractional", "burstable", "besteffort"])
    if kind == "besteffort":
        return Container.of(name)
    cpu: str = str(rng.randint(1, per_node + 2))
    if kind == "fractional":
        cpu = f"{rng.choice([100, 250, 1500])}m"
    limits: dict[str, str | int] = {"cpu": cpu, "memory": f"{rng.randint(64, 3000)}Mi"}
    if rng.random() < 0.2 and any(n.hugepages for n in machine.numa_nodes):
        limits["hugepages-2Mi"] = f"{2 * rng.randint(1, 300)}Mi"
    if devices and rng.random() < 0.35:
        limits[GPU] = rng.randint(1, 2)
    if devices and rng.random() < 0.15:
        limits[NIC] = 1
    if kind == "burstable":
        requests = {k: v for k, v in limits.items() if k != "memory"}
        requests["cpu"] = "200m"
        return Container.of(name, requests=requests, limits=limits)
    return Container.of(name, requests=limits, limits=limits)


def _stream(machine: Machine, seed: int, count: int, devices: bool) -> list[tuple[str, Any]]:
    """``("admit", pod)`` and ``("release", uid)`` steps."""
    rng = random.Random(seed)
    steps: list[tuple[str, Any]] = []
    live: list[str] = []
    for i in range(count):
        apps = [_container(rng, f"app{j}", machine, devices) for j in range(rng.randint(1, 2))]
        inits = [_container(rng, "init", machine, devices)] if rng.random() < 0.2 else []
        pod = Pod.of(f"uid-{seed}-{i}", apps, inits, name=f"pod-{i}", namespace="ns")
        steps.append(("admit", pod))
        live.append(pod.uid)
        if live and rng.random() < 0.35:
            steps.append(("release", live.pop(rng.randrange(len(live)))))
    return steps


def _apply(node: Node, step: tuple[str, Any]) -> dict[str, Any] | None:
    action, item = step
    if action == "release":
        if item in {p.uid for p in node.pods}:
            node.release(item)
        return None
    return node.admit(item).to_json()


@dataclass(frozen=True)
class Case:
    name: str
    machine: str
    config: dict[str, Any] = field(default_factory=dict)
    devices: bool = False
    known: str = "all"  # which pods restore_node is given: all, none, some


CASES = [
    Case("single-numa-node container", "dual-socket-multi-numa"),
    Case("single-numa-node pod scope", "dual-socket-multi-numa", {"topologyManagerScope": "pod"}),
    Case("restricted", "dual-socket-multi-numa", {"topologyManagerPolicy": "restricted"}),
    Case("best-effort", "dual-socket-multi-numa", {"topologyManagerPolicy": "best-effort"}),
    Case(
        "best-effort pod scope, pods unknown",
        "dual-socket-multi-numa",
        {"topologyManagerPolicy": "best-effort", "topologyManagerScope": "pod"},
        known="none",
    ),
    Case(
        "none policy, cpu none, memory None",
        "single-socket-ht",
        {
            "topologyManagerPolicy": "none",
            "cpuManagerPolicy": "none",
            "reservedSystemCPUs": None,
            "memoryManagerPolicy": "None",
            "reservedMemory": None,
        },
    ),
    Case(
        "static cpu options",
        "dual-socket-multi-numa",
        {
            "cpuManagerPolicyOptions": {
                "full-pcpus-only": "true",
                "distribute-cpus-across-numa": "true",
            },
            "topologyManagerPolicy": "restricted",
        },
    ),
    Case(
        "prefer-closest and most-allocated",
        "dual-socket-multi-numa",
        {
            "topologyManagerPolicy": "best-effort",
            "topologyManagerPolicyOptions": {
                "prefer-closest-numa-nodes": "true",
            },
        },
        known="some",
    ),
    Case("hugepages", "hugepages", {"topologyManagerPolicy": "restricted"}, known="some"),
    Case("devices", "dual-socket-multi-numa", devices=True),
    Case(
        "devices pod scope, pods unknown",
        "dual-socket-multi-numa",
        {"topologyManagerScope": "pod", "topologyManagerPolicy": "best-effort"},
        devices=True,
        known="none",
    ),
]
SEEDS = (1, 2, 3)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_restored_node_decides_as_the_original(case: Case, seed: int) -> None:
    machine = MACHINES[case.machine]()
    config = _config(machine, **case.config)
    sources = _devices(machine) if case.devices else []
    original = Node(machine, config, device_sources=sources)
    steps = _stream(machine, seed, 40, case.devices)
    rng = random.Random(seed * 7919)
    cut = rng.randrange(5, len(steps) - 5)
    for step in steps[:cut]:
        _apply(original, step)
    assert original.pods, "the cut should leave pods admitted"

    text = snapshot_of(original).to_json()
    snapshot = NodeSnapshot.from_json(text)
    if case.known == "all":
        known = {p.uid: p for p in original.pods}
    elif case.known == "some":
        known = {p.uid: p for p in original.pods if rng.random() < 0.5}
    else:
        known = {}
    restored = restore_node(snapshot, known)

    assert [p.uid for p in restored.pods] == [p.uid for p in original.pods]
    assert restored.allocatable() == original.allocatable()
    for pod in original.pods:
        for c in pod.all_containers():
            if pod.uid in known:
                assert restored.placement(pod, c.name) == original.placement(pod, c.name)
    admitted = 0
    for step in steps[cut:]:
        want = _apply(original, step)
        got = _apply(restored, step)
        assert got == want, f"step {step[0]} {getattr(step[1], 'uid', step[1])}"
        admitted += bool(want and want["admitted"])
    assert admitted > 0, "the stream after the cut should admit something"
    assert snapshot_of(restored).to_dict() == snapshot_of(original).to_dict()


def test_snapshot_json_round_trip_is_stable() -> None:
    machine = MACHINES["dual-socket-multi-numa"]()
    node = Node(machine, _config(machine), device_sources=_devices(machine))
    for step in _stream(machine, 5, 12, True):
        _apply(node, step)
    text = snapshot_of(node).to_json()
    assert NodeSnapshot.from_json(text).to_json() == text


def test_unknown_pods_keep_their_requests_for_the_predicate() -> None:
    # The CPU manager "none" leaves every CPU shared: only the predicate's request accounting
    # refuses the second pod, so a placeholder without requests would admit it.
    machine = PRESETS["single-socket-ht"].build()
    config = kubelet_config_from_dict({})
    node = Node(machine, config)
    big = Pod.of("a", [Container.of("c", {"cpu": "6"}, {"cpu": "6"})])
    assert node.admit(big).admitted
    restored = restore_node(snapshot_of(node), {})
    second = Pod.of("b", [Container.of("c", {"cpu": "3"}, {"cpu": "3"})])
    answer = restored.admit(second)
    assert not answer.admitted
    assert answer.reason == "OutOfcpu"


@dataclass(frozen=True)
class BadSnapshot:
    name: str
    text: str
    says: str


BAD = [
    BadSnapshot("not json", "{", "not JSON"),
    BadSnapshot("wrong format", '{"format": "x"}', "not a node snapshot"),
]


@pytest.mark.parametrize("case", BAD, ids=lambda c: c.name)
def test_malformed_snapshots_are_one_line_errors(case: BadSnapshot) -> None:
    with pytest.raises(SnapshotError) as info:
        NodeSnapshot.from_json(case.text, source="nrt/node-a")
    assert str(info.value).startswith("nrt/node-a: ")
    assert case.says in str(info.value)
    assert "\n" not in str(info.value)


def test_missing_key_is_a_snapshot_error() -> None:
    machine = PRESETS["single-socket-ht"].build()
    doc = snapshot_of(Node(machine, kubelet_config_from_dict({}))).to_dict()
    del doc["states"]
    with pytest.raises(SnapshotError, match="missing key 'states'"):
        NodeSnapshot.from_dict(doc)


def test_states_of_another_machine_are_refused() -> None:
    small = PRESETS["single-socket-ht"].build()
    big = PRESETS["dual-socket-multi-numa"].build()
    config = _config(big, memoryManagerPolicy="None", reservedMemory=None)
    node = Node(big, config)
    node.admit(
        Pod.of(
            "a", [Container.of("c", {"cpu": "2", "memory": "1Gi"}, {"cpu": "2", "memory": "1Gi"})]
        )
    )
    snapshot = snapshot_of(node)
    wrong = NodeSnapshot(small, snapshot.config, snapshot.states, snapshot.pod_uids)
    with pytest.raises(SnapshotError):
        restore_node(wrong, {})


# -- the checkpoint documents against the kubelet's codecs -------------------------------------


def _loaded_node(case: Case, seed: int) -> Node:
    machine = MACHINES[case.machine]()
    node = Node(
        machine,
        _config(machine, **case.config),
        device_sources=_devices(machine) if case.devices else [],
    )
    for step in _stream(machine, seed, 25, case.devices):
        _apply(node, step)
    return node


def _without_checksum(doc: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in doc.items() if k != "checksum"}


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_documents_are_the_kubelet_checkpoints(case: Case) -> None:
    node = _loaded_node(case, 11)
    config = node.config
    docs = state_documents(node.states, config)
    files = encode_states(node.states, (), config.cpu_manager_policy, config.memory_manager_policy)
    for name in (CPU_FILE, MEMORY_FILE):
        assert docs[name]["checksum"] == 0
        assert _without_checksum(docs[name]) == _without_checksum(json.loads(files[name]))
    assert docs[DEVICE_FILE] == json.loads(files[DEVICE_FILE])


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_documents_read_back_as_the_kubelet_reads_them(case: Case) -> None:
    node = _loaded_node(case, 12)
    config = node.config
    docs = state_documents(node.states, config)
    fast = states_from_documents(docs, config)
    # The kubelet accepts checksum 0 for these layouts unverified: the codecs read them too.
    codec = StateFiles(
        Path("<test>"), {name: json.dumps(doc).encode() for name, doc in docs.items()}
    ).node_states(config.cpu_manager_policy, config.memory_manager_policy)
    assert fast.cpu.get_default_cpu_set() == codec.cpu.get_default_cpu_set()
    assert fast.cpu.get_cpu_assignments() == codec.cpu.get_cpu_assignments()
    assert fast.memory.get_machine_state() == codec.memory.get_machine_state()
    assert fast.memory.get_memory_assignments() == codec.memory.get_memory_assignments()
    assert fast.devices.entries() == codec.devices.entries()
    assert fast.devices.registered_devices() == codec.devices.registered_devices()
    # And they are the node's own states.
    assert fast.cpu.get_cpu_assignments() == node.states.cpu.get_cpu_assignments()
    assert fast.memory.get_machine_state() == node.states.memory.get_machine_state()


def test_documents_of_another_policy_are_refused() -> None:
    machine = PRESETS["single-socket-ht"].build()
    docs = state_documents(NodeStates(), kubelet_config_from_dict({}))
    static = _config(machine)
    with pytest.raises(SnapshotError, match=r"policy 'none'.*'static'"):
        states_from_documents(docs, static, source="n1")


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_a_trial_admission_released_leaves_the_same_snapshot(case: Case) -> None:
    # What a scheduler predicting on a restored node relies on to reuse it for the next pod.
    machine = MACHINES[case.machine]()
    node = Node(
        machine,
        _config(machine, **case.config),
        device_sources=_devices(machine) if case.devices else [],
    )
    steps = _stream(machine, 21, 40, case.devices)
    for step in steps[:20]:
        _apply(node, step)
    trials = 0
    for action, pod in steps[20:]:
        if action != "admit":
            continue
        before = snapshot_of(node).to_dict()
        if node.admit(pod).admitted:
            trials += 1
            node.release(pod.uid)
        assert snapshot_of(node).to_dict() == before
    assert trials > 0
