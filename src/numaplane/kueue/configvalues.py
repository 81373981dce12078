"""The values of Kueue's ``Configuration`` (``config.kueue.x-k8s.io/v1beta2``) that apply to
numaplane's Kueue, with upstream's defaults (``apis/config/v1beta2/defaults.go``):
``KueueConfig()`` is what Kueue runs with when no file is given. Reading and checking a file is
:mod:`numaplane.kueue.config`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

API_VERSION: Final = "config.kueue.x-k8s.io/v1beta2"
API_VERSION_V1BETA1: Final = "config.kueue.x-k8s.io/v1beta1"
KIND: Final = "Configuration"
DEFAULT_NAMESPACE: Final = "kueue-system"
LEADER_ELECTION_ID: Final = "c1f6bfd2.kueue.x-k8s.io"
DISPATCHER_ALL_AT_ONCE: Final = "kueue.x-k8s.io/multikueue-dispatcher-all-at-once"
DISPATCHER_INCREMENTAL: Final = "kueue.x-k8s.io/multikueue-dispatcher-incremental"
LESS_THAN_OR_EQUAL_TO_FINAL_SHARE: Final = "LessThanOrEqualToFinalShare"
LESS_THAN_INITIAL_SHARE: Final = "LessThanInitialShare"

#: Upstream's built-in job frameworks (``jobframework.GetIntegrationsList``), sorted.
KNOWN_FRAMEWORKS: Final = (
    "batch/job",
    "deployment",
    "jobset.x-k8s.io/jobset",
    "kubeflow.org/jaxjob",
    "kubeflow.org/mpijob",
    "kubeflow.org/paddlejob",
    "kubeflow.org/pytorchjob",
    "kubeflow.org/tfjob",
    "kubeflow.org/xgboostjob",
    "leaderworkerset.x-k8s.io/leaderworkerset",
    "pod",
    "ray.io/raycluster",
    "ray.io/rayjob",
    "ray.io/rayservice",
    "sparkoperator.k8s.io/sparkapplication",
    "statefulset",
    "trainer.kubeflow.org/trainjob",
    "workload.codeflare.dev/appwrapper",
)
VALID_PREEMPTION_STRATEGY_SETS: Final = (
    (LESS_THAN_OR_EQUAL_TO_FINAL_SHARE,),
    (LESS_THAN_INITIAL_SHARE,),
    (LESS_THAN_OR_EQUAL_TO_FINAL_SHARE, LESS_THAN_INITIAL_SHARE),
)


@dataclass(frozen=True, slots=True)
class RequeuingStrategy:
    """``waitForPodsReady.requeuingStrategy``; ``backoff_limit_count`` None requeues forever."""

    timestamp: str = "Eviction"
    backoff_limit_count: int | None = None
    backoff_base_seconds: int = 60
    backoff_max_seconds: int = 3600


@dataclass(frozen=True, slots=True)
class WaitForPodsReadyConfig:
    """``waitForPodsReady``; durations in seconds (``recovery_timeout`` 0 disables it)."""

    enable: bool = True
    timeout: float = 1800.0
    block_admission: bool = False
    recovery_timeout: float = 1800.0
    requeuing_strategy: RequeuingStrategy = field(default_factory=RequeuingStrategy)


@dataclass(frozen=True, slots=True)
class FairSharingConfig:
    """``fairSharing``: enabled by its presence (v1beta2) or ``enable`` (v1beta1)."""

    enable: bool = False
    preemption_strategies: tuple[str, ...] = (
        LESS_THAN_OR_EQUAL_TO_FINAL_SHARE,
        LESS_THAN_INITIAL_SHARE,
    )


@dataclass(frozen=True, slots=True)
class IntegrationsConfig:
    """``integrations``."""

    frameworks: tuple[str, ...] = ("batch/job",)
    external_frameworks: tuple[str, ...] = ()
    label_keys_to_copy: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class MultiKueueConfig:
    """``multiKueue``; durations in seconds (``gc_interval`` 0 disables the GC)."""

    gc_interval: float = 60.0
    origin: str = "multikueue"
    worker_lost_timeout: float = 900.0
    dispatcher_name: str = DISPATCHER_ALL_AT_ONCE
    #: ``incrementalDispatcherConfig.stepSize``; set (3 by default) only for the incremental one.
    incremental_step_size: int | None = None
    external_frameworks: tuple[str, ...] = ()
    cluster_profile: Mapping[str, Any] | None = None


#: ``controller.groupKindConcurrency`` of the Configuration Kueue ships (kueue#12440).
SHIPPED_CONCURRENCY: Final[Mapping[str, int]] = {
    "Workload.kueue.x-k8s.io": 10,
    "LocalQueue.kueue.x-k8s.io": 5,
    "ClusterQueue.kueue.x-k8s.io": 5,
    "Job.batch": 5,
}


@dataclass(frozen=True, slots=True)
class LeaderElectionConfig:
    """``leaderElection`` (component-base's recommended defaults); durations in seconds."""

    leader_elect: bool = True
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    resource_lock: str = "leases"
    resource_name: str = LEADER_ELECTION_ID
    #: "" means the configuration's ``namespace``.
    resource_namespace: str = ""


def default_managed_jobs_selector(namespace: str) -> Mapping[str, Any]:
    """Upstream's default ``managedJobsNamespaceSelector``: every namespace but kube-system and
    Kueue's own."""
    return {
        "matchExpressions": [
            {
                "key": "kubernetes.io/metadata.name",
                "operator": "NotIn",
                "values": ["kube-system", namespace],
            }
        ]
    }


@dataclass(frozen=True, slots=True)
class KueueConfig:
    """The configuration numaplane's Kueue runs with (upstream's defaults when built empty)."""

    namespace: str = DEFAULT_NAMESPACE
    manage_jobs_without_queue_name: bool = False
    #: None: upstream's default, every namespace but ``kube-system`` and ``namespace``.
    managed_jobs_namespace_selector: Mapping[str, Any] | None = None
    wait_for_pods_ready: WaitForPodsReadyConfig = field(default_factory=WaitForPodsReadyConfig)
    integrations: IntegrationsConfig = field(default_factory=IntegrationsConfig)
    fair_sharing: FairSharingConfig = field(default_factory=FairSharingConfig)
    multi_kueue: MultiKueueConfig = field(default_factory=MultiKueueConfig)
    leader_election: LeaderElectionConfig = field(default_factory=LeaderElectionConfig)
    feature_gates: Mapping[str, bool] = field(default_factory=dict)
    client_qps: float = 1000.0
    client_burst: int = 1000
    #: ``controller.groupKindConcurrency``: reconciles at once per ``Kind.group``.
    group_kind_concurrency: Mapping[str, int] = field(default_factory=dict)
    exclude_resource_prefixes: tuple[str, ...] = ()
    #: ``resources.quotaCheckStrategy``, honoured with the ``QuotaCheckStrategy`` gate (alpha,
    #: off): ``BlockUndeclared`` otherwise.
    quota_check_strategy: str = "BlockUndeclared"
    #: ``objectRetentionPolicies.workloads``: seconds, None keeps the workloads.
    delete_finished_workloads_after: float | None = None
    delete_deactivated_workloads_after: float | None = None

    def jobs_namespace_selector(self) -> Mapping[str, Any]:
        """``managedJobsNamespaceSelector`` after defaulting."""
        if self.managed_jobs_namespace_selector is not None:
            return self.managed_jobs_namespace_selector
        return default_managed_jobs_selector(self.namespace)

    def leader_election_namespace(self) -> str:
        """Where the leader-election Lease lives."""
        return self.leader_election.resource_namespace or self.namespace

    def concurrency(self, group_kind: str) -> int:
        """How many reconciles of ``group_kind`` (``Kind.group``) run at once: the
        configuration's ``controller.groupKindConcurrency``, else what Kueue's shipped
        configuration sets (kueue#12440: Workload 10, LocalQueue and ClusterQueue 5, Job 5)."""
        return self.group_kind_concurrency.get(group_kind) or SHIPPED_CONCURRENCY.get(group_kind, 1)

    @property
    def wait_for_pods_ready_enabled(self) -> bool:
        """upstream ``waitforpodsready.Enabled``: configured and not disabled by the gate."""
        return self.wait_for_pods_ready.enable and not self.feature_gates.get(
            "DisableWaitForPodsReady", False
        )
