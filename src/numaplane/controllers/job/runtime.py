"""What one sync of a Job works with: the API client, the event recorder, the clock, the
expectations and backoff records, the way to requeue a Job, and the per-sync context
(upstream's ``syncJobCtx``). The controller builds one :class:`JobRuntime`; the sync modules only
read and update it, so they do not depend on the controller module."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from numaplane.controllers.job.backoff import BackoffRecord, BackoffStore, PodFailureBackoff
from numaplane.controllers.job.expectations import ControllerExpectations, FinalizerExpectations
from numaplane.controllers.job.indexes import Intervals
from numaplane.controllers.job.status import Condition
from numaplane.kube import KubeClient

Obj = dict[str, Any]

#: ``syncJobBatchPeriod``: pod events for a Job are coalesced into one sync this long after.
SYNC_BATCH_PERIOD_S: Final = 1.0
#: ``MaxUncountedPods``: keeps ``status.uncountedTerminatedPods`` under ~20 KB.
MAX_UNCOUNTED_PODS: Final = 500
#: ``MaxPodCreateDeletePerSync``.
MAX_POD_CREATE_DELETE_PER_SYNC: Final = 500
#: ``SlowStartInitialBatchSize``: creations go in batches of 1, 2, 4, ... while they succeed.
SLOW_START_INITIAL_BATCH: Final = 1


class Recorder(Protocol):
    """What the controller needs of an event recorder (``numaplane.kube.events.EventRecorder``)."""

    def event(self, obj: dict[str, Any], type: str, reason: str, message: str) -> None:
        """Record an event about ``obj`` (non-blocking)."""


@dataclass
class JobRuntime:
    """The controller's shared state, as one sync of a Job sees it."""

    client: KubeClient
    recorder: Recorder
    clock: Callable[[], float]
    backoff: PodFailureBackoff
    expectations: ControllerExpectations
    finalizer_expectations: FinalizerExpectations
    backoff_store: BackoffStore
    #: The Job of a key in the informer's cache (``None``: gone).
    lookup_job: Callable[[str], Obj | None]
    #: The pods a Job owns, after adopting matching orphans and releasing non-matching pods.
    claim_pods: Callable[[Obj], Awaitable[list[Obj]]]
    #: Sync the Job of a key again after a delay (seconds).
    enqueue_after: Callable[[str, float], None]
    sync_batch_period: float = SYNC_BATCH_PERIOD_S
    max_uncounted: int = MAX_UNCOUNTED_PODS
    max_create_delete: int = MAX_POD_CREATE_DELETE_PER_SYNC


@dataclass
class SyncContext:
    """One sync's view of a Job (``syncJobCtx``); ``job`` is a private copy that the sync
    changes and writes back."""

    key: str
    job: Obj
    pods: list[Obj]
    active_pods: list[Obj]
    ready: int
    terminating: int
    uncounted_succeeded: frozenset[str]
    uncounted_failed: frozenset[str]
    expected_rm_finalizers: frozenset[str]
    succeeded: int = 0
    failed: int = 0
    finished: Condition | None = None
    prev_succeeded_indexes: Intervals = field(default_factory=Intervals)
    succeeded_indexes: Intervals = field(default_factory=Intervals)
    new_backoff: BackoffRecord | None = None
    #: ``backoffLimitPerIndex`` only: the failed indexes, and per index still to run the
    #: failed pod kept until its replacement exists.
    failed_indexes: Intervals | None = None
    delayed: dict[int, Obj] = field(default_factory=dict)
    #: Whether no creation or deletion was pending when the sync began.
    satisfied: bool = True

    @property
    def spec(self) -> dict[str, Any]:
        """The Job's spec."""
        spec: dict[str, Any] = self.job.setdefault("spec", {})
        return spec

    @property
    def status(self) -> dict[str, Any]:
        """The Job's status (created when absent)."""
        st: dict[str, Any] = self.job.setdefault("status", {})
        return st


def is_indexed(job: Mapping[str, Any]) -> bool:
    """``completionMode: Indexed``."""
    return (job.get("spec") or {}).get("completionMode") == "Indexed"


def is_suspended(job: Mapping[str, Any]) -> bool:
    """``spec.suspend: true``."""
    return (job.get("spec") or {}).get("suspend") is True


def completions_of(job: Mapping[str, Any]) -> int | None:
    """``spec.completions`` (``None``: a work-queue Job)."""
    value = (job.get("spec") or {}).get("completions")
    return None if value is None else int(value)
