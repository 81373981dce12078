"""Named synthetic machines: the shapes the kubelet's own tests use.

Where a kubelet test fixture exists (``pkg/kubelet/cm/cpumanager/policy_test.go``), the preset
numbers CPUs, cores, sockets and NUMA nodes exactly like it; the fixture is named in the
description. Every NUMA node has 64Gi of memory; distances are 10 local, 11 within a socket and
21 across sockets.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from numaplane.topology.errors import UnknownMachineError
from numaplane.topology.model import Machine
from numaplane.topology.synthetic import SyntheticShape


@dataclass(frozen=True, slots=True)
class Preset:
    """A named shape and what it stands for."""

    name: str
    shape: SyntheticShape
    description: str
    fixture: str | None = None

    def build(self) -> Machine:
        """The preset's machine (its ``source`` is ``preset:<name>``)."""
        machine = self.shape.build(self.name)
        return Machine(
            machine.name, machine.cpus, machine.numa_nodes, machine.devices, f"preset:{self.name}"
        )


def _p(name: str, description: str, fixture: str | None = None, **shape: object) -> Preset:
    return Preset(name, SyntheticShape(**shape), description, fixture)  # type: ignore[arg-type]


_ALL = (
    _p(
        "single-socket-ht",
        "1 socket, 4 cores, 2 threads per core (8 CPUs)",
        "topoSingleSocketHT",
        cores_per_numa=4,
        threads_per_core=2,
    ),
    _p(
        "dual-socket-ht",
        "2 sockets of 3 cores, 2 threads per core, cores numbered across sockets in turn",
        "topoDualSocketHT",
        sockets=2,
        cores_per_numa=3,
        threads_per_core=2,
        numbering="interleaved",
    ),
    _p(
        "dual-socket-no-ht",
        "2 sockets of 4 cores without SMT (8 CPUs)",
        "topoDualSocketNoHT",
        sockets=2,
        cores_per_numa=4,
    ),
    _p(
        "triple-socket-ht",
        "3 sockets of 3 cores, sibling threads numbered next to each other",
        "topoTripleSocketHT",
        sockets=3,
        cores_per_numa=3,
        threads_per_core=2,
        numbering="adjacent",
        socket_order=(1, 0, 2),
    ),
    _p(
        "quad-socket-ht",
        "4 sockets of 18 cores, 4 threads per core (288 CPUs); the shape of "
        "topoQuadSocketFourWayHT with regular numbering",
        None,
        sockets=4,
        cores_per_numa=18,
        threads_per_core=4,
    ),
    _p(
        "dual-socket-multi-numa",
        "2 sockets, 2 NUMA nodes per socket, 10 cores per node, 2 threads per core (80 CPUs)",
        "topoDualSocketMultiNumaPerSocketHT",
        sockets=2,
        numa_per_socket=2,
        cores_per_numa=10,
        threads_per_core=2,
    ),
    _p(
        "dual-socket-multi-numa-large",
        "2 sockets, 4 NUMA nodes per socket, 16 cores per node, 2 threads per core (256 CPUs)",
        "topoDualSocketMultiNumaPerSocketHTLarge",
        sockets=2,
        numa_per_socket=4,
        cores_per_numa=16,
        threads_per_core=2,
    ),
    _p(
        "multi-socket-per-numa",
        "4 sockets of 10 cores, 2 sockets per NUMA node, 2 threads per core (80 CPUs)",
        "fakeTopoMultiSocketDualSocketPerNumaHT",
        sockets=4,
        sockets_per_numa=2,
        cores_per_socket=10,
        threads_per_core=2,
    ),
    _p(
        "uncore-single-socket-multi-numa",
        "1 socket, 2 NUMA nodes of 8 cores, 4 cores per last-level cache, no SMT",
        "topoUncoreSingleSocketMultiNuma",
        numa_per_socket=2,
        cores_per_numa=8,
        cores_per_uncore=4,
    ),
    _p(
        "uncore-dual-socket-no-smt",
        "2 sockets of 8 cores, 4 cores per last-level cache, no SMT",
        "topoUncoreDualSocketNoSMT",
        sockets=2,
        cores_per_numa=8,
        cores_per_uncore=4,
    ),
    _p(
        "uncore-single-socket-smt",
        "1 socket of 8 cores, 2 threads per core, 4 cores per last-level cache",
        "topoUncoreSingleSocketSMT",
        cores_per_numa=8,
        threads_per_core=2,
        cores_per_uncore=4,
    ),
    _p(
        "uncore-single-socket-no-smt",
        "1 socket of 32 cores, 4 cores per last-level cache, no SMT",
        "topoUncoreSingleSocketNoSMT",
        cores_per_numa=32,
        cores_per_uncore=4,
    ),
    _p(
        "dual-socket-gpu",
        "2 sockets, 2 NUMA nodes per socket, 8 cores per node, 2 threads, 1 GPU per node",
        None,
        sockets=2,
        numa_per_socket=2,
        cores_per_numa=8,
        threads_per_core=2,
        gpus_per_numa=1,
        hugepages_2mi_per_numa=1024,
        hugepages_1gi_per_numa=4,
    ),
)

PRESETS: Mapping[str, Preset] = MappingProxyType({p.name: p for p in _ALL})
"""Every preset by name, in a stable order."""


def preset(name: str) -> Machine:
    """The machine of the named preset; ``UnknownMachineError`` for an unknown name."""
    found = PRESETS.get(name)
    if found is None:
        raise UnknownMachineError(name, f"unknown preset (known: {', '.join(PRESETS)})")
    return found.build()
