"""Kueue's Configuration file: upstream's defaults, the fields that apply, v1beta1 switches, and
one-line errors naming the file and field."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from numaplane.kueue.config import config_from_dict, load_config
from numaplane.kueue.configvalues import (
    DISPATCHER_INCREMENTAL,
    FairSharingConfig,
    KueueConfig,
    MultiKueueConfig,
    RequeuingStrategy,
    WaitForPodsReadyConfig,
)
from numaplane.kueue.errors import KueueConfigError

HEAD = "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"


def write(tmp_path: Path, body: str, head: str = HEAD) -> Path:
    path = tmp_path / "kueue.yaml"
    path.write_text(head + body, encoding="utf-8")
    return path


def test_an_empty_configuration_takes_upstream_defaults(tmp_path: Path) -> None:
    got = load_config(write(tmp_path, ""))
    assert got == KueueConfig()
    assert got.namespace == "kueue-system"
    assert got.integrations.frameworks == ("batch/job",)
    assert got.jobs_namespace_selector() == {
        "matchExpressions": [
            {
                "key": "kubernetes.io/metadata.name",
                "operator": "NotIn",
                "values": ["kube-system", "kueue-system"],
            }
        ]
    }
    assert got.leader_election.resource_name == "c1f6bfd2.kueue.x-k8s.io"
    assert got.leader_election_namespace() == "kueue-system"
    # v1beta2 HEAD defaulting always sets waitForPodsReady (30m), blockAdmission off.
    assert got.wait_for_pods_ready_enabled
    assert got.wait_for_pods_ready == WaitForPodsReadyConfig(
        enable=True, timeout=1800.0, recovery_timeout=1800.0
    )
    assert not got.fair_sharing.enable
    assert got.multi_kueue == MultiKueueConfig(
        gc_interval=60.0,
        origin="multikueue",
        worker_lost_timeout=900.0,
        dispatcher_name="kueue.x-k8s.io/multikueue-dispatcher-all-at-once",
    )
    # What Kueue's shipped configuration sets since kueue#12440.
    assert got.concurrency("Workload.kueue.x-k8s.io") == 10
    assert got.concurrency("ClusterQueue.kueue.x-k8s.io") == 5
    assert got.concurrency("Cohort.kueue.x-k8s.io") == 1


def test_every_field_that_applies(tmp_path: Path) -> None:
    body = """
namespace: kueue-ns
manageJobsWithoutQueueName: true
managedJobsNamespaceSelector:
  matchLabels: {team: a}
waitForPodsReady:
  timeout: 10m
  blockAdmission: true
  recoveryTimeout: 3m
  requeuingStrategy:
    timestamp: Creation
    backoffLimitCount: 5
    backoffBaseSeconds: 10
    backoffMaxSeconds: 100
integrations:
  frameworks: [batch/job, pod]
  externalFrameworks: [Foo.v1.example.com]
  labelKeysToCopy: [team]
fairSharing:
  preemptionStrategies: [LessThanInitialShare]
multiKueue:
  gcInterval: 0s
  origin: mgr-a
  workerLostTimeout: 5m
  dispatcherName: kueue.x-k8s.io/multikueue-dispatcher-incremental
  externalFrameworks: [{name: Foo.v1.example.com}]
leaderElection:
  leaderElect: false
  resourceNamespace: elsewhere
featureGates: {DisableWaitForPodsReady: true, MultiKueue: true}
clientConnection: {qps: 50, burst: 100}
controller:
  groupKindConcurrency: {Workload.kueue.x-k8s.io: 32, Job.batch: 2}
resources:
  excludeResourcePrefixes: [networking.example.com/]
objectRetentionPolicies:
  workloads: {afterFinished: 1h}
