"""Kubelet feature gates: which gates exist, their defaults, and a configuration's overrides.

The table follows upstream ``pkg/features/kube_features.go`` (plus the component-base logging
gates) as of Kubernetes v1.35. It lists the gates a kubelet configuration can name; the ones the
resource managers consult (``CPUManagerPolicy*Options``, ``TopologyManagerPolicy*Options``,
``MemoryManager``, ``PodLevelResources*``) are exact, the rest are there so that real-world
configurations which set them are not rejected. Setting a gate works as upstream's
``SetFromMap``: an unknown name is "unrecognized feature gate: X", a gate locked to its default
cannot be flipped, and the special gates ``AllAlpha``/``AllBeta`` switch every alpha (beta) gate
that is not set explicitly.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Final

from numaplane.errors import NumaplaneError

__all__ = [
    "ALL_ALPHA",
    "ALL_BETA",
    "KNOWN_FEATURE_GATES",
    "FeatureGateError",
    "FeatureGates",
    "GateSpec",
    "Stage",
]


class FeatureGateError(NumaplaneError):
    """A feature gate map names an unknown gate or flips a locked one (upstream's wording)."""

    def __init__(self, gate: str, message: str) -> None:
        self.gate = gate
        super().__init__(message)


class Stage(StrEnum):
    """Maturity of a gate (upstream ``featuregate.PreRelease``)."""

    ALPHA = "ALPHA"
    BETA = "BETA"
    GA = ""
    DEPRECATED = "DEPRECATED"


@dataclass(frozen=True)
class GateSpec:
    """A gate's default value, maturity and whether it is locked to its default."""

    default: bool
    stage: Stage
    locked: bool = False


ALL_ALPHA: Final = "AllAlpha"
ALL_BETA: Final = "AllBeta"

_A = GateSpec(default=False, stage=Stage.ALPHA)
_B_ON = GateSpec(default=True, stage=Stage.BETA)
_B_OFF = GateSpec(default=False, stage=Stage.BETA)
_GA = GateSpec(default=True, stage=Stage.GA)
_GA_LOCKED = GateSpec(default=True, stage=Stage.GA, locked=True)
_DEPRECATED_OFF = GateSpec(default=False, stage=Stage.DEPRECATED)
_DEPRECATED_ON = GateSpec(default=True, stage=Stage.DEPRECATED)

KNOWN_FEATURE_GATES: Final[Mapping[str, GateSpec]] = MappingProxyType(
    {
        # -- the resource managers (exact) --------------------------------------------------
        "CPUManagerPolicyAlphaOptions": _A,
        "CPUManagerPolicyBetaOptions": _B_ON,
        "CPUManagerPolicyOptions": _GA_LOCKED,
        "TopologyManagerPolicyAlphaOptions": _A,
        "TopologyManagerPolicyBetaOptions": _B_ON,
        "TopologyManagerPolicyOptions": _GA,
        "MemoryManager": _GA_LOCKED,
        "PodLevelResources": _B_ON,
        "PodLevelResourceManagers": _A,
        "InPlacePodVerticalScaling": _GA_LOCKED,
        "InPlacePodVerticalScalingExclusiveCPUs": _A,
        "InPlacePodVerticalScalingExclusiveMemory": _A,
        "DisableCPUQuotaWithExclusiveCPUs": _B_ON,
        "SidecarContainers": _GA_LOCKED,
        "DevicePluginCDIDevices": _GA_LOCKED,
        "DynamicResourceAllocation": _GA_LOCKED,
        "KubeletPodResourcesDynamicResources": _B_ON,
        "KubeletPodResourcesGet": _B_ON,
        "KubeletPodResourcesListUseActivePods": _DEPRECATED_ON,
        "ResourceHealthStatus": _A,
        # -- other kubelet gates (names and defaults; accepted so real configs load) ----------
        "AllowDNSOnlyNodeCSR": _DEPRECATED_OFF,
        "AllowOverwriteTerminationGracePeriodSeconds": _DEPRECATED_OFF,
        "ChangeContainerStatusOnKubeletRestart": _DEPRECATED_OFF,
        "ClusterTrustBundle": _B_OFF,
        "ClusterTrustBundleProjection": _B_OFF,
        "ContainerCheckpoint": _B_ON,
        "ContainerRestartRules": _B_ON,
        "ContainerStopSignals": _A,
        "CustomCPUCFSQuotaPeriod": _A,
        "EnvFiles": _B_ON,
        "EventedPLEG": _A,
        "ExecProbeTimeout": _GA_LOCKED,
        "GitRepoVolumeDriver": _DEPRECATED_OFF,
        "GracefulNodeShutdown": _B_ON,
        "GracefulNodeShutdownBasedOnPodPriority": _B_ON,
        "HostnameOverride": _B_ON,
        "ImageMaximumGCAge": _GA_LOCKED,
        "ImageVolume": _B_ON,
        "ImageVolumeWithDigest": _A,
        "InPlacePodLevelResourcesVerticalScaling": _A,
        "KubeletCgroupDriverFromCRI": _GA_LOCKED,
        "KubeletCrashLoopBackOffMax": _B_ON,
        "KubeletEnsureSecretPulledImages": _B_ON,
        "KubeletFineGrainedAuthz": _B_ON,
        "KubeletInUserNamespace": _A,
        "KubeletPSI": _B_ON,
        "KubeletRegistrationGetOnExistsOnly": _DEPRECATED_OFF,
        "KubeletSeparateDiskGC": _B_ON,
        "KubeletServiceAccountTokenForCredentialProviders": _B_ON,
        "KubeletTracing": _GA_LOCKED,
        "LocalStorageCapacityIsolationFSQuotaMonitoring": _B_OFF,
        "MemoryQoS": _A,
        "NodeLogQuery": _B_OFF,
        "NodeSwap": _GA,
        "PodAndContainerStatsFromCRI": _A,
        "PodLifecycleSleepActionAllowZero": _B_ON,
        "PodObservedGenerationTracking": _B_ON,
        "PodReadyToStartContainersCondition": _B_ON,
        "ProcMountType": _B_ON,
        "QOSReserved": _A,
        "RecursiveReadOnlyMounts": _GA_LOCKED,
        "ReloadKubeletServerCertificateFile": _B_ON,
        "RotateKubeletServerCertificate": _B_ON,
        "RuntimeClassInImageCriApi": _A,
        "SupplementalGroupsPolicy": _B_ON,
        "SystemdWatchdog": _GA_LOCKED,
        "UserNamespacesSupport": _B_ON,
        "WindowsCPUAndMemoryAffinity": _A,
        "WindowsGracefulNodeShutdown": _B_ON,
        # -- component-base gates the kubelet also registers --------------------------------
        "ComponentFlagz": _A,
        "ComponentStatusz": _A,
        "ContextualLogging": _B_ON,
        "LoggingAlphaOptions": _A,
        "LoggingBetaOptions": _B_ON,
    }
)


def _go_bool(value: bool) -> str:
    return "true" if value else "false"


@dataclass(frozen=True)
class FeatureGates:
    """The gates of one kubelet: upstream defaults overridden by the configuration's map.

    ``overrides`` holds exactly what the configuration set (after validation); ``enabled``
    answers for any known gate.
    """

    overrides: Mapping[str, bool] = field(default_factory=lambda: MappingProxyType({}))

    @classmethod
    def from_map(cls, gates: Mapping[str, bool]) -> FeatureGates:
        """Validate a ``featureGates`` map as upstream ``SetFromMap`` does.

        Raises ``FeatureGateError`` with upstream's message for the first bad entry, in the
        map's order.
        """
        for name, value in gates.items():
            if name in (ALL_ALPHA, ALL_BETA):
                continue
            spec = KNOWN_FEATURE_GATES.get(name)
            if spec is None:
                raise FeatureGateError(name, f"unrecognized feature gate: {name}")
            if spec.locked and spec.default != value:
                raise FeatureGateError(
                    name,
                    f"cannot set feature gate {name} to {_go_bool(value)}, "
                    f"feature is locked to {_go_bool(spec.default)}",
                )
        return cls(MappingProxyType(dict(gates)))

    def enabled(self, name: str) -> bool:
        """Whether gate ``name`` is on; ``KeyError`` for a gate this table does not know."""
        if name in self.overrides:
            return self.overrides[name]
        spec = KNOWN_FEATURE_GATES[name]
        # AllAlpha/AllBeta flip the default of every unlocked gate at that stage.
        if spec.stage is Stage.ALPHA and ALL_ALPHA in self.overrides:
            return self.overrides[ALL_ALPHA]
        if spec.stage is Stage.BETA and ALL_BETA in self.overrides:
            return self.overrides[ALL_BETA]
        return spec.default

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FeatureGates):
            return NotImplemented
        return dict(self.overrides) == dict(other.overrides)

    def __hash__(self) -> int:
        return hash(frozenset(self.overrides.items()))
