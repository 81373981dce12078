"""The NUMA filter and score: the exact prediction on a replica restored from the node's
snapshot (never a node that would refuse; ended pods leave; a disagreeing snapshot replaces the
replica), the zone estimate without a snapshot, and the stranded-CPU score."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest

from numaplane.agent.cluster.nodeobject import node_object
from numaplane.agent.cluster.nrt import nrt_object
from numaplane.api.kubeletconfig import kubelet_config_from_dict
from numaplane.controllers.scheduler.cache import Cache
from numaplane.controllers.scheduler.framework import decide
from numaplane.controllers.scheduler.numa import SNAPSHOT_ANNOTATION, stranded
from numaplane.controllers.scheduler.options import SchedulerOptions
from numaplane.controllers.scheduler.podinfo import pod_info
from numaplane.node.admission import Node
from numaplane.topology.synthetic import parse_synthetic

from .helpers import node_obj, pod_obj, single_numa_config

NOW = datetime(2026, 1, 1, tzinfo=UTC)
SHAPES = (
    "sockets=2,numa-per-socket=1,cores-per-numa=4,threads-per-core=1,memory-per-numa=8Gi",
    "sockets=2,numa-per-socket=2,cores-per-numa=2,threads-per-core=1,memory-per-numa=4Gi",
)
SIZES = ("1", "2", "3")


def cluster(n: int) -> tuple[Cache, dict[str, Node]]:
    """``n`` nodes (alternating shapes) published as their agents publish them."""
    cache = Cache()
    agents = {}
    for i in range(n):
        machine = parse_synthetic(SHAPES[i % len(SHAPES)])
        name = f"n{i}"
        agents[name] = Node(machine, single_numa_config(machine))
        cache.set_node(node_object(name, agents[name], now=NOW))
        cache.set_nrt(nrt_object(name, agents[name]))
    return cache, agents


def stream(count: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    return [pod_obj(f"p{i}", cpu=rng.choice(SIZES), memory="256Mi") for i in range(count)]


def run_stream(numa_filter: bool, seed: int) -> tuple[int, int]:
    """(bound, refused by the node) for a stream of Guaranteed pods over three nodes."""
    cache, agents = cluster(3)
    options = SchedulerOptions(numa_filter=numa_filter)
    rng = random.Random(seed)
    bound = refused = 0
    for obj in stream(60, seed):
        pod = pod_info(obj)
        decision = decide(cache, options, pod, rng)
        if decision.node is None:
            continue
        assert cache.assume(pod, decision.node, check_numa=numa_filter)
        cache.confirm(pod.uid, decision.node)  # the pod watch shows the binding
        bound += 1
        if not agents[decision.node].admit(pod.pod).admitted:
            refused += 1
            cache.remove_assigned(pod.uid)
        if bound % 4 == 0:
            # The agents republish now and then (snapshots that agree with the replicas).
            for name, agent in agents.items():
                cache.set_nrt(nrt_object(name, agent))
    return bound, refused


@pytest.mark.parametrize("seed", [1, 2, 3], ids=lambda s: f"seed{s}")
def test_filter_never_binds_where_the_node_refuses(seed: int) -> None:
    bound, refused = run_stream(True, seed)
    assert refused == 0
    assert bound > 10


def test_without_the_filter_nodes_refuse() -> None:
    refused = sum(run_stream(False, seed)[1] for seed in (1, 2, 3))
    assert refused > 0


def test_agreeing_snapshot_keeps_the_replica_and_a_disagreeing_one_replaces_it() -> None:
    cache, agents = cluster(1)
    numa = cache.numa["n0"]
    first = pod_info(pod_obj("a", cpu="2", memory="256Mi"))
    assert decide(cache, SchedulerOptions(), first, random.Random(1)).node == "n0"
    assert cache.assume(first, "n0")
    cache.confirm(first.uid, "n0")
    agents["n0"].admit(first.pod)
    rebuilds = numa.rebuilds
    cache.set_nrt(nrt_object("n0", agents["n0"]))
    assert numa.rebuilds == rebuilds, "the snapshot only confirms what the replica did"
    # A pod this scheduler never saw lands on the node (bound by someone else): the snapshot
    # now disagrees and replaces the replica, which then holds it.
    stranger = pod_info(pod_obj("stranger", cpu="2", memory="256Mi"))
    assert agents["n0"].admit(stranger.pod).admitted
    cache.set_nrt(nrt_object("n0", agents["n0"]))
    assert numa.rebuilds == rebuilds + 1
    assert numa.replica is not None
    assert {p.uid for p in numa.replica.pods} == {first.uid, stranger.uid}


def test_ended_pods_leave_the_replica() -> None:
    # 2 NUMA x 4 CPUs, CPU 0 reserved: zones of 3 and 4 free CPUs. A 2-CPU pod then a 3-CPU
    # pod leave one free CPU in each zone: a third 2-CPU pod fits the node's cpu (2 of 2
    # free) but no zone, until the first pod ends.
    cache, _ = cluster(1)
    options = SchedulerOptions()
    first, second, third = (
        pod_info(pod_obj(name, cpu=cpu, memory="256Mi"))
        for name, cpu in (("a", "2"), ("b", "3"), ("c", "2"))
    )
    for pod in (first, second):
        assert decide(cache, options, pod, random.Random(1)).node == "n0"
        assert cache.assume(pod, "n0")
        cache.confirm(pod.uid, "n0")
    refused = decide(cache, options, third, random.Random(1))
    assert refused.node is None
    assert refused.message.startswith(
        "0/1 nodes are available: 1 cannot align container: TopologyAffinityError."
    )
    cache.remove_assigned(first.uid)
    assert decide(cache, options, third, random.Random(1)).node == "n0"


@dataclass(frozen=True)
class StrandedCase:
    name: str
    free: tuple[int, ...]
    unit: int
    want: int


STRANDED = [
    StrandedCase("exact multiples", (4, 8), 4, 0),
    StrandedCase("remainders add up", (5, 3), 2, 2),
    StrandedCase("zone too small strands all", (1, 6), 4, 3),
    StrandedCase("no exclusive cpus", (5, 3), 0, 0),
]


@pytest.mark.parametrize("case", STRANDED, ids=[c.name for c in STRANDED])
def test_stranded(case: StrandedCase) -> None:
    assert stranded(list(case.free), case.unit) == case.want


def test_score_prefers_the_node_that_strands_fewer_cpus() -> None:
    # Two equal nodes (2 zones x 4 CPUs, CPU 0 reserved), "used" holding a 1-CPU pod. A 3-CPU
    # pod on "used" leaves zones (2, 1) free: 3 stranded CPUs; on "empty" (0, 4): 1 stranded.
    # MostAllocated alone prefers "used"; the NUMA score turns the choice to "empty".
    cache, agents = cluster(0)
    for name in ("used", "empty"):
        machine = parse_synthetic(SHAPES[0])
        agents[name] = Node(machine, single_numa_config(machine))
    filler = pod_info(pod_obj("filler", cpu="1", memory="256Mi"))
    assert agents["used"].admit(filler.pod).admitted
    for name, agent in agents.items():
        cache.set_node(node_object(name, agent, now=NOW))
    cache.add_assigned(filler, "used")
    for name, agent in agents.items():
        cache.set_nrt(nrt_object(name, agent))
    pod = pod_info(pod_obj("p", cpu="3", memory="256Mi"))
    most = SchedulerOptions(scoring_strategy="MostAllocated")
    assert (
        decide(
            cache,
            SchedulerOptions(numa_filter=False, scoring_strategy="MostAllocated"),
            pod,
            random.Random(1),
        ).node
        == "used"
    )
    cache.numa["used"].forget(pod.uid)
    assert decide(cache, most, pod, random.Random(1)).node == "empty"


@dataclass(frozen=True)
class EstimateCase:
    name: str
    policy: str
    scope: str
    pod: dict[str, Any]
    want: str


def estimate_nrt(policy: str, scope: str) -> dict[str, Any]:
    """A kubelet's NRT as NFD publishes it (no snapshot): zones with 2 and 4 free CPUs."""

    def zone(i: int, cpus: int) -> dict[str, Any]:
        return {
            "name": f"node-{i}",
            "type": "Node",
            "resources": [
                {"name": "cpu", "capacity": "4", "allocatable": "4", "available": str(cpus)},
                {"name": "memory", "capacity": "8Gi", "allocatable": "8Gi", "available": "4Gi"},
            ],
        }

    return {
        "metadata": {"name": "n"},
        "attributes": [
            {"name": "topologyManagerPolicy", "value": policy},
            {"name": "topologyManagerScope", "value": scope},
        ],
        "zones": [zone(0, 2), zone(1, 4)],
    }