"""
    got = load_config(write(tmp_path, body))
    assert got.namespace == "kueue-ns"
    assert got.manage_jobs_without_queue_name
    assert got.jobs_namespace_selector() == {"matchLabels": {"team": "a"}}
    assert got.wait_for_pods_ready == WaitForPodsReadyConfig(
        enable=True,
        timeout=600.0,
        block_admission=True,
        recovery_timeout=180.0,
        requeuing_strategy=RequeuingStrategy("Creation", 5, 10, 100),
    )
    # The gate wins over the section.
    assert not got.wait_for_pods_ready_enabled
    assert got.integrations.frameworks == ("batch/job", "pod")
    assert got.integrations.external_frameworks == ("Foo.v1.example.com",)
    assert got.integrations.label_keys_to_copy == ("team",)
    assert got.fair_sharing == FairSharingConfig(True, ("LessThanInitialShare",))
    assert got.multi_kueue == MultiKueueConfig(
        gc_interval=0.0,
        origin="mgr-a",
        worker_lost_timeout=300.0,
        dispatcher_name=DISPATCHER_INCREMENTAL,
        incremental_step_size=3,
        external_frameworks=("Foo.v1.example.com",),
    )
    assert not got.leader_election.leader_elect
    assert got.leader_election_namespace() == "elsewhere"
    assert got.feature_gates == {"DisableWaitForPodsReady": True, "MultiKueue": True}
    assert (got.client_qps, got.client_burst) == (50.0, 100)
    assert got.concurrency("Workload.kueue.x-k8s.io") == 32
    assert got.concurrency("Job.batch") == 2
    assert got.concurrency("LocalQueue.kueue.x-k8s.io") == 5
    assert got.exclude_resource_prefixes == ("networking.example.com/",)
    assert got.delete_finished_workloads_after == 3600.0
    assert got.delete_deactivated_workloads_after is None


def test_v1beta1_switches() -> None:
    base = {"apiVersion": "config.kueue.x-k8s.io/v1beta1", "kind": "Configuration"}
    assert not config_from_dict(base).wait_for_pods_ready_enabled
    on = config_from_dict({**base, "waitForPodsReady": {"enable": True, "timeout": "5m"}})
    assert on.wait_for_pods_ready_enabled
    assert on.wait_for_pods_ready.timeout == 300.0
    off = config_from_dict({**base, "waitForPodsReady": {"enable": False}})
    assert not off.wait_for_pods_ready_enabled
    fair = config_from_dict({**base, "fairSharing": {"enable": True}})
    assert fair.fair_sharing == FairSharingConfig(
        True, ("LessThanOrEqualToFinalShare", "LessThanInitialShare")
    )
    assert not config_from_dict({**base, "fairSharing": {"enable": False}}).fair_sharing.enable


def test_quota_check_strategy_needs_its_gate() -> None:
    base = {"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration"}
    resources = {"resources": {"quotaCheckStrategy": "IgnoreUndeclared"}}
    assert config_from_dict({**base, **resources}).quota_check_strategy == "BlockUndeclared"
    gated = {**base, **resources, "featureGates": {"QuotaCheckStrategy": True}}
    assert config_from_dict(gated).quota_check_strategy == "IgnoreUndeclared"
    assert KueueConfig().quota_check_strategy == "BlockUndeclared"


def test_zero_timeout_and_backoff_take_the_defaults() -> None:
    got = config_from_dict(
        {
            "apiVersion": "config.kueue.x-k8s.io/v1beta2",
            "kind": "Configuration",
            "waitForPodsReady": {
                "timeout": "0s",
                "recoveryTimeout": "0s",
                "requeuingStrategy": {"backoffBaseSeconds": 0},
            },
        }
    )
    assert got.wait_for_pods_ready.timeout == 1800.0
    # recoveryTimeout 0s is kept: it disables the recovery check.
    assert got.wait_for_pods_ready.recovery_timeout == 0.0
    assert got.wait_for_pods_ready.requeuing_strategy.backoff_base_seconds == 60


@dataclass(frozen=True)
class BadCase:
    name: str
    text: str
    field: str | None
    reason: str


BAD = [
    BadCase("not yaml", "a: [1, 2\n", None, "not valid YAML"),
    BadCase(
        "zero concurrency",
        HEAD + "controller: {groupKindConcurrency: {Workload.kueue.x-k8s.io: 0}}\n",
        "controller.groupKindConcurrency.Workload.kueue.x-k8s.io",
        "must be at least 1, got 0",
    ),
    BadCase(
        "concurrency not a number",
        HEAD + "controller: {groupKindConcurrency: {Job.batch: many}}\n",
        "controller.groupKindConcurrency.Job.batch",
        "expected int, got",
    ),
    BadCase("empty", "", None, "the document is empty"),
    BadCase("a list", "- 1\n", None, "got a list"),
    BadCase(
        "wrong api version",
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Configuration\n",
        "apiVersion",
        'expected "config.kueue.x-k8s.io/v1beta2"',
    ),
    BadCase("wrong kind", "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Kueue\n", "kind", ""),
    BadCase(
        "bad duration",
        HEAD + "waitForPodsReady: {timeout: soon}\n",
        "waitForPodsReady.timeout",
        'time: invalid duration "soon"',
    ),
    BadCase(
        "negative duration",
        HEAD + "multiKueue: {gcInterval: -1m}\n",
        "multiKueue.gcInterval",
        "must be greater than or equal to 0",
    ),
    BadCase(
        "bad requeuing timestamp",
        HEAD + "waitForPodsReady: {requeuingStrategy: {timestamp: Now}}\n",
        "waitForPodsReady.requeuingStrategy.timestamp",
        'Unsupported value: "Now"',
    ),
    BadCase(
        "negative backoff",
        HEAD + "waitForPodsReady: {requeuingStrategy: {backoffLimitCount: -1}}\n",
        "waitForPodsReady.requeuingStrategy.backoffLimitCount",
        "must be greater than or equal to 0",
    ),
    BadCase(
        "unknown framework",
        HEAD + "integrations: {frameworks: [batch/job, cron]}\n",
        "integrations.frameworks[1]",
        'Unsupported value: "cron": supported values: "batch/job", ',
    ),
    BadCase(
        "duplicate framework",
        HEAD + "integrations: {frameworks: [pod, pod]}\n",
        "integrations.frameworks[1]",
        'Duplicate value: "pod"',
    ),
    BadCase(
        "fair sharing without strategies",
        HEAD + "fairSharing: {}\n",
        "fairSharing.preemptionStrategies",
        "Required value",
    ),
    BadCase(
        "fair sharing strategies in the wrong order",
        HEAD + "fairSharing: {preemptionStrategies: [LessThanInitialShare, "
        "LessThanOrEqualToFinalShare]}\n",
        "fairSharing.preemptionStrategies",
        "Unsupported value",
    ),
    BadCase(
        "selector matching kube-system",
        HEAD + "managedJobsNamespaceSelector: {}\n",
        "managedJobsNamespaceSelector",
        'should not match the "kube-system" namespace',
    ),
    BadCase(
        "incremental config without the incremental dispatcher",
        HEAD + "multiKueue: {incrementalDispatcherConfig: {stepSize: 2}}\n",
        "multiKueue.incrementalDispatcherConfig",
        "only valid when dispatcherName is set to the incremental dispatcher",
    ),
    BadCase(
        "unknown quota check strategy",
        HEAD + "featureGates: {QuotaCheckStrategy: true}\n"
        "resources: {quotaCheckStrategy: Sometimes}\n",
        "resources.quotaCheckStrategy",
        'Unsupported value: "Sometimes"',
    ),
    BadCase(
        "ignoring undeclared resources with excluded prefixes",
        HEAD + "featureGates: {QuotaCheckStrategy: true}\n"
        "resources: {quotaCheckStrategy: IgnoreUndeclared, excludeResourcePrefixes: [x/]}\n",
        "resources.quotaCheckStrategy",
        "excludeResourcePrefixes is not allowed",
    ),
    BadCase(
        "wrong type",
        HEAD + "manageJobsWithoutQueueName: yes please\n",
        "manageJobsWithoutQueueName",
        "expected bool, got a string",
    ),
    BadCase(
        "feature gate not a boolean",
        HEAD + "featureGates: {MultiKueue: on-ish}\n",
        "featureGates.MultiKueue",
        "expected a boolean",
    ),
]


@pytest.mark.parametrize("case", BAD, ids=[case.name for case in BAD])
def test_errors_are_one_line_naming_file_and_field(tmp_path: Path, case: BadCase) -> None:
    path = write(tmp_path, case.text, head="")
    with pytest.raises(KueueConfigError) as err:
        load_config(path)
    message = str(err.value)
    assert "\n" not in message
    assert err.value.source == str(path)
    assert err.value.field == case.field
    prefix = f"{path}: {case.field}: " if case.field else f"{path}: "
    assert message.startswith(prefix)
    assert case.reason in err.value.reason


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(KueueConfigError, match="cannot read the file"):
        load_config(tmp_path / "absent.yaml")
