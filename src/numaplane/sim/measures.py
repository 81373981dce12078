"""The measures of a replay, computed from the node engine's placements (no I/O, no clock).

Definitions (also in ``docs/traces.md``):

- **alignment**: among admitted containers that hold anything NUMA-pinned (exclusive CPUs,
  Static-manager memory blocks or devices with NUMA locality) and keep running (app containers
  and restartable sidecars), the share whose pinned CPUs, memory and devices all lie on one NUMA
  node; 1.0 when no container pins anything.
- **stranded CPUs**: free allocatable exclusive CPUs that the smallest whole-CPU request among
  the trace's Guaranteed containers (pods under ``pod`` scope) cannot use. Under an aligning
  Topology Manager policy (``single-numa-node``, ``restricted``) a request must fit one NUMA
  node, so the free CPUs of every NUMA node with fewer free CPUs than that request are
  stranded; under ``none``/``best-effort`` a request may span NUMA nodes, so a node's free CPUs
  are stranded only when all of them together are fewer. Measured at every rejection and at the
  end of the run; the result is the largest value seen. Zero without a static CPU Manager or
  without Guaranteed whole-CPU requests.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from numaplane.api.kubeletconfig import KubeletConfiguration
from numaplane.api.pod import Pod, QOSClass
from numaplane.node.admission import Admission, Node
from numaplane.node.utilization import cpu_scores, memory_scores
from numaplane.sim.results import NumaUse

__all__ = [
    "ALIGNING_POLICIES",
    "container_alignment",
    "numa_utilization",
    "percentile",
    "smallest_cpu_request",
    "stranded",
]

ALIGNING_POLICIES = frozenset({"single-numa-node", "restricted"})


def container_alignment(
    admission: Admission,
    cpu_numa: Mapping[int, int],
    device_numa: Mapping[str, Mapping[str, tuple[int, ...]]],
) -> tuple[int, int]:
    """``(aligned, counted)`` containers of an admitted pod (see the module doc)."""
    aligned = counted = 0
    for c in admission.containers:
        if c.init and not c.restartable:
            continue
        numa: set[int] = {cpu_numa[cpu] for cpu in c.exclusive_cpus}
        if c.memory_numa_nodes:
            numa.update(c.memory_numa_nodes)
        for resource, ids in c.devices.items():
            per_device = device_numa.get(resource, {})
            for device_id in ids:
                numa.update(per_device.get(device_id, ()))
        if not numa:
            continue
        counted += 1
        aligned += len(numa) == 1
    return aligned, counted


def smallest_cpu_request(pods: Iterable[Pod], pod_scope: bool) -> int | None:
    """The smallest whole-CPU request of a Guaranteed container (or pod, under pod scope)."""
    best: int | None = None
    for pod in pods:
        if pod.qos_class is not QOSClass.GUARANTEED:
            continue
        sizes: list[int] = []
        for container in pod.containers:
            millis = container.requests_of("cpu").milli_value()
            if millis > 0 and millis % 1000 == 0:
                sizes.append(millis // 1000)
        if not sizes:
            continue
        size = sum(sizes) if pod_scope else min(sizes)
        best = size if best is None else min(best, size)
    return best


def stranded(
    free_per_numa: Sequence[Mapping[int, int]], smallest: int | None, aligned: bool
) -> int:
    """Stranded CPUs over all nodes given each node's free exclusive CPUs per NUMA node."""
    if smallest is None:
        return 0
    total = 0
    for free in free_per_numa:
        if aligned:
            total += sum(n for n in free.values() if n < smallest)
        else:
            node_free = sum(free.values())
            total += node_free if node_free < smallest else 0
    return total


def numa_utilization(name: str, node: Node) -> dict[str, NumaUse]:
    """Share of each NUMA node's allocatable exclusive CPUs and Static memory in use."""
    cpu = cpu_scores(node.cpu_manager) or {}
    memory = memory_scores(node.memory_manager) or {}
    out: dict[str, NumaUse] = {}
    for numa in sorted(set(node.machine.numa_ids) | set(cpu) | set(memory)):
        out[f"{name}/{numa}"] = NumaUse(
            float(cpu.get(numa, 0)) / 100.0, float(memory.get(numa, 0)) / 100.0
        )
    return out


def is_aligning(config: KubeletConfiguration) -> bool:
    """Whether exclusive CPUs must come from one NUMA node under ``config``."""
    return config.topology_manager_policy in ALIGNING_POLICIES


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile ``q`` (0..100) of already sorted values; 0 for none."""
    if not sorted_values:
        return 0.0
    rank = max(1, math.ceil(q / 100.0 * len(sorted_values)))
    return sorted_values[rank - 1]
