"""The core/v1 Node a numaplane node registers, built as the kubelet builds its own.

``node_object`` fills what the kubelet's node status setters fill: capacity and allocatable
(``MachineInfo``: the node engine's ``capacity()``/``allocatable()`` plus ``pods`` and, when
known, ``ephemeral-storage``; quantities in the formats the kubelet writes them, memory,
hugepages and storage binary-SI such as ``65849992Ki``, the rest decimal), the four conditions
with the kubelet's reasons and messages in the kubelet's order, the addresses, the kubelet
endpoint, ``nodeInfo`` and the standard labels (``initialNode``).

Pure: the time and the host facts (``NodeSystemInfo``) are arguments; ``NodeSystemInfo.host()``
reads them from this machine once.
"""

from __future__ import annotations

import functools
import platform
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from fractions import Fraction
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

from numaplane import __version__
from numaplane.api.quantity import Quantity, QuantityFormat
from numaplane.node.admission import Node
from numaplane.node.predicate import node_allocatable

__all__ = [
    "CONDITION_TYPES",
    "DEFAULT_MAX_PODS",
    "KUBELET_VERSION",
    "NodeSystemInfo",
    "condition_transitions",
    "format_quantity",
    "node_object",
    "rfc3339",
]

KUBELET_VERSION: Final = f"numaplane-{__version__}"
"""``status.nodeInfo.kubeletVersion`` of every numaplane node."""

DEFAULT_MAX_PODS: Final = 110
"""The kubelet's default ``maxPods``: the ``pods`` capacity."""

LABEL_HOSTNAME: Final = "kubernetes.io/hostname"
LABEL_OS: Final = "kubernetes.io/os"
LABEL_ARCH: Final = "kubernetes.io/arch"
LABEL_OS_BETA: Final = "beta.kubernetes.io/os"
LABEL_ARCH_BETA: Final = "beta.kubernetes.io/arch"
ATTACH_DETACH_ANNOTATION: Final = "volumes.kubernetes.io/controller-managed-attach-detach"

# Resources the kubelet (cAdvisor) reports in binary SI; every other one is decimal.
_BINARY: Final = ("memory", "ephemeral-storage")
_HUGEPAGES: Final = "hugepages-"