ESTIMATES = [
    EstimateCase(
        "container fits the larger zone", "single-numa-node", "container", pod_obj("p", cpu="4"), ""
    ),
    EstimateCase(
        "container too big",
        "single-numa-node",
        "container",
        pod_obj("p", cpu="5"),
        "cannot align container",
    ),
    EstimateCase(
        "containers take from their zone",
        "single-numa-node",
        "container",
        pod_obj("p", cpu="3", containers=2),
        "cannot align container",
    ),
    EstimateCase(
        "two containers in two zones",
        "single-numa-node",
        "container",
        pod_obj("p", cpu="2", containers=2),
        "",
    ),
    EstimateCase(
        "pod scope sums",
        "single-numa-node",
        "pod",
        pod_obj("p", cpu="3", containers=2),
        "cannot align pod",
    ),
    EstimateCase(
        "memory per zone",
        "single-numa-node",
        "container",
        pod_obj("p", cpu="1", memory="5Gi"),
        "cannot align container",
    ),
    EstimateCase(
        "burstable cpu is not NUMA-bound",
        "single-numa-node",
        "container",
        pod_obj("p", cpu="6", guaranteed=False),
        "",
    ),
    EstimateCase(
        "other policies are not checked", "best-effort", "container", pod_obj("p", cpu="5"), ""
    ),
]


