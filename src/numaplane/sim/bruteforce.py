"""The optimum by enumeration, for tiny instances: the check on the CP-SAT model.

Every pod is either rejected or placed on a node with each of its alignment groups on one NUMA
node (``single-numa-node``), or just on a node (splitting policies, where only totals count).
A depth-first search tries every combination, pruning branches that cannot beat the best count
found. It reads the same ``Instance`` as ``bound`` but shares none of its modelling code.

Device pools must each sit on exactly one NUMA node: a container on NUMA node ``n`` then takes
its devices from ``n``'s pool. Instances with devices of no or several NUMA nodes are refused.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from numaplane.api.kubeletconfig import KubeletConfiguration
from numaplane.api.pod import Pod
from numaplane.errors import InputError
from numaplane.node.devicemanager.source import DeviceSource
from numaplane.sim.bound_instance import (
    ALIGNED,
    Instance,
    NodeCapacity,
    PodDemand,
    PodOnNode,
    build_instance,
    resolve_nodes,
)
from numaplane.topology.model import Machine

__all__ = ["brute_force_instance", "brute_force_optimum"]

Usage = dict[tuple[int, str], int]
"""(NUMA id; -1: node allocatable; -2: all NUMA pools together) x resource -> amount."""

MAX_PODS = 10


def brute_force_optimum(
    nodes: Machine | Sequence[Machine],
    config: KubeletConfiguration,
    pods: Sequence[Pod],
    *,
    device_sources: Sequence[Sequence[DeviceSource]] | None = None,
) -> int:
    """The most pods any placement admits, by exhaustive search (at most ``MAX_PODS`` pods)."""
    instance = build_instance(resolve_nodes(nodes), config, pods, device_sources)
    return brute_force_instance(instance)


def brute_force_instance(instance: Instance) -> int:
    """Exhaustive search over a prepared instance (see the module doc)."""
    if len(instance.pods) > MAX_PODS:
        raise InputError("optimum", f"brute force handles at most {MAX_PODS} pods")
    for node in instance.nodes:
        for resource, pools in node.device_pools.items():
            if any(len(loc) != 1 for loc in pools):
                raise InputError("optimum", f"brute force needs single-NUMA devices ({resource})")
    options = [
        [(m, fp) for m in range(len(instance.nodes)) for fp in _footprints(instance, pod, m)]
        for pod in instance.pods
    ]
    capacity = [_capacity(node) for node in instance.nodes]
    used: list[Usage] = [{} for _ in instance.nodes]
    best = 0

    def search(index: int, admitted: int) -> None:
        nonlocal best
        if admitted + len(options) - index <= best:
            return
        if index == len(options):
            best = admitted
            return
        for m, footprint in options[index]:
            if all(used[m].get(k, 0) + v <= capacity[m].get(k, 0) for k, v in footprint.items()):
                for k, v in footprint.items():
                    used[m][k] = used[m].get(k, 0) + v
                search(index + 1, admitted + 1)
                for k, v in footprint.items():
                    used[m][k] -= v
        search(index + 1, admitted)

    search(0, 0)
    return best


def _capacity(node: NodeCapacity) -> Usage:
    cap: Usage = {(-1, r): amount for r, amount in node.allocatable.items()}
    cap.update({(-2, r): amount for r, amount in node.totals().items()})
    for numa, resources in node.numa.items():
        for resource, amount in resources.items():
            cap[numa, resource] = amount
    for resource, pools in node.device_pools.items():
        for (numa,), count in pools.items():
            cap[numa, resource] = count
    return cap


def _footprints(instance: Instance, pod_demand: PodDemand, m: int) -> list[Usage]:
    # Every distinct way the pod can sit on node m, as what it takes from each pool.
    demand = pod_demand.demands[m]
    if not demand.admissible:
        return []
    node = instance.nodes[m]
    base: Usage = {(-1, r): amount for r, amount in demand.node_requests.items()}
    if instance.alignment != ALIGNED:
        # Only totals matter: fold every NUMA pool of the node into one.
        totals = node.totals()
        fp = dict(base)
        for resource, amount in demand.peak().items():
            if amount > totals.get(resource, 0):
                return []
            fp[-2, resource] = amount
        return [fp]
    found: list[Usage] = []
    for choice in itertools.product(node.numa_ids, repeat=len(demand.groups)):
        fp = dict(base)
        fp.update(_aligned_peak(demand, choice))
        if fp not in found:
            found.append(fp)
    return found


def _aligned_peak(demand: PodOnNode, choice: Sequence[int]) -> Usage:
    numa_of = {c: numa for group, numa in zip(demand.groups, choice, strict=True) for c in group}
    peak: Usage = {}
    for phase in demand.phases:
        sums: Usage = {}
        for c in phase:
            for resource, amount in demand.containers[c].aligned.items():
                key = (numa_of[c], resource)
                sums[key] = sums.get(key, 0) + amount
        for key, amount in sums.items():
            peak[key] = max(peak.get(key, 0), amount)
    return peak
