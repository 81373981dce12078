"""Reused devices spanning several NUMA nodes: one node may meet two of them (issue 11).

An init container's devices are offered again to the app containers, and a mask must touch a
node of every reused device. When one reused device spans nodes {0, 1} and another lies on {0},
node 0 alone touches both: ``{0}`` is a hint, and the narrowest one. Upstream merges ``{0}``
(preferred); the rule search once counted one node per reused device and missed it.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from numaplane.api.kubeletconfig import kubelet_config_from_dict
from numaplane.api.pod import Container, Pod
from numaplane.node.admission import Node
from numaplane.node.devicemanager.device import Device, ResourcePool
from numaplane.node.devicemanager.device_hint_sets import device_hint_set
from numaplane.node.devicemanager.source import InMemoryDeviceSource
from numaplane.node.topologymanager.bitmask import BitMask
from numaplane.node.topologymanager.hint import TopologyHint
from numaplane.node.topologymanager.hint_rules import Family
from numaplane.topology.discover import load_machine

GPU = "example.com/gpu"
MACHINE = "sockets=1,numa-per-socket=2,cores-per-numa=2"


@dataclass(frozen=True)
class PolicyCase:
    """A Topology Manager policy and the merged hint both containers must get."""

    name: str
    policy: str


CASES = (PolicyCase("restricted", "restricted"), PolicyCase("best-effort", "best-effort"))


def _node(policy: str) -> Node:
    config = kubelet_config_from_dict(
        {"kind": "KubeletConfiguration", "topologyManagerPolicy": policy}, "<test>"
    )
    gpus = [Device("gpu0", (0,)), Device("gpu1", (0, 1))]
    return Node(load_machine(MACHINE), config, device_sources=[InMemoryDeviceSource(GPU, gpus)])


def _pod() -> Pod:
    two = {GPU: 2}
    return Pod.of(
        "p",
        init_containers=[Container.of("init", requests=two, limits=two)],
        containers=[Container.of("app", requests=two, limits=two)],
    )


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_app_container_reusing_both_devices_is_aligned_on_one_node(case: PolicyCase) -> None:
    result = _node(case.policy).admit(_pod())
    assert result.admitted, result.message
    merged = {d.target: d.merged for d in result.topology.explanation.decisions}
    preferred_zero = TopologyHint(BitMask(0), True)
    assert merged == {"init": preferred_zero, "app": preferred_zero}
    devices = {c.name: sorted(c.devices.get(GPU, ())) for c in result.containers}
    assert devices == {"init": ["gpu0", "gpu1"], "app": ["gpu0", "gpu1"]}


def test_rule_of_the_reusing_container_lists_node_zero_as_preferred() -> None:
    pool = ResourcePool.of("gpu", [Device("gpu0", (0,)), Device("gpu1", (0, 1))], ["gpu0", "gpu1"])
    rule = device_hint_set((0, 1), pool, frozenset(), frozenset({"gpu0", "gpu1"}), 2)
    assert list(rule) == [TopologyHint(BitMask(0), True), TopologyHint(BitMask(0, 1), False)]
    assert rule.min_count() == 1


def test_one_node_may_meet_two_overlapping_hits() -> None:
    family = Family(0b11, (), (0b01, 0b11))
    assert family.may_extend(0, 0b11, 1)
    # Disjoint hits still need a node each.
    assert not Family(0b111, (), (0b001, 0b110)).may_extend(0, 0b111, 1)
