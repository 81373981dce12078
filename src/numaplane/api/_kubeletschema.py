"""The wire shape of a KubeletConfiguration and the field-level checks the kubelet applies.

Private to ``numaplane.api.kubeletconfig``: a pydantic model for the fields numaplane reads (types
as strict as the kubelet's Go decoder: a map of strings does not take numbers), and one function
per upstream check, raising ``FieldError`` with upstream's wording.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Final

from pydantic import BaseModel, ConfigDict, Field

from numaplane.api.featuregates import FeatureGates
from numaplane.api.kubeletvalues import (
    EvictionThreshold,
    MemoryReservation,
    ValueSyntaxError,
    parse_threshold,
)
from numaplane.api.quantity import Quantity, QuantityError

TOPOLOGY_MANAGER_POLICIES: Final = ("none", "best-effort", "restricted", "single-numa-node")
TOPOLOGY_MANAGER_SCOPES: Final = ("container", "pod")
CPU_MANAGER_POLICIES: Final = ("none", "static")
MEMORY_MANAGER_POLICIES: Final = ("None", "Static")
# parseResourceList in cmd/kubelet/app/server.go: what kube/system reserved may name.
RESERVABLE_RESOURCES: Final = ("cpu", "memory", "ephemeral-storage", "pid")


class FieldError(Exception):
    """One failed check: the field path (camelCase, as in the file) and upstream's reason."""

    def __init__(self, field: str, reason: str) -> None:
        self.field = field
        self.reason = reason
        super().__init__(f"{field}: {reason}")


class _Wire(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)


class RawMemoryReservation(_Wire):
    """A ``reservedMemory`` entry as written."""

    numa_node: int = Field(alias="numaNode")
    limits: dict[str, str | int] | None = None


class RawKubeletConfiguration(_Wire):
    """The fields numaplane reads, as written; ``None`` where absent or null."""

    api_version: str | None = Field(default=None, alias="apiVersion")
    kind: str | None = None
    cpu_manager_policy: str | None = Field(default=None, alias="cpuManagerPolicy")
    cpu_manager_policy_options: dict[str, str] | None = Field(
        default=None, alias="cpuManagerPolicyOptions"
    )
    cpu_manager_reconcile_period: str | None = Field(
        default=None, alias="cpuManagerReconcilePeriod"
    )
    reserved_system_cpus: str | None = Field(default=None, alias="reservedSystemCPUs")
    kube_reserved: dict[str, str] | None = Field(default=None, alias="kubeReserved")
    system_reserved: dict[str, str] | None = Field(default=None, alias="systemReserved")
    kube_reserved_cgroup: str | None = Field(default=None, alias="kubeReservedCgroup")
    system_reserved_cgroup: str | None = Field(default=None, alias="systemReservedCgroup")
    memory_manager_policy: str | None = Field(default=None, alias="memoryManagerPolicy")
    reserved_memory: list[RawMemoryReservation] | None = Field(default=None, alias="reservedMemory")
    topology_manager_policy: str | None = Field(default=None, alias="topologyManagerPolicy")
    topology_manager_scope: str | None = Field(default=None, alias="topologyManagerScope")
    topology_manager_policy_options: dict[str, str] | None = Field(
        default=None, alias="topologyManagerPolicyOptions"
    )
    feature_gates: dict[str, bool] | None = Field(default=None, alias="featureGates")
    eviction_hard: dict[str, str] | None = Field(default=None, alias="evictionHard")
    merge_default_eviction_settings: bool | None = Field(
        default=None, alias="mergeDefaultEvictionSettings"
    )


def format_loc(loc: Sequence[str | int]) -> str:
    """A pydantic error location as a field path: ``reservedMemory[0].limits.memory``."""
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path += f".{part}" if path else part
    return path


def check_type_meta(api_version: str | None, kind: str | None, want_api: str, want: str) -> None:
    """``apiVersion`` and ``kind``, when present, must name a v1beta1 KubeletConfiguration."""
    if api_version is not None and api_version != want_api:
        raise FieldError(
            "apiVersion", f'no kind "{want}" is registered for version "{api_version}"'
        )
    if kind is not None and kind != want:
        raise FieldError("kind", f'no kind "{kind}" is registered for version "{want_api}"')


def _go_quoted_list(values: Sequence[str]) -> str:
    return "[" + " ".join(f'"{value}"' for value in values) + "]"


def check_topology_manager(policy: str, scope: str) -> None:
    """Upstream ``ValidateKubeletConfiguration``'s topology manager policy and scope checks."""
    if policy not in TOPOLOGY_MANAGER_POLICIES:
        raise FieldError(
            "topologyManagerPolicy",
            f'invalid configuration: topologyManagerPolicy (--topology-manager-policy) "{policy}"'
            f" must be one of: {_go_quoted_list(TOPOLOGY_MANAGER_POLICIES)}",
        )
    if scope not in TOPOLOGY_MANAGER_SCOPES:
        raise FieldError(
            "topologyManagerScope",
            f'invalid configuration: topologyManagerScope (--topology-manager-scope) "{scope}"'
            ' must be one of: "container", or "pod"',
        )


