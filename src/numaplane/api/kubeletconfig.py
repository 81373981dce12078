"""The kubelet's ``KubeletConfiguration`` (``kubelet.config.k8s.io/v1beta1``), manager fields.

``load_kubelet_config`` reads a YAML or JSON file, applies upstream's defaults and validates it
the way the kubelet does before its CPU, memory and topology managers start (config validation,
``--reserved-cpus`` handling, reserved-resource and eviction parsing, and the managers'
constructor checks that need no machine). Every failure is one ``KubeletConfigError`` line
naming the file, the field and upstream's reason. Fields outside the resource managers are
accepted and ignored. Checks that need the machine (does a NUMA node exist, are the reserved
CPUs online, policy options) belong to ``numaplane.node``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

import yaml
from pydantic import ValidationError

from numaplane.api import _kubeletschema as schema
from numaplane.api.featuregates import FeatureGateError, FeatureGates
from numaplane.api.kubeletvalues import (
    DEFAULT_EVICTION_HARD,
    EvictionThreshold,
    MemoryReservation,
    ValueSyntaxError,
    parse_go_duration,
    parse_threshold,
)
from numaplane.api.quantity import Quantity
from numaplane.api.yamlbounds import AliasError, check_text_aliases
from numaplane.cpuset import CPUSet, CPUSetParseError
from numaplane.errors import InputError

__all__ = [
    "API_VERSION",
    "KIND",
    "KubeletConfigError",
    "KubeletConfiguration",
    "MemoryReservation",
    "kubelet_config_from_dict",
    "kubelet_config_from_text",
    "load_kubelet_config",
]

API_VERSION: Final = "kubelet.config.k8s.io/v1beta1"
KIND: Final = "KubeletConfiguration"

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PID = "pid"


class KubeletConfigError(InputError):
    """A kubelet configuration is unusable; ``str()`` is ``<file>: <field>: <reason>``."""


def _empty() -> Mapping[Any, Any]:
    return MappingProxyType({})


def _frozen(mapping: Mapping[Any, Any]) -> Mapping[Any, Any]:
    return MappingProxyType(dict(mapping))


def _default_eviction_hard() -> Mapping[str, EvictionThreshold]:
    return schema.parse_eviction_hard(dict(DEFAULT_EVICTION_HARD))


@dataclass(frozen=True)
class KubeletConfiguration:
    """The resource-manager settings of a kubelet, defaulted and validated.

    ``kube_reserved`` and ``system_reserved`` hold what the kubelet uses: when
    ``reserved_system_cpus`` is set, the kubelet drops ``kubeReserved.cpu`` and sets
    ``systemReserved.cpu`` to the size of that set, and so do these fields. ``eviction_hard``
    holds the parsed hard thresholds after defaulting (the thresholds "0%" and "100%", which
    upstream ignores, are absent).
    """

    cpu_manager_policy: str = "none"
    cpu_manager_policy_options: Mapping[str, str] = field(default_factory=_empty)
    cpu_manager_reconcile_period: timedelta = timedelta(seconds=10)
    reserved_system_cpus: CPUSet = field(default_factory=CPUSet)
    kube_reserved: Mapping[str, Quantity] = field(default_factory=_empty)
    system_reserved: Mapping[str, Quantity] = field(default_factory=_empty)
    kube_reserved_cgroup: str = ""
    system_reserved_cgroup: str = ""
    memory_manager_policy: str = "None"
    reserved_memory: tuple[MemoryReservation, ...] = ()
    topology_manager_policy: str = "none"
    topology_manager_scope: str = "container"
    topology_manager_policy_options: Mapping[str, str] = field(default_factory=_empty)
    feature_gates: FeatureGates = field(default_factory=FeatureGates)
    eviction_hard: Mapping[str, EvictionThreshold] = field(default_factory=_default_eviction_hard)
    merge_default_eviction_settings: bool = False
    source: str = field(default="<defaults>", compare=False)

    @classmethod
    def default(cls) -> KubeletConfiguration:
        """The configuration of a kubelet given an empty file."""
        return cls()

    def to_dict(self) -> dict[str, Any]:
        """A KubeletConfiguration document of this configuration (JSON values only):
        ``kubelet_config_from_dict(config.to_dict()) == config``.

        Written from the fields, so it holds what the kubelet uses after defaulting (the
        ``--reserved-cpus`` override already applied, every hard eviction threshold spelled
        out); the node snapshot carries a configuration to another process this way.
        """
        eviction = {signal: _threshold_text(t) for signal, t in self.eviction_hard.items()}
        if self.merge_default_eviction_settings:
            # A default threshold the file switched off ("0%") must stay off when re-merged.
            for signal in DEFAULT_EVICTION_HARD:
                eviction.setdefault(signal, "0%")
        doc: dict[str, Any] = {
            "apiVersion": API_VERSION,
            "kind": KIND,
            "cpuManagerPolicy": self.cpu_manager_policy,
            "cpuManagerPolicyOptions": dict(self.cpu_manager_policy_options),
            "cpuManagerReconcilePeriod": _duration_text(self.cpu_manager_reconcile_period),
            "reservedSystemCPUs": str(self.reserved_system_cpus),
            "kubeReserved": {name: str(q) for name, q in self.kube_reserved.items()},
            "systemReserved": {name: str(q) for name, q in self.system_reserved.items()},
            "kubeReservedCgroup": self.kube_reserved_cgroup,
            "systemReservedCgroup": self.system_reserved_cgroup,
            "memoryManagerPolicy": self.memory_manager_policy,
            "reservedMemory": [
                {"numaNode": r.numa_node, "limits": {name: str(q) for name, q in r.limits.items()}}
                for r in self.reserved_memory
            ],
            "topologyManagerPolicy": self.topology_manager_policy,
            "topologyManagerScope": self.topology_manager_scope,
            "topologyManagerPolicyOptions": dict(self.topology_manager_policy_options),
            "featureGates": dict(self.feature_gates.overrides),
            "evictionHard": eviction,
            "mergeDefaultEvictionSettings": self.merge_default_eviction_settings,
        }
        return doc

    def reserved_cpu_count(self) -> int:
        """How many CPUs the static CPU policy reserves.

        The size of ``reserved_system_cpus`` when set, otherwise kube-reserved plus
        system-reserved CPU in millicores divided by 1000, rounded up.
        """
        if len(self.reserved_system_cpus) > 0:
            return len(self.reserved_system_cpus)
        millis = sum(
            (reserved[CPU].milli_value() for reserved in self._reservations() if CPU in reserved),
            0,
        )
        return math.ceil(millis / 1000)

    def node_allocatable_reservation(
        self, capacity: Mapping[str, Quantity] | None = None
    ) -> dict[str, Quantity]:
        """What Node Allocatable holds back: system + kube reserved + the hard eviction threshold.

        Like upstream ``GetNodeAllocatableReservation``: per resource, zero amounts are left out,
        and with ``capacity`` only the machine's resources count and percentage thresholds are
        resolved against it. Without ``capacity``, every reserved resource but ``pid`` counts;
        a percentage ``nodefs.available`` threshold
        is left out of ``ephemeral-storage``, and a percentage ``memory.available`` threshold
        raises ``KubeletConfigError`` (the memory manager's reservation depends on it).
        """
        eviction = self._eviction_reservation(capacity)
        names: set[str] = set(capacity) if capacity is not None else set()
        if capacity is None:
            for reserved in (*self._reservations(), eviction):
                names.update(reserved)
            # A PID reservation limits processes, not a capacity the node reports.
            names.discard(PID)
        result: dict[str, Quantity] = {}
        for name in sorted(names):
            # The first non-zero addend decides the text format, as Quantity.Add does upstream.
            total = Quantity.zero()
            for reserved in (self.system_reserved, self.kube_reserved, eviction):
                if name in reserved:
                    total = total + reserved[name]
            if not total.is_zero():
                result[name] = total
        return result

    def reserved_memory_per_node(self) -> dict[int, dict[str, int]]:
        """``reservedMemory`` as NUMA node -> resource -> bytes (upstream ``convertReserved``).

        Only the nodes the configuration names appear; a later entry for the same node and
        resource replaces an earlier one.
        """
        result: dict[int, dict[str, int]] = {}
        for reservation in self.reserved_memory:
            per_node = result.setdefault(reservation.numa_node, {})
            for name, amount in reservation.limits.items():
                per_node[name] = amount.value()
        return result

    def _reservations(self) -> tuple[Mapping[str, Quantity], Mapping[str, Quantity]]:
        return (self.system_reserved, self.kube_reserved)

    def _eviction_reservation(self, capacity: Mapping[str, Quantity] | None) -> dict[str, Quantity]:
        result: dict[str, Quantity] = {}
        for signal, resource in (
            ("memory.available", MEMORY),
            ("nodefs.available", EPHEMERAL_STORAGE),
        ):
            threshold = self.eviction_hard.get(signal)
            if threshold is None:
                continue
            if threshold.quantity is not None:
                result[resource] = threshold.quantity
            elif capacity is not None:
                result[resource] = threshold.resolve(capacity.get(resource, Quantity.zero()))
            elif resource == MEMORY:
                raise KubeletConfigError(
                    self.source,
                    "the hard eviction threshold is a percentage of the node's memory; the "
                    "memory reservation needs the machine's memory capacity",
                    f"evictionHard.{signal}",
                )
        return result


def _duration_text(period: timedelta) -> str:
    # Whole microseconds: what a timedelta holds, and a unit Go's ParseDuration reads back.
    return f"{period // timedelta(microseconds=1)}us"


def _threshold_text(threshold: EvictionThreshold) -> str:
    if threshold.quantity is not None:
        return str(threshold.quantity)
    assert threshold.percentage is not None
    # The shortest decimal percentage that parses back to the same float32 fraction.
    for digits in range(1, 18):
        text = f"{threshold.percentage * 100:.{digits}g}%"
        back = parse_threshold(threshold.signal, text)
        if back is not None and back.percentage == threshold.percentage:
            return text
    raise ValueError(f"no percentage text for {threshold!r}")  # pragma: no cover


def load_kubelet_config(path: str | Path) -> KubeletConfiguration:
    """Read, default and validate a KubeletConfiguration YAML or JSON file."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as err:
        raise KubeletConfigError(source, f"cannot read the file: {err.strerror or err}") from None
    except UnicodeDecodeError as err:
        raise KubeletConfigError(source, f"the file is not UTF-8 text: {err.reason}") from None
    return kubelet_config_from_text(text, source)


def kubelet_config_from_text(text: str, source: str) -> KubeletConfiguration:
    """Default and validate a KubeletConfiguration given as YAML or JSON text."""
    try:
        document = yaml.safe_load(text)
        check_text_aliases(document, text)
    except AliasError as err:
        raise KubeletConfigError(source, err.reason) from None
    except yaml.YAMLError as err:
        raise KubeletConfigError(source, _yaml_reason(err)) from None
    except RecursionError:
        raise KubeletConfigError(source, "not valid YAML: nested too deeply") from None
    return kubelet_config_from_dict(document, source)


def kubelet_config_from_dict(obj: object, source: str = "<config>") -> KubeletConfiguration:
    """Default and validate an already-decoded KubeletConfiguration object."""
    if obj is None:
        raise KubeletConfigError(source, "the document is empty; expected a KubeletConfiguration")
    if not isinstance(obj, Mapping):
        raise KubeletConfigError(
            source, f"expected a KubeletConfiguration mapping, got {type(obj).__name__}"
        )
    try:
        raw = schema.RawKubeletConfiguration.model_validate(dict(obj))
    except ValidationError as err:
        first = err.errors()[0]
        raise KubeletConfigError(source, first["msg"], schema.format_loc(first["loc"])) from None
    try:
        return _build(raw, source)
    except schema.FieldError as err:
        raise KubeletConfigError(source, err.reason, err.field) from None


def _yaml_reason(err: yaml.YAMLError) -> str:
    if isinstance(err, yaml.MarkedYAMLError) and err.problem_mark is not None:
        mark = err.problem_mark
        return f"not valid YAML: {err.problem} (line {mark.line + 1}, column {mark.column + 1})"
    # A reader error (a control character, bad bytes) has no problem mark: keep its first line.
    return f"not valid YAML: {str(err).splitlines()[0] if str(err) else type(err).__name__}"


def _build(raw: schema.RawKubeletConfiguration, source: str) -> KubeletConfiguration:
    """Apply the kubelet's start-up checks in the kubelet's order, then build the value."""
    schema.check_type_meta(raw.api_version, raw.kind, API_VERSION, KIND)
    # ValidateKubeletConfiguration: gates first (SetFromMap stops at the first bad gate).
    try:
        gates = FeatureGates.from_map(raw.feature_gates or {})
    except FeatureGateError as err:
        raise schema.FieldError(f"featureGates.{err.gate}", str(err)) from None
    tm_policy = raw.topology_manager_policy or "none"
    tm_scope = raw.topology_manager_scope or "container"
    schema.check_topology_manager(tm_policy, tm_scope)
    reserved_cpus = _reserved_system_cpus(raw)
    reserved_memory = schema.parse_reserved_memory(raw.reserved_memory or [])
    # Kubelet start-up (server.go): option gates, --reserved-cpus override, reserved lists.
    tm_options = dict(raw.topology_manager_policy_options or {})
    cpu_options = dict(raw.cpu_manager_policy_options or {})
    schema.check_option_gates(gates, cpu_options, tm_options)
    kube_text = dict(raw.kube_reserved or {})
    system_text = dict(raw.system_reserved or {})
    if len(reserved_cpus) > 0:
        kube_text.pop(CPU, None)
        system_text[CPU] = str(len(reserved_cpus))
    kube_reserved = schema.parse_reserved_list(kube_text, "kubeReserved", "--kube-reserved")
    system_reserved = schema.parse_reserved_list(system_text, "systemReserved", "--system-reserved")
    eviction_text = dict(raw.eviction_hard) if raw.eviction_hard is not None else None
    merge = bool(raw.merge_default_eviction_settings)
    if eviction_text is None:
        eviction_text = dict(DEFAULT_EVICTION_HARD)
    elif merge:
        eviction_text = {**DEFAULT_EVICTION_HARD, **eviction_text}
    eviction_hard = schema.parse_eviction_hard(eviction_text)
    period = timedelta(seconds=10)
    if raw.cpu_manager_reconcile_period:
        try:
            period = parse_go_duration(raw.cpu_manager_reconcile_period)
        except ValueSyntaxError as err:
            raise schema.FieldError("cpuManagerReconcilePeriod", str(err)) from None
        if period == timedelta(0):
            period = timedelta(seconds=10)
    config = KubeletConfiguration(
        cpu_manager_policy=raw.cpu_manager_policy or "none",
        cpu_manager_policy_options=_frozen(cpu_options),
        cpu_manager_reconcile_period=period,
        reserved_system_cpus=reserved_cpus,
        kube_reserved=_frozen(kube_reserved),
        system_reserved=_frozen(system_reserved),
        kube_reserved_cgroup=raw.kube_reserved_cgroup or "",
        system_reserved_cgroup=raw.system_reserved_cgroup or "",
        memory_manager_policy=raw.memory_manager_policy or "None",
        reserved_memory=reserved_memory,
        topology_manager_policy=tm_policy,
        topology_manager_scope=tm_scope,
        topology_manager_policy_options=_frozen(tm_options),
        feature_gates=gates,
        eviction_hard=_frozen(eviction_hard),
        merge_default_eviction_settings=merge,
        source=source,
    )
    # Container manager: the CPU manager is built before the memory manager.
    _check_cpu_manager(config)
    _check_memory_manager(config)
    return config


def _reserved_system_cpus(raw: schema.RawKubeletConfiguration) -> CPUSet:
    text = raw.reserved_system_cpus or ""
    if not text:
        return CPUSet()
    if raw.system_reserved_cgroup or raw.kube_reserved_cgroup:
        raise schema.FieldError(
            "reservedSystemCPUs",
            "invalid configuration: can't use reservedSystemCPUs (--reserved-cpus) with "
            "systemReservedCgroup (--system-reserved-cgroup) or kubeReservedCgroup "
            "(--kube-reserved-cgroup)",
        )
    try:
        return CPUSet.parse(text)
    except CPUSetParseError as err:
        raise schema.FieldError(
            "reservedSystemCPUs",
            "invalid configuration: unable to parse reservedSystemCPUs (--reserved-cpus) "
            f"{text}, error: {err}",
        ) from None


def _check_cpu_manager(config: KubeletConfiguration) -> None:
    policy = config.cpu_manager_policy
    if policy not in schema.CPU_MANAGER_POLICIES:
        raise schema.FieldError("cpuManagerPolicy", f'unknown policy: "{policy}"')
    if policy != "static":
        return
    # Zero reservations are dropped from Node Allocatable, so a missing and a zero CPU
    # reservation both end here, with the message real kubelets print.
    if CPU not in config.node_allocatable_reservation():
        raise schema.FieldError(
            "cpuManagerPolicy",
            "[cpumanager] unable to determine reserved CPU resources for static policy",
        )


def _check_memory_manager(config: KubeletConfiguration) -> None:
    policy = config.memory_manager_policy
    if policy not in schema.MEMORY_MANAGER_POLICIES:
        raise schema.FieldError("memoryManagerPolicy", f'unknown policy: "{policy}"')
    if policy != "Static":
        return
    memory_threshold = config.eviction_hard.get("memory.available")
    if memory_threshold is not None and memory_threshold.quantity is None:
        # A percentage of node memory: only the node layer, which knows the machine, can
        # compute the reservation the reserved memory must add up to.
        return
    allocatable = config.node_allocatable_reservation()
    schema.check_reserved_memory_sums(config.reserved_memory, allocatable)
    for index, reservation in enumerate(config.reserved_memory):
        for name, amount in reservation.limits.items():
            if amount.amount.denominator != 1:
                raise schema.FieldError(
                    f"reservedMemory[{index}].limits.{name}",
                    "could not covert a variable of type Quantity to int64",
                )
    total = sum((r.limits[MEMORY].value() for r in config.reserved_memory if MEMORY in r.limits), 0)
    if total <= 0:
        raise schema.FieldError(
            "reservedMemory", "[memorymanager] you should specify the system reserved memory"
        )
