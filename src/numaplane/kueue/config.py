"""Kueue's ``Configuration`` (``config.kueue.x-k8s.io/v1beta2``), the fields that apply to
numaplane's Kueue, with upstream's defaults (``apis/config/v1beta2/defaults.go``) and checks
(``pkg/config/validation.go``).

``load_config`` reads a YAML or JSON file; ``config_from_dict`` takes a decoded document;
``KueueConfig()`` is the configuration Kueue runs with when no file is given (upstream defaults
an empty ``Configuration`` the same way). Fields upstream has that do not apply here (webhook,
metrics, certificates, visibility server) are accepted and ignored, as upstream's non-strict
decoder ignores unknown ones. Every failure is one :class:`KueueConfigError` line naming the
file, the field and the reason.

Upstream's HEAD defaults ``waitForPodsReady`` on (timeout 30m) unless the
``DisableWaitForPodsReady`` feature gate is set; v1beta1's ``waitForPodsReady.enable`` and
``fairSharing.enable`` are read too, so a v1beta1 file keeps its meaning.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from numaplane.api.kubeletvalues import ValueSyntaxError, parse_go_duration
from numaplane.api.selectors import SelectorError, label_selector_from_dict
from numaplane.api.yamlbounds import AliasError, check_text_aliases
from numaplane.kueue.configvalues import (
    API_VERSION,
    API_VERSION_V1BETA1,
    DEFAULT_NAMESPACE,
    DISPATCHER_ALL_AT_ONCE,
    DISPATCHER_INCREMENTAL,
    KIND,
    KNOWN_FRAMEWORKS,
    LEADER_ELECTION_ID,
    VALID_PREEMPTION_STRATEGY_SETS,
    FairSharingConfig,
    IntegrationsConfig,
    KueueConfig,
    LeaderElectionConfig,
    MultiKueueConfig,
    RequeuingStrategy,
    WaitForPodsReadyConfig,
    default_managed_jobs_selector,
)
from numaplane.kueue.errors import KueueConfigError

__all__ = [
    "API_VERSION",
    "FairSharingConfig",
    "IntegrationsConfig",
    "KueueConfig",
    "LeaderElectionConfig",
    "MultiKueueConfig",
    "RequeuingStrategy",
    "WaitForPodsReadyConfig",
    "config_from_dict",
    "load_config",
]


class _Doc:
    """Typed reads of a configuration document; every failure names the file and field."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, path: str, reason: str) -> KueueConfigError:
        return KueueConfigError(self.source, reason, path or None)

    def section(self, parent: Mapping[str, Any], key: str, path: str) -> Mapping[str, Any] | None:
        value = parent.get(key)
        if value is None:
            return None
        if not isinstance(value, Mapping):
            raise self.fail(path, f"expected a mapping, got {_kind(value)}")
        return value

    def typed(
        self, parent: Mapping[str, Any], key: str, path: str, kind: type, default: Any
    ) -> Any:
        value = parent.get(key)
        if value is None:
            return default
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            return float(value)
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise self.fail(path, f"expected {kind.__name__}, got {_kind(value)}")
        return value

    def duration(self, parent: Mapping[str, Any], key: str, path: str) -> float | None:
        value = parent.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            raise self.fail(path, f"expected a duration such as 5m, got {_kind(value)}")
        try:
            seconds = parse_go_duration(value).total_seconds()
        except ValueSyntaxError as err:
            raise self.fail(path, str(err)) from None
        if seconds < 0:
            raise self.fail(path, f"{value}: must be greater than or equal to 0")
        return seconds

    def non_negative(self, parent: Mapping[str, Any], key: str, path: str) -> int | None:
        value: int | None = self.typed(parent, key, path, int, None)
        if value is not None and value < 0:
            raise self.fail(path, f"{value}: must be greater than or equal to 0")
        return value

    def strings(self, parent: Mapping[str, Any], key: str, path: str) -> tuple[str, ...] | None:
        value = parent.get(key)
        if value is None:
            return None
        if isinstance(value, str) or not isinstance(value, Sequence):
            raise self.fail(path, f"expected a list of strings, got {_kind(value)}")
        for i, item in enumerate(value):
            if not isinstance(item, str):
                raise self.fail(f"{path}[{i}]", f"expected a string, got {_kind(item)}")
        return tuple(value)


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__


def _supported(value: str, allowed: Sequence[str]) -> str:
    wanted = ", ".join(f'"{a}"' for a in allowed)
    return f'Unsupported value: "{value}": supported values: {wanted}'


