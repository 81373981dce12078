"""Differential tests: the rule-based hints and the merge search against the exhaustive
definition (``numaplane.testing.exhaustive`` and ``numaplane.testing.upstream_hints``), on
random inputs.

- each manager's rule lists exactly the hints its upstream-shaped generator lists (same masks,
  same order, same preferred flags);
- merges of device rules (devices on several NUMA nodes, reused devices) equal the walk;
- whole admissions (CPU, memory, two device resources; every merging policy, both scopes; init
  containers whose devices the app containers reuse) decide identically with the merge search
  and with the exhaustive cross product: the same verdicts, merged hints, CPUs, memory blocks
  and devices.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from numaplane.api.kubeletconfig import kubelet_config_from_dict
from numaplane.api.pod import Container, Pod
from numaplane.node.admission import Node
from numaplane.node.cpumanager.cpu_hint_sets import cpu_hint_set
from numaplane.node.cpumanager.topology import CPUTopology
from numaplane.node.devicemanager.device import Device, ResourcePool
from numaplane.node.devicemanager.device_hint_sets import device_hint_set
from numaplane.node.devicemanager.source import InMemoryDeviceSource
from numaplane.node.memorymanager.memory_hint_sets import best_structured_hint, memory_hint_sets
from numaplane.node.memorymanager.state import MemoryTable, NUMANodeState
from numaplane.node.topologymanager.bitmask import BitMask
from numaplane.node.topologymanager.hint import TopologyHint
from numaplane.node.topologymanager.hint_sets import StructuredHints
from numaplane.node.topologymanager.numa_info import NUMAInfo
from numaplane.node.topologymanager.policy import merge_filtered
from numaplane.node.topologymanager.policy_options import PolicyOptions
from numaplane.testing import admission_workload as bench
from numaplane.testing.exhaustive import exhaustive_merge, use_exhaustive_merge
from numaplane.testing.upstream_hints import (
    calculate_memory_hints,
    find_best_hint,
    generate_cpu_topology_hints,
    generate_device_topology_hints,
)
from numaplane.topology.cpuset import CPUSet
from numaplane.topology.discover import load_machine

GPU = "example.com/gpu"


def test_device_rule_lists_the_exhaustive_hints() -> None:
    for seed in range(400):
        rng = random.Random(seed)
        nodes = sorted(rng.sample(range(9), rng.randint(1, 7)))
        devices = []
        for i in range(rng.randint(0, 8)):
            kind = rng.random()
            numa: tuple[int, ...] | None
            if kind < 0.1:
                numa = None
            elif kind < 0.15:
                numa = ()
            else:
                numa = tuple(rng.sample(nodes, rng.randint(1, min(2, len(nodes)))))
            devices.append(Device(f"d{i}", numa, rng.random() < 0.9))
        pool = ResourcePool.of("r", devices)
        ids = [d.id for d in devices]
        available = frozenset(i for i in ids if rng.random() < 0.6)
        reusable = frozenset(i for i in ids if rng.random() < 0.15) | {"ghost"}
        request = rng.randint(0, 5)
        rule = device_hint_set(nodes, pool, available, reusable, request)
        listed = generate_device_topology_hints(nodes, pool, available, reusable, request)
        assert list(rule) == listed, f"seed {seed}"


@st.composite
def device_rules(draw: st.DrawFn, nodes: tuple[int, ...]) -> StructuredHints:
    """One device resource's rule: devices on one to three NUMA nodes (or none), some held by
    other pods, some released by this pod's init containers for reuse."""
    devices = []
    for i in range(draw(st.integers(0, 6))):
        numa = draw(
            st.one_of(
                st.none(),
                st.lists(st.sampled_from(nodes), min_size=1, max_size=3, unique=True).map(
                    lambda n: tuple(sorted(n))
                ),
            )
        )
        devices.append(Device(f"d{i}", numa, draw(st.booleans()) or draw(st.booleans())))
    ids = [d.id for d in devices]
    reusable = frozenset(i for i in ids if draw(st.booleans()) and draw(st.booleans()))
    in_use = frozenset(i for i in ids if i in reusable or draw(st.booleans()))
    pool = ResourcePool.of("r", devices, in_use)
    request = draw(st.integers(0, 4))
    return device_hint_set(nodes, pool, pool.available, reusable, request)


@st.composite
def device_merges(draw: st.DrawFn) -> tuple[NUMAInfo, list[StructuredHints | list[TopologyHint]]]:
    """Up to three device rules on one to five NUMA nodes, and maybe a listed answer."""
    nodes = tuple(range(draw(st.integers(1, 5))))
    lists: list[StructuredHints | list[TopologyHint]] = [
        draw(device_rules(nodes)) for _ in range(draw(st.integers(1, 3)))
    ]
    if draw(st.booleans()):
        mask = draw(st.lists(st.sampled_from(nodes), min_size=1, unique=True))
        lists.append([TopologyHint(BitMask(*mask), draw(st.booleans()))])
    distances = {i: tuple(10 if i == j else 20 + 2 * abs(i - j) for j in nodes) for i in nodes}
    return NUMAInfo(nodes, distances), lists


