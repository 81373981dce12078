"""Small CPU topologies written out by hand, shared by the CPU manager tests."""

from __future__ import annotations

from numaplane.node.cpumanager.cpu_details import CPUDetails, CPUInfo
from numaplane.node.cpumanager.topology import CPUTopology


def grid(
    sockets: int, numa_per_socket: int, cores_per_numa: int, threads: int, uncore_per_numa: int = 1
) -> CPUTopology:
    """A regular machine; CPU ids run thread-major like Linux (siblings are ``n`` apart)."""
    cores = sockets * numa_per_socket * cores_per_numa
    info: dict[int, CPUInfo] = {}
    for core in range(cores):
        numa = core // cores_per_numa
        socket = numa // numa_per_socket
        uncore = (
            numa * uncore_per_numa + (core % cores_per_numa) * uncore_per_numa // cores_per_numa
        )
        for t in range(threads):
            info[core + t * cores] = CPUInfo(
                numa=numa, socket=socket, core=core, uncore_cache=uncore
            )
    numas = sockets * numa_per_socket
    return CPUTopology(
        num_cpus=cores * threads,
        num_sockets=sockets,
        num_cores=cores,
        details=CPUDetails.of(info),
        num_numa_nodes=numas,
        num_uncore_cache=numas * uncore_per_numa,
    )


DUAL_SOCKET_HT = grid(2, 1, 3, 2)
"""12 CPUs: socket/NUMA 0 = cores 0-2 (CPUs 0-2, 6-8), socket/NUMA 1 = cores 3-5."""

DUAL_SOCKET_MULTI_NUMA_HT = grid(2, 2, 4, 2)
"""32 CPUs: 2 sockets x 2 NUMA nodes x 4 cores x 2 threads."""

SINGLE_SOCKET_UNCORE_HT = grid(1, 1, 8, 2, uncore_per_numa=2)
"""16 CPUs, 8 cores, two uncore caches of 4 cores each."""