def _go_map(values: Mapping[str, str]) -> str:
    return "map[" + " ".join(f"{key}:{values[key]}" for key in sorted(values)) + "]"


def check_option_gates(
    gates: FeatureGates, cpu_options: Mapping[str, str], tm_options: Mapping[str, str]
) -> None:
    """Policy options need their umbrella gates (kubelet start-up, ``server.go``).

    Per-option maturity (alpha/beta gates) is checked by the managers in ``numaplane.node``.
    """
    if cpu_options and not gates.enabled("CPUManagerPolicyOptions"):
        raise FieldError(
            "cpuManagerPolicyOptions",
            f"CPU Manager policy options {_go_map(cpu_options)} require feature gates "
            '"CPUManager", "CPUManagerPolicyOptions" enabled',
        )
    if tm_options and not gates.enabled("TopologyManagerPolicyOptions"):
        raise FieldError(
            "topologyManagerPolicyOptions",
            f"topology manager policy options {_go_map(tm_options)} require feature gates "
            '"TopologyManagerPolicyOptions" enabled',
        )


def parse_reserved_list(values: Mapping[str, str], name: str, flag: str) -> dict[str, Quantity]:
    """``kubeReserved``/``systemReserved`` as upstream ``parseResourceList`` reads them."""
    result: dict[str, Quantity] = {}
    for resource, text in values.items():
        where = f"{name}.{resource}"
        if resource not in RESERVABLE_RESOURCES:
            raise FieldError(
                where, f'{flag} value failed to parse: cannot reserve "{resource}" resource'
            )
        try:
            quantity = Quantity.parse(text)
        except QuantityError as err:
            raise FieldError(
                where,
                f'{flag} value failed to parse: failed to parse quantity "{text}" for '
                f'"{resource}" resource: {err.reason}',
            ) from None
        if quantity.sign() < 0:
            raise FieldError(
                where,
                f'{flag} value failed to parse: resource quantity for "{resource}" cannot be '
                f"negative: {text}",
            )
        result[resource] = quantity
    return result


def parse_eviction_hard(values: Mapping[str, str]) -> dict[str, EvictionThreshold]:
    """The effective ``evictionHard`` map as parsed thresholds (ignored ones left out)."""
    result: dict[str, EvictionThreshold] = {}
    for signal, text in values.items():
        try:
            threshold = parse_threshold(signal, text)
        except ValueSyntaxError as err:
            raise FieldError(f"evictionHard.{signal}", str(err)) from None
        if threshold is not None:
            result[signal] = threshold
    return result


def _is_memory_resource(name: str) -> bool:
    return name == "memory" or name.startswith("hugepages-")


def parse_reserved_memory(
    entries: Sequence[RawMemoryReservation],
) -> tuple[MemoryReservation, ...]:
    """``reservedMemory`` with upstream's ``validateReservedMemoryConfiguration`` checks."""
    seen: set[tuple[int, str]] = set()
    result: list[MemoryReservation] = []
    for index, entry in enumerate(entries):
        node = entry.numa_node
        limits: dict[str, Quantity] = {}
        for resource, text in (entry.limits or {}).items():
            where = f"reservedMemory[{index}].limits.{resource}"
            try:
                quantity = Quantity.parse(text)
            except QuantityError as err:
                raise FieldError(where, str(err)) from None
            if not _is_memory_resource(resource):
                raise FieldError(
                    where,
                    f'invalid configuration: the limit type "{resource}" for NUMA node {node} is '
                    "not supported, only [memory hugepages-<HugePageSize>] is accepted",
                )
            if quantity.is_zero():
                raise FieldError(
                    where,
                    f"invalid configuration: reserved memory may not be zero for NUMA node {node}"
                    f' and resource "{resource}"',
                )
            if (node, resource) in seen:
                raise FieldError(
                    where,
                    "invalid configuration: the reserved memory has a duplicate value for NUMA "
                    f'node {node} and resource "{resource}"',
                )
            seen.add((node, resource))
            limits[resource] = quantity
        result.append(MemoryReservation(numa_node=node, limits=MappingProxyType(limits)))
    return tuple(result)


def check_reserved_memory_sums(
    reserved: Sequence[MemoryReservation], allocatable: Mapping[str, Quantity]
) -> None:
    """Per memory type, the reservations must add up to the Node Allocatable reservation.

    Upstream ``validateReservedMemory`` (memory manager); types are visited memory first, then
    hugepages by name, so the first mismatch reported does not depend on map order.
    """
    totals: dict[str, Quantity] = {}
    for reservation in reserved:
        for resource, amount in reservation.limits.items():
            # Upstream adds the running total to the new entry, so the later entry's format wins.
            totals[resource] = amount + totals[resource] if resource in totals else amount
    types = set(totals) | {name for name in allocatable if _is_memory_resource(name)}
    for resource in sorted(types, key=lambda name: (name != "memory", name)):
        expected = Quantity.zero() + allocatable.get(resource, Quantity.zero())
        total = Quantity.zero() + totals.get(resource, Quantity.zero())
        if expected != total:
            raise FieldError(
                "reservedMemory",
                f'the total amount "{total}" of type "{resource}" is not equal to the value '
                f'"{expected}" determined by Node Allocatable feature',
            )