@settings(max_examples=300, deadline=None)
@given(device_merges(), st.sampled_from(["best-effort", "restricted"]), st.booleans())
def test_device_rule_merges_match_the_exhaustive_definition(
    merge: tuple[NUMAInfo, list[StructuredHints | list[TopologyHint]]],
    policy_name: str,
    closest: bool,
) -> None:
    """Multi-NUMA devices and reused devices included: a reused device spanning several nodes
    may share a node with another, which the search must not count twice."""
    info, lists = merge
    options = PolicyOptions(prefer_closest_numa=closest)
    fast = merge_filtered(info, lists, policy_name, options).hint
    assert fast == exhaustive_merge(info, lists, policy_name, options)


@pytest.mark.parametrize(
    "spec",
    [
        "sockets=2,numa-per-socket=2,cores-per-numa=2,threads-per-core=2,memory-per-numa=4Gi",
        "sockets=2,numa-per-socket=3,cores-per-numa=1,threads-per-core=2,memory-per-numa=4Gi",
    ],
)
def test_cpu_rule_lists_the_exhaustive_hints(spec: str) -> None:
    topology = CPUTopology.from_machine(load_machine(spec))
    cpus = sorted(topology.details)
    for seed in range(150):
        rng = random.Random(seed)
        available = CPUSet(c for c in cpus if rng.random() < 0.5)
        reusable = CPUSet(c for c in cpus if c not in available and rng.random() < 0.1)
        request = rng.randint(0, len(cpus) + 1)
        for aligned in (False, True):
            rule = cpu_hint_set(topology, available, reusable, request, aligned)
            listed = generate_cpu_topology_hints(topology, available, reusable, request, aligned)
            assert list(rule) == listed, f"seed {seed} aligned {aligned}"


def test_memory_rule_lists_the_exhaustive_hints() -> None:
    gib = 1 << 30
    for seed in range(300):
        rng = random.Random(seed)
        ids = sorted(rng.sample(range(8), rng.randint(1, 6)))
        state = {}
        for node in ids:
            tables = {}
            for resource in ("memory", "hugepages-2Mi"):
                if resource == "memory" or rng.random() < 0.6:
                    alloc = rng.randint(0, 4) * gib
                    free = rng.randint(0, 4) * gib if alloc else 0
                    tables[resource] = MemoryTable(alloc, 0, alloc, alloc - min(free, alloc), free)
            used = rng.random() < 0.4
            cells: tuple[int, ...] = (node,)
            if used and rng.random() < 0.5:
                cells = tuple(sorted({node, *rng.sample(ids, min(len(ids), 2))}))
            state[node] = NUMANodeState(int(used), tables, cells)
        requests = {"memory": rng.randint(1, 6) * gib}
        if rng.random() < 0.4:
            requests["hugepages-2Mi"] = rng.randint(1, 3) * gib
        bonus = {BitMask.from_bits(rng.sample(ids, rng.randint(1, len(ids)))): gib}

        def reusable(mask: BitMask, resource: str, bonus: dict[BitMask, int] = bonus) -> int:
            return bonus.get(mask, 0) if resource == "memory" else 0

        rules = memory_hint_sets(state, requests, reusable, bonus)
        listed = calculate_memory_hints(state, requests, reusable)
        assert {r: list(h) for r, h in rules.items()} == listed, f"seed {seed}"
        for resource, rule in rules.items():
            assert best_structured_hint(rule) == find_best_hint(listed[resource])
            within = rng.choice(listed[resource]).numa_affinity
            assert within is not None
            subset = BitMask.from_bits(within.bits[:1])
            expected = find_best_hint(
                h
                for h in listed[resource]
                if h.numa_affinity is not None and subset.is_subset_of(h.numa_affinity)
            )
            assert best_structured_hint(rule, subset.value) == expected


@dataclass(frozen=True)
class NodeCase:
    """A machine, a policy and scope, and a pod stream to replay both ways."""

    name: str
    machine: str
    policy: str
    scope: str
    pods: int


NODE_CASES = (
    NodeCase(
        "4 numa best-effort container",
        "sockets=2,numa-per-socket=2,cores-per-numa=2,threads-per-core=2,memory-per-numa=8Gi",
        "best-effort",
        "container",
        40,
    ),
    NodeCase(
        "4 numa restricted pod",
        "sockets=1,numa-per-socket=4,cores-per-numa=2,threads-per-core=2,memory-per-numa=8Gi",
        "restricted",
        "pod",
        40,
    ),
    NodeCase(
        "6 numa single-numa-node",
        "sockets=2,numa-per-socket=3,cores-per-numa=2,threads-per-core=1,memory-per-numa=8Gi",
        "single-numa-node",
        "container",
        40,
    ),
    NodeCase(
        "6 numa best-effort pod",
        "sockets=3,numa-per-socket=2,cores-per-numa=2,threads-per-core=1,memory-per-numa=8Gi",
        "best-effort",
        "pod",
        25,
    ),
)