# The kubelet's conditions in the order it sets them (defaultNodeStatusFuncs): type, then the
# reason and message while the kubelet sees no pressure.
_PRESSURE_CONDITIONS: Final = (
    ("MemoryPressure", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
    ("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    ("PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
)
CONDITION_TYPES: Final = (*(c[0] for c in _PRESSURE_CONDITIONS), "Ready")
READY_REASON: Final = "KubeletReady"
READY_MESSAGE: Final = "kubelet is posting ready status"
NOT_READY_REASON: Final = "KubeletNotReady"

# Go's GOARCH names of Python's platform.machine() answers.
_GOARCH: Final = MappingProxyType(
    {
        "x86_64": "amd64",
        "amd64": "amd64",
        "aarch64": "arm64",
        "arm64": "arm64",
        "ppc64le": "ppc64le",
        "s390x": "s390x",
        "riscv64": "riscv64",
        "i686": "386",
        "i386": "386",
        "armv7l": "arm",
    }
)


@dataclass(frozen=True)
class NodeSystemInfo:
    """``status.nodeInfo``: what the kubelet reads from the host (cAdvisor, os-release)."""

    machine_id: str = ""
    system_uuid: str = ""
    boot_id: str = ""
    kernel_version: str = ""
    os_image: str = "numaplane"
    container_runtime_version: str = f"numaplane://{__version__}"
    operating_system: str = "linux"
    architecture: str = "amd64"

    @staticmethod
    @functools.cache
    def host() -> NodeSystemInfo:
        """This machine's facts (read once: they do not change while the process runs)."""
        return NodeSystemInfo(
            machine_id=_read_first_line("/etc/machine-id"),
            system_uuid=_read_first_line("/sys/class/dmi/id/product_uuid").lower(),
            boot_id=_read_first_line("/proc/sys/kernel/random/boot_id"),
            kernel_version=platform.release(),
            os_image=_os_image(),
            operating_system=platform.system().lower() or "linux",
            architecture=_GOARCH.get(platform.machine().lower(), platform.machine().lower()),
        )

    def to_dict(self) -> dict[str, str]:
        """The ``nodeInfo`` object (``kubeProxyVersion`` is deprecated and left empty)."""
        return {
            "machineID": self.machine_id,
            "systemUUID": self.system_uuid,
            "bootID": self.boot_id,
            "kernelVersion": self.kernel_version,
            "osImage": self.os_image,
            "containerRuntimeVersion": self.container_runtime_version,
            "kubeletVersion": KUBELET_VERSION,
            "kubeProxyVersion": "",
            "operatingSystem": self.operating_system,
            "architecture": self.architecture,
        }


def _read_first_line(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace").strip().splitlines()[0]
    except (OSError, IndexError):
        return ""


def _os_image() -> str:
    # The kubelet shows PRETTY_NAME of /etc/os-release ("Unknown" without one).
    try:
        text = Path("/etc/os-release").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "Unknown"
    found = re.search(r'^PRETTY_NAME="?([^"\n]*)"?$', text, re.MULTILINE)
    return found.group(1) if found else "Unknown"


def rfc3339(moment: datetime) -> str:
    """A ``metav1.Time`` as the API writes it: UTC, whole seconds."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def format_quantity(resource: str, amount: Quantity) -> str:
    """``amount`` in the format the kubelet writes ``resource`` in node status."""
    binary = resource in _BINARY or resource.startswith(_HUGEPAGES)
    fmt = QuantityFormat.BINARY_SI if binary else QuantityFormat.DECIMAL_SI
    return str(Quantity(Fraction(amount.amount), fmt))


def node_resources(
    node: Node,
    *,
    max_pods: int = DEFAULT_MAX_PODS,
    ephemeral_storage_bytes: int | None = None,
) -> tuple[dict[str, Quantity], dict[str, Quantity]]:
    """Capacity and allocatable as the kubelet's ``MachineInfo`` setter computes them: the node
    engine's own, plus ``pods`` (never reserved) and ``ephemeral-storage`` when the root
    filesystem's size is given (minus kube/system reservations and the ``nodefs.available``
    hard eviction threshold)."""
    capacity = dict(node.capacity())
    allocatable = dict(node.allocatable())
    pods = Quantity.parse(max_pods)
    capacity["pods"] = allocatable["pods"] = pods
    if ephemeral_storage_bytes is not None:
        storage = {"ephemeral-storage": Quantity.parse(ephemeral_storage_bytes)}
        reservation = node.config.node_allocatable_reservation(storage)
        capacity.update(storage)
        allocatable.update(node_allocatable(storage, reservation))
    return capacity, allocatable


def node_object(
    name: str,
    node: Node,
    *,
    now: datetime,
    labels: Mapping[str, str] = MappingProxyType({}),
    annotations: Mapping[str, str] = MappingProxyType({}),
    address: str = "127.0.0.1",
    hostname: str | None = None,
    kubelet_port: int = 0,
    ready: bool = True,
    not_ready_message: str = "container runtime is not ready",
    system: NodeSystemInfo | None = None,
    max_pods: int = DEFAULT_MAX_PODS,
    ephemeral_storage_bytes: int | None = None,
) -> dict[str, Any]:
    """The Node ``name`` as the kubelet registers and reports it (read ``node`` under the
    agent's lock). Every condition's transition time is ``now``; ``condition_transitions``
    keeps the earlier ones of a status already posted."""
    info = system if system is not None else NodeSystemInfo.host()
    capacity, allocatable = node_resources(
        node, max_pods=max_pods, ephemeral_storage_bytes=ephemeral_storage_bytes
    )
    stamp = rfc3339(now)
    conditions = [
        _condition(kind, "False", reason, message, stamp)
        for kind, reason, message in _PRESSURE_CONDITIONS
    ]
    if ready:
        conditions.append(_condition("Ready", "True", READY_REASON, READY_MESSAGE, stamp))
    else:
        conditions.append(_condition("Ready", "False", NOT_READY_REASON, not_ready_message, stamp))
    host = hostname if hostname is not None else name
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {**standard_labels(host, info), **labels},
            "annotations": {ATTACH_DETACH_ANNOTATION: "true", **annotations},
        },
        "spec": {},
        "status": {
            "capacity": {k: format_quantity(k, q) for k, q in sorted(capacity.items())},
            "allocatable": {k: format_quantity(k, q) for k, q in sorted(allocatable.items())},
            "conditions": conditions,
            "addresses": [
                {"type": "InternalIP", "address": address},
                {"type": "Hostname", "address": host},
            ],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": kubelet_port}},
            "nodeInfo": info.to_dict(),
        },
    }


def standard_labels(hostname: str, system: NodeSystemInfo) -> dict[str, str]:
    """The labels the kubelet puts on its Node (``initialNode``), stable and beta forms."""
    return {
        LABEL_ARCH_BETA: system.architecture,
        LABEL_OS_BETA: system.operating_system,
        LABEL_ARCH: system.architecture,
        LABEL_HOSTNAME: hostname,
        LABEL_OS: system.operating_system,
    }


def _condition(kind: str, status: str, reason: str, message: str, stamp: str) -> dict[str, str]:
    return {
        "type": kind,
        "status": status,
        "lastHeartbeatTime": stamp,
        "lastTransitionTime": stamp,
        "reason": reason,
        "message": message,
    }


def condition_transitions(
    new: list[dict[str, Any]], old: list[dict[str, Any]] | None
) -> list[dict[str, Any]]:
    """``new`` with each condition's ``lastTransitionTime`` taken from ``old`` when its status
    did not change (the kubelet moves it only on a transition)."""
    before = {c.get("type"): c for c in old or ()}
    out = []
    for condition in new:
        previous = before.get(condition["type"])
        if previous is not None and previous.get("status") == condition["status"]:
            kept = previous.get("lastTransitionTime")
            if kept:
                condition = {**condition, "lastTransitionTime": kept}
        out.append(condition)
    return out