@pytest.mark.parametrize("case", ESTIMATES, ids=[c.name for c in ESTIMATES])
def test_zone_estimate(case: EstimateCase) -> None:
    cache = Cache()
    cache.set_node(node_obj("n", cpu="16", memory="32Gi"))
    nrt = estimate_nrt(case.policy, case.scope)
    assert SNAPSHOT_ANNOTATION not in nrt["metadata"]
    cache.set_nrt(nrt)
    assert cache.numa["n"].mode == "estimate"
    assert cache.numa["n"].quick(pod_info(case.pod)).reason == case.want


def test_no_nrt_no_numa_filter() -> None:
    cache = Cache()
    cache.set_node(node_obj("n", cpu="16", memory="32Gi"))
    pod = pod_info(pod_obj("p", cpu="12"))
    assert decide(cache, SchedulerOptions(), pod, random.Random(1)).node == "n"


def test_kubelet_config_round_trip_used_by_the_replica() -> None:
    # The replica decides with the node's own configuration, read back from the snapshot.
    machine = parse_synthetic(SHAPES[1])
    config = single_numa_config(machine, scope="pod")
    assert kubelet_config_from_dict(config.to_dict()) == config


@pytest.mark.parametrize("seed", [4, 5], ids=lambda s: f"seed{s}")
def test_the_cheap_necessary_condition_never_refuses_what_the_node_admits(seed: int) -> None:
    # Pods with memory large enough for the memory half of the condition to matter too.
    cache, _ = cluster(3)
    rng = random.Random(seed)
    checked = refused = 0
    for i in range(80):
        cpu = rng.choice(("1", "2", "3"))
        memory = rng.choice(("256Mi", "1Gi", "2Gi", "3Gi"))
        pod = pod_info(pod_obj(f"q{i}", cpu=cpu, memory=memory))
        for name, numa in cache.numa.items():
            replica = numa.replica
            assert replica is not None
            if not numa.quick(pod).reason:
                continue
            checked += 1
            admission = replica.admit(pod.pod)
            if admission.admitted:
                replica.release(pod.uid)
            assert not admission.admitted, f"{name} admits {pod.key}, the condition refused it"
        decision = decide(cache, SchedulerOptions(), pod, rng)
        if decision.node is not None:
            assert cache.assume(pod, decision.node)
            cache.confirm(pod.uid, decision.node)
        else:
            refused += 1
    assert checked > 0
    assert refused > 0


@dataclass(frozen=True)
class WatchOrderCase:
    name: str
    #: Pods the scheduler places on the node (name, CPUs) and the pod watch shows bound at once.
    before: tuple[tuple[str, int], ...]
    #: Pods it places next, in this order, whose bindings are not shown yet.
    assumed: tuple[tuple[str, int], ...]
    #: What happens next, in the pod watch's order (the node's): ``end`` a pod, ``bind`` an
    #: assumed pod (the node admits it), ``fail`` an assumed pod's bind (the node never sees it),
    #: ``foreign`` a pod of ``foreign`` bound by someone else (the node admits it).
    watch: tuple[tuple[str, str], ...]
    foreign: tuple[tuple[str, int], ...] = ()


# The node: 2 NUMA x 4 CPUs, CPU 0 reserved (zones of 3 and 4 free CPUs). In each case the node
# puts some pod on other CPUs than the replica did when the scheduler chose it.
WATCH_ORDERS = (
    # ``late`` goes to zone 1 on the replica; the node, which freed ``ended`` first, puts it in
    # zone 0.
    WatchOrderCase(
        "end-before-binding", (("ended", 2),), (("late", 3),), (("end", "ended"), ("bind", "late"))
    ),
    WatchOrderCase(
        "end-after-binding", (("ended", 2),), (("late", 3),), (("bind", "late"), ("end", "ended"))
    ),
    # Another scheduler's ``x``, bound before ``a``: zone 0 on the node, ``a`` in zone 1.
    WatchOrderCase(
        "foreign-binding-before-ours",
        (),
        (("a", 3),),
        (("foreign", "x"), ("bind", "a")),
        foreign=(("x", 2),),
    ),
)