def _replay(case: NodeCase, seed: int) -> tuple[list[Any], list[Any]]:
    machine = bench.resolve_machine(case.machine)
    steps = bench.pod_stream(machine, case.pods, seed)
    _, fast = bench.run(machine, steps, case.policy, case.scope)
    _, reference = bench.run(machine, steps, case.policy, case.scope, use_exhaustive_merge)
    return fast, reference


@pytest.mark.parametrize("case", NODE_CASES, ids=lambda c: c.name)
def test_admissions_match_the_exhaustive_definition(case: NodeCase) -> None:
    for seed in (1, 2):
        fast, reference = _replay(case, seed)
        assert fast == reference
        assert any(d[0] for d in fast)
        assert not all(d[0] for d in fast)


@dataclass(frozen=True)
class ReuseCase:
    """A policy and scope for pods whose app containers reuse their init containers' devices."""

    name: str
    policy: str
    scope: str


REUSE_CASES = (
    ReuseCase("restricted container", "restricted", "container"),
    ReuseCase("best-effort container", "best-effort", "container"),
    ReuseCase("single-numa-node container", "single-numa-node", "container"),
    ReuseCase("restricted pod", "restricted", "pod"),
)


def _reuse_node(rng: random.Random, case: ReuseCase) -> tuple[Node, list[Pod]]:
    nodes = rng.randint(2, 4)
    machine = load_machine(f"sockets=1,numa-per-socket={nodes},cores-per-numa=2")
    gpus = [
        Device(f"gpu{i}", tuple(sorted(rng.sample(range(nodes), rng.randint(1, min(3, nodes))))))
        for i in range(rng.randint(2, 6))
    ]
    config = kubelet_config_from_dict(
        {
            "kind": "KubeletConfiguration",
            "topologyManagerPolicy": case.policy,
            "topologyManagerScope": case.scope,
        },
        "<test>",
    )
    node = Node(machine, config, device_sources=[InMemoryDeviceSource(GPU, gpus)])
    pods = []
    for i in range(rng.randint(1, 4)):
        init = {GPU: rng.randint(1, 3)}
        app = {GPU: rng.randint(0, 3)}
        pods.append(
            Pod.of(
                f"p{i}",
                init_containers=[Container.of("init", requests=init, limits=init)],
                containers=[Container.of("app", requests=app, limits=app)],
            )
        )
    return node, pods


def _reuse_decisions(node: Node, pods: list[Pod]) -> list[object]:
    decisions: list[object] = []
    for pod in pods:
        result = node.admit(pod)
        merged = [d.merged for d in result.topology.explanation.decisions]
        devices = [dict(c.devices) for c in result.containers]
        decisions.append((result.admitted, result.reason, merged, devices))
    return decisions


@pytest.mark.parametrize("case", REUSE_CASES, ids=lambda c: c.name)
def test_device_reuse_admissions_match_the_exhaustive_definition(case: ReuseCase) -> None:
    """Init containers' devices (some on several NUMA nodes) reused by the app containers."""
    for seed in range(40):
        fast_node, pods = _reuse_node(random.Random(seed), case)
        reference_node, _ = _reuse_node(random.Random(seed), case)
        use_exhaustive_merge(reference_node)
        fast = _reuse_decisions(fast_node, pods)
        assert fast == _reuse_decisions(reference_node, pods), f"seed {seed}"


@pytest.mark.slow
@pytest.mark.parametrize("nodes", [10, 11, 12])
def test_merges_match_on_10_to_12_nodes(nodes: int) -> None:
    # Two rule-based lists (up to 4095 hints each) and a short listed one: the cross product
    # still finishes in seconds.
    from numaplane.node.topologymanager.hint_rules import Family, Threshold

    rng = random.Random(nodes)
    ids = list(range(nodes))
    info = NUMAInfo(
        tuple(ids), {i: tuple(10 if i == j else rng.choice([12, 20, 32]) for j in ids) for i in ids}
    )
    rules = []
    for _ in range(2):
        free = {n: rng.randint(0, 3) for n in ids}
        family = Family((1 << nodes) - 1, (Threshold.per_node(free, rng.randint(3, 9)),))
        rules.append(StructuredHints(ids, [family], (), rng.randint(1, 3)))
    listed = [TopologyHint(BitMask(*rng.sample(ids, 3)), True), TopologyHint(None, False)]
    for closest in (False, True):
        options = PolicyOptions(prefer_closest_numa=closest)
        hints = [rules[0], listed, rules[1]][: 2 if nodes == 12 else 3]
        fast = merge_filtered(info, hints, "best-effort", options).hint
        assert fast == exhaustive_merge(info, hints, "best-effort", options)