def load_config(path: str | Path) -> KueueConfig:
    """Read, default and validate a Kueue ``Configuration`` YAML or JSON file."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as err:
        raise KueueConfigError(source, f"cannot read the file: {err.strerror or err}") from None
    except UnicodeDecodeError as err:
        raise KueueConfigError(source, f"the file is not UTF-8 text: {err.reason}") from None
    try:
        document = yaml.safe_load(text)
        check_text_aliases(document, text)
    except AliasError as err:
        raise KueueConfigError(source, err.reason) from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        problem = getattr(err, "problem", None) or type(err).__name__
        raise KueueConfigError(source, f"not valid YAML: {problem}{where}") from None
    except RecursionError:
        raise KueueConfigError(source, "not valid YAML: nested too deeply") from None
    return config_from_dict(document, source)


def config_from_dict(obj: object, source: str = "<config>") -> KueueConfig:
    """Default and validate an already-decoded ``Configuration``."""
    if not isinstance(obj, Mapping):
        got = "the document is empty" if obj is None else f"got {_kind(obj)}"
        raise KueueConfigError(source, f"expected a Kueue Configuration mapping; {got}")
    doc = _Doc(source)
    api_version = obj.get("apiVersion")
    if api_version not in (API_VERSION, API_VERSION_V1BETA1):
        raise doc.fail("apiVersion", f'expected "{API_VERSION}", got {api_version!r}')
    if obj.get("kind") != KIND:
        raise doc.fail("kind", f'expected "{KIND}", got {obj.get("kind")!r}')
    v1beta1 = api_version == API_VERSION_V1BETA1
    namespace = doc.typed(obj, "namespace", "namespace", str, "") or DEFAULT_NAMESPACE
    gates = _feature_gates(doc, obj)
    selector = doc.section(obj, "managedJobsNamespaceSelector", "managedJobsNamespaceSelector")
    checked = selector if selector is not None else default_managed_jobs_selector(namespace)
    _check_selector(doc, checked, namespace)
    client = doc.section(obj, "clientConnection", "clientConnection") or {}
    resources = doc.section(obj, "resources", "resources") or {}
    retention = doc.section(obj, "objectRetentionPolicies", "objectRetentionPolicies") or {}
    workloads = doc.section(retention, "workloads", "objectRetentionPolicies.workloads") or {}
    rpath = "objectRetentionPolicies.workloads"
    return KueueConfig(
        namespace=namespace,
        manage_jobs_without_queue_name=doc.typed(
            obj, "manageJobsWithoutQueueName", "manageJobsWithoutQueueName", bool, False
        ),
        managed_jobs_namespace_selector=selector,
        wait_for_pods_ready=_wait_for_pods_ready(doc, obj, v1beta1),
        integrations=_integrations(doc, obj),
        fair_sharing=_fair_sharing(doc, obj),
        multi_kueue=_multi_kueue(doc, obj),
        leader_election=_leader_election(doc, obj),
        feature_gates=gates,
        client_qps=doc.typed(client, "qps", "clientConnection.qps", float, 1000.0),
        client_burst=doc.typed(client, "burst", "clientConnection.burst", int, 1000),
        group_kind_concurrency=_group_kind_concurrency(doc, obj),
        exclude_resource_prefixes=doc.strings(
            resources, "excludeResourcePrefixes", "resources.excludeResourcePrefixes"
        )
        or (),
        quota_check_strategy=_quota_check_strategy(doc, resources, gates),
        delete_finished_workloads_after=doc.duration(
            workloads, "afterFinished", f"{rpath}.afterFinished"
        ),
        delete_deactivated_workloads_after=doc.duration(
            workloads, "afterDeactivatedByKueue", f"{rpath}.afterDeactivatedByKueue"
        ),
    )


def _quota_check_strategy(
    doc: _Doc, resources: Mapping[str, Any], gates: Mapping[str, bool]
) -> str:
    path = "resources.quotaCheckStrategy"
    strategy: str = doc.typed(resources, "quotaCheckStrategy", path, str, "")
    if not gates.get("QuotaCheckStrategy", False) or not strategy:
        # Upstream ignores the field while the gate is off.
        return "BlockUndeclared"
    allowed = ("IgnoreUndeclared", "BlockUndeclared")
    if strategy not in allowed:
        raise doc.fail(path, _supported(strategy, allowed))
    if strategy == "IgnoreUndeclared" and resources.get("excludeResourcePrefixes"):
        raise doc.fail(
            path,
            "excludeResourcePrefixes is not allowed when quotaCheckStrategy is IgnoreUndeclared",
        )
    return strategy


def _feature_gates(doc: _Doc, obj: Mapping[str, Any]) -> dict[str, bool]:
    gates = doc.section(obj, "featureGates", "featureGates") or {}
    out: dict[str, bool] = {}
    for name, value in gates.items():
        if not isinstance(value, bool):
            raise doc.fail(f"featureGates.{name}", f"expected a boolean, got {_kind(value)}")
        out[str(name)] = value
    return out


def _check_selector(doc: _Doc, selector: Mapping[str, Any], namespace: str) -> None:
    path = "managedJobsNamespaceSelector"
    try:
        parsed = label_selector_from_dict(selector)
    except SelectorError as err:
        raise doc.fail(path, str(err)) from None
    for protected in ("kube-system", namespace):
        # Kueue must never manage its own namespace or the system one.
        if parsed.matches({"kubernetes.io/metadata.name": protected}):
            raise doc.fail(path, f'should not match the "{protected}" namespace')


def _wait_for_pods_ready(
    doc: _Doc, obj: Mapping[str, Any], v1beta1: bool
) -> WaitForPodsReadyConfig:
    section = doc.section(obj, "waitForPodsReady", "waitForPodsReady")
    if section is None:
        # v1beta1 left it off unless enabled; v1beta2's defaulting always sets it.
        return WaitForPodsReadyConfig(enable=not v1beta1)
    path = "waitForPodsReady"
    enable = doc.typed(section, "enable", f"{path}.enable", bool, not v1beta1)
    timeout = doc.duration(section, "timeout", f"{path}.timeout") or 1800.0
    recovery = doc.duration(section, "recoveryTimeout", f"{path}.recoveryTimeout")
    strategy = doc.section(section, "requeuingStrategy", f"{path}.requeuingStrategy") or {}
    spath = f"{path}.requeuingStrategy"
    timestamp = doc.typed(strategy, "timestamp", f"{spath}.timestamp", str, "Eviction")
    if timestamp not in ("Creation", "Eviction"):
        raise doc.fail(f"{spath}.timestamp", _supported(timestamp, ("Creation", "Eviction")))
    base = doc.non_negative(strategy, "backoffBaseSeconds", f"{spath}.backoffBaseSeconds")
    most = doc.non_negative(strategy, "backoffMaxSeconds", f"{spath}.backoffMaxSeconds")
    return WaitForPodsReadyConfig(
        enable=enable,
        timeout=timeout,
        block_admission=doc.typed(section, "blockAdmission", f"{path}.blockAdmission", bool, False),
        recovery_timeout=timeout if recovery is None else recovery,
        requeuing_strategy=RequeuingStrategy(
            timestamp=timestamp,
            backoff_limit_count=doc.non_negative(
                strategy, "backoffLimitCount", f"{spath}.backoffLimitCount"
            ),
            # cmp.Or: an explicit 0 takes the default, as upstream's defaulting does.
            backoff_base_seconds=base or 60,
            backoff_max_seconds=most or 3600,
        ),
    )


def _integrations(doc: _Doc, obj: Mapping[str, Any]) -> IntegrationsConfig:
    section = doc.section(obj, "integrations", "integrations") or {}
    path = "integrations"
    frameworks = doc.strings(section, "frameworks", f"{path}.frameworks") or ("batch/job",)
    seen: set[str] = set()
    for i, name in enumerate(frameworks):
        if name not in KNOWN_FRAMEWORKS:
            raise doc.fail(f"{path}.frameworks[{i}]", _supported(name, KNOWN_FRAMEWORKS))
        if name in seen:
            raise doc.fail(f"{path}.frameworks[{i}]", f'Duplicate value: "{name}"')
        seen.add(name)
    external = doc.strings(section, "externalFrameworks", f"{path}.externalFrameworks") or ()
    for i, name in enumerate(external):
        if name.count(".") < 2:
            raise doc.fail(
                f"{path}.externalFrameworks[{i}]",
                f"{name}: must be format, 'Kind.version.group.com'",
            )
    return IntegrationsConfig(
        frameworks=frameworks,
        external_frameworks=external,
        label_keys_to_copy=doc.strings(section, "labelKeysToCopy", f"{path}.labelKeysToCopy") or (),
    )


def _fair_sharing(doc: _Doc, obj: Mapping[str, Any]) -> FairSharingConfig:
    section = doc.section(obj, "fairSharing", "fairSharing")
    if section is None:
        return FairSharingConfig()
    path = "fairSharing.preemptionStrategies"
    explicit = section.get("enable")
    enable = doc.typed(section, "enable", "fairSharing.enable", bool, True)
    strategies = doc.strings(section, "preemptionStrategies", path)
    if not strategies:
        if explicit is None:
            # v1beta2: the section enables fair sharing, and then the strategies are required.
            raise doc.fail(path, "Required value: must be specified")
        return FairSharingConfig(enable=enable)
    if strategies not in VALID_PREEMPTION_STRATEGY_SETS:
        sets = [",".join(s) for s in VALID_PREEMPTION_STRATEGY_SETS]
        raise doc.fail(path, _supported(",".join(strategies), sets))
    return FairSharingConfig(enable=enable, preemption_strategies=strategies)


def _multi_kueue(doc: _Doc, obj: Mapping[str, Any]) -> MultiKueueConfig:
    section = doc.section(obj, "multiKueue", "multiKueue") or {}
    path = "multiKueue"
    dispatcher = doc.typed(section, "dispatcherName", f"{path}.dispatcherName", str, "")
    dispatcher = dispatcher or DISPATCHER_ALL_AT_ONCE
    idc = doc.section(section, "incrementalDispatcherConfig", f"{path}.incrementalDispatcherConfig")
    step: int | None = None
    if idc is not None and dispatcher != DISPATCHER_INCREMENTAL:
        raise doc.fail(
            f"{path}.incrementalDispatcherConfig",
            "incrementalDispatcherConfig is only valid when dispatcherName is set to the "
            "incremental dispatcher",
        )
    if dispatcher == DISPATCHER_INCREMENTAL:
        step = doc.typed(
            idc or {}, "stepSize", f"{path}.incrementalDispatcherConfig.stepSize", int, 0
        )
        if step is not None and step < 0:
            raise doc.fail(
                f"{path}.incrementalDispatcherConfig.stepSize",
                f"{step}: must be greater than or equal to 1",
            )
        step = step or 3
    external: list[str] = []
    items = section.get("externalFrameworks")
    if items is not None and not isinstance(items, list):
        raise doc.fail(f"{path}.externalFrameworks", f"expected a list, got {_kind(items)}")
    for i, item in enumerate(items or ()):
        ipath = f"{path}.externalFrameworks[{i}]"
        if not isinstance(item, Mapping):
            raise doc.fail(ipath, f"expected a mapping, got {_kind(item)}")
        name = doc.typed(item, "name", f"{ipath}.name", str, "")
        if name.count(".") < 2:
            raise doc.fail(f"{ipath}.name", f"{name}: must be in 'kind.version.group' format")
        if name in external:
            raise doc.fail(f"{ipath}.name", f'Duplicate value: "{name}"')
        external.append(name)
    gc = doc.duration(section, "gcInterval", f"{path}.gcInterval")
    lost = doc.duration(section, "workerLostTimeout", f"{path}.workerLostTimeout")
    origin = doc.typed(section, "origin", f"{path}.origin", str, "") or "multikueue"
    if len(origin) > 63:
        raise doc.fail(f"{path}.origin", f"{origin}: must be no more than 63 characters")
    return MultiKueueConfig(
        gc_interval=60.0 if gc is None else gc,
        origin=origin,
        worker_lost_timeout=900.0 if lost is None else lost,
        dispatcher_name=dispatcher,
        incremental_step_size=step,
        external_frameworks=tuple(external),
        cluster_profile=doc.section(section, "clusterProfile", f"{path}.clusterProfile"),
    )


def _group_kind_concurrency(doc: _Doc, obj: Mapping[str, Any]) -> dict[str, int]:
    controller = doc.section(obj, "controller", "controller") or {}
    path = "controller.groupKindConcurrency"
    section = doc.section(controller, "groupKindConcurrency", path) or {}
    out: dict[str, int] = {}
    for name in section:
        count = doc.typed(section, name, f"{path}.{name}", int, 0)
        if count < 1:
            raise doc.fail(f"{path}.{name}", f"must be at least 1, got {count}")
        out[str(name)] = count
    return out


def _leader_election(doc: _Doc, obj: Mapping[str, Any]) -> LeaderElectionConfig:
    section = doc.section(obj, "leaderElection", "leaderElection") or {}
    path = "leaderElection"

    def seconds(key: str, default: float) -> float:
        value = doc.duration(section, key, f"{path}.{key}")
        return value or default

    return LeaderElectionConfig(
        leader_elect=doc.typed(section, "leaderElect", f"{path}.leaderElect", bool, True),
        lease_duration=seconds("leaseDuration", 15.0),
        renew_deadline=seconds("renewDeadline", 10.0),
        retry_period=seconds("retryPeriod", 2.0),
        resource_lock=doc.typed(section, "resourceLock", f"{path}.resourceLock", str, "")
        or "leases",
        resource_name=doc.typed(section, "resourceName", f"{path}.resourceName", str, "")
        or LEADER_ELECTION_ID,
        resource_namespace=doc.typed(
            section, "resourceNamespace", f"{path}.resourceNamespace", str, ""
        ),
    )
