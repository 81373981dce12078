"""The machine the agent enforces must be this host.

The agent pins real processes to the CPUs its machine names. A machine with CPUs this host
lacks (a bigger synthetic shape, another host's capture) would admit pods onto CPUs that
cannot be pinned: every start would fail in the child, and the pods crash-loop. The agent
refuses to start instead, naming the machine and the CPUs it lacks here.
"""

from __future__ import annotations

from pathlib import Path

from numaplane.cpuset import CPUSet, CPUSetParseError
from numaplane.errors import InputError
from numaplane.topology.model import Machine

#: The kernel's list of online CPUs.
ONLINE_CPUS = Path("/sys/devices/system/cpu/online")


class HostMismatchError(InputError):
    """The configured machine has CPUs this host does not have online."""


def host_online_cpus(path: Path = ONLINE_CPUS) -> CPUSet | None:
    """The host's online CPUs; ``None`` when the kernel's list cannot be read."""
    try:
        with open(path, encoding="ascii") as handle:
            text = handle.read(65536).strip()
        return CPUSet.parse(text)
    except (OSError, UnicodeDecodeError, CPUSetParseError):
        return None


def check_machine_is_host(machine: Machine, online: CPUSet | None) -> None:
    """Raise ``HostMismatchError`` when ``machine`` has online CPUs ``online`` lacks.

    ``online`` ``None`` (unknown) passes: a start that fails then shows why in the pod.
    """
    if online is None:
        return
    missing = machine.all_cpu_ids - online
    if not missing:
        return
    label = machine.source or machine.name
    raise HostMismatchError(
        f"--machine {label}",
        f"CPUs {missing} of this machine are not online on this host (online: {online}); "
        "the agent runs pods on this host's CPUs, so its machine must be this host "
        "(--machine / or a capture of it)",
    )