@pytest.mark.parametrize("case", WATCH_ORDERS, ids=lambda c: c.name)
def test_replica_follows_the_node_in_the_pod_watch_order(case: WatchOrderCase) -> None:
    # Each pod is placed while the pods before it hold their CPUs on the replica; the node
    # frees and admits in the pod watch's order. The replica must end up with the node's CPUs
    # (else it sees room the node lacks, and a later pod gets TopologyAffinityError).
    cache, agents = cluster(1)
    node = agents["n0"]
    options = SchedulerOptions()
    pods = {
        name: pod_info(pod_obj(name, cpu=str(cpus), memory="256Mi"))
        for name, cpus in case.before + case.assumed + case.foreign
    }
    for name, _ in case.before + case.assumed:
        pod = pods[name]
        assert decide(cache, options, pod, random.Random(1)).node == "n0", name
        assert cache.assume(pod, "n0")
        if name in dict(case.before):
            cache.confirm(pod.uid, "n0")
            assert node.admit(pod.pod).admitted
    for what, name in case.watch:
        pod = pods[name]
        if what == "end":
            node.release(pod.uid)
            cache.remove_assigned(pod.uid)
        elif what == "bind":
            assert node.admit(pod.pod).admitted
            cache.confirm(pod.uid, "n0")
        elif what == "foreign":
            assert node.admit(pod.pod).admitted
            cache.add_assigned(pod, "n0")
        else:
            cache.forget(pod)
    replica = cache.numa["n0"].replica
    assert replica is not None
    mine, theirs = replica.cpu_manager.state, node.cpu_manager.state
    for name, _ in case.assumed + case.foreign:
        uid = pods[name].uid
        assert mine.get_pod_cpu_sets(uid) == theirs.get_pod_cpu_sets(uid), name
    assert mine.get_default_cpu_set() == theirs.get_default_cpu_set()


def test_no_other_pod_goes_to_a_node_until_its_binding_is_confirmed() -> None:
    # The node's answer for a second pod depends on where it put the first, which the replica
    # knows only once the watch has shown the first binding (and every end before it).
    cache, _ = cluster(1)
    options = SchedulerOptions()
    first, second = (pod_info(pod_obj(name, cpu="1", memory="256Mi")) for name in ("a", "b"))
    assert decide(cache, options, first, random.Random(1)).node == "n0"
    assert cache.assume(first, "n0")
    waiting = decide(cache, options, second, random.Random(1))
    assert waiting.node is None
    assert "waiting for a binding to the node to be confirmed" in waiting.message
    cache.confirm(first.uid, "n0")
    assert decide(cache, options, second, random.Random(1)).node == "n0"


def test_a_late_snapshot_is_replayed_in_the_watch_order() -> None:
    # Zones of 3 and 4 free CPUs. A pod bound elsewhere takes 1 CPU of zone 0, ``ended``
    # (2 CPUs) the rest of zone 0; the node publishes a snapshot of that. ``late`` (2 CPUs)
    # then goes to zone 1, and only after it was bound does ``ended`` end. The snapshot reaches
    # the scheduler only now: replayed with the end first, ``late`` would land in zone 0 on the
    # replica, where the node does not have it.
    cache, agents = cluster(1)
    cache.start_sequence()
    node = agents["n0"]
    options = SchedulerOptions()
    stranger, ended, late = (
        pod_info(pod_obj(name, cpu=cpu, memory="256Mi"))
        for name, cpu in (("stranger", "1"), ("ended", "2"), ("late", "2"))
    )
    assert node.admit(stranger.pod).admitted
    for pod in (ended, late):
        if pod is late:
            snapshot = nrt_object("n0", node)
        assert decide(cache, options, pod, random.Random(1)).node == "n0"
        assert cache.assume(pod, "n0")
        cache.confirm(pod.uid, "n0")
        assert node.admit(pod.pod).admitted
    node.release(ended.uid)
    cache.remove_assigned(ended.uid)
    rebuilds = cache.numa["n0"].rebuilds
    cache.set_nrt(snapshot)
    assert cache.numa["n0"].rebuilds == rebuilds + 1, "the stranger makes it disagree"
    replica = cache.numa["n0"].replica
    assert replica is not None
    mine, theirs = replica.cpu_manager.state, node.cpu_manager.state
    assert mine.get_pod_cpu_sets(late.uid) == theirs.get_pod_cpu_sets(late.uid)
    assert mine.get_default_cpu_set() == theirs.get_default_cpu_set()
