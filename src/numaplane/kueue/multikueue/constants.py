"""Names and strings of MultiKueue users see (SPEC §1.10, §3.2–3.10, catalogue §3.22): labels,
the controller name, condition reasons, event reason, metric names and the admission check
messages the workload reconciler writes (upstream ``pkg/controller/admissionchecks/multikueue``).
"""

from __future__ import annotations

from typing import Final

from numaplane.gofmt import go_quote
from numaplane.kueue import constants as kc

#: ``spec.controllerName`` of MultiKueue's AdmissionChecks and ``spec.managedBy`` of the
#: manager's Jobs it dispatches.
CONTROLLER_NAME: Final = kc.MULTIKUEUE_CONTROLLER
#: On remote Workloads and Jobs: the ``origin`` of the manager that created them.
ORIGIN_LABEL: Final = kc.MULTIKUEUE_ORIGIN_LABEL
#: On a remote Job: the name of the (already existing) remote Workload it runs under.
PREBUILT_WORKLOAD_LABEL: Final = kc.PREBUILT_WORKLOAD_LABEL
#: Removed from the remote copy: the uid belongs to the manager's Job.
JOB_UID_LABEL: Final = kc.JOB_UID_LABEL

#: The reason of every event the workload reconciler records on the local Workload.
EVENT_REASON: Final = "MultiKueue"
#: ``DeactivationTarget`` reason on a remote copy when the manager evicted the workload.
REASON_EVICTED_ON_MANAGER: Final = "EvictedOnManagerCluster"
#: ``JobSuspended`` reason the batch/v1 adapter sets on a suspended local Job (SPEC §3.8).
REASON_JOB_SUSPENDED_BY_ADAPTER: Final = "MultiKueueAdapter"
MSG_JOB_SUSPENDED_BY_ADAPTER: Final = "Set by MultiKueue adapter"

#: Metric names (labels ``cluster_queue`` and ``cluster``).
METRIC_DISPATCHED: Final = "multikueue_workloads_dispatched_total"
METRIC_ADMITTED: Final = "multikueue_workloads_admitted_total"

#: Internal timings (SPEC §1.9: not configurable upstream).
SYNC_DEFERRED_REQUEUE_S: Final = 2.0
INCREMENTAL_ROUND_S: Final = 300.0
INCREMENTAL_STEP_SIZE: Final = 3

# --- admission check messages (the ones MultiKueue completes with ", Previously: <state>") ----
MSG_ADMITTING_REMOTE_LOST: Final = "Admitting remote lost"
MSG_ADMITTING_REMOTE_GONE: Final = "Admitting remote no longer exists"
MSG_NO_ADMITTING_CLUSTER: Final = (
    "Admission check is Ready but no admitting cluster is recorded; "
    "this is unexpected, please report it"
)
MSG_NO_ADAPTER: Final = "No multikueue adapter found"
#: Error of a nominated cluster without a connected client (upstream
#: ``ErrNoRemoteClientForNominatedCluster``).
ERR_NO_REMOTE_CLIENT: Final = "no remote client for nominated cluster"
#: Error of the incremental dispatcher once every cluster of the config is nominated.
ERR_NO_MORE_WORKERS: Final = "no more workers to nominate"
ERR_NOT_OWNED: Final = "remote object is not owned by MultiKueue"


def admitted_on(cluster: str) -> str:
    """``The workload was admitted on "<cluster>"``: the Ready message and its Normal event."""
    return f"The workload was admitted on {go_quote(cluster)}"


def evicted_on_worker(cluster: str, previous: str) -> str:
    """The Retry message (and Normal event) of a copy evicted by its worker (SPEC §3.4 R4)."""
    return (
        f"Workload evicted on worker cluster: {go_quote(cluster)}, resetting for re-admission. "
        f"Previously: {go_quote(previous)}"
    )


def out_of_sync_on_worker(cluster: str) -> str:
    """The Retry message base (and Warning event) of a copy the worker finished ``OutOfSync``
    (SPEC §3.4 R3); ``, Previously: "<state>"`` is added like every MultiKueue update."""
    return (
        f"Remote workload on worker cluster {go_quote(cluster)} is out of sync with its user "
        "job, resetting for re-dispatch"
    )


def no_adapter_for(api_version: str, kind: str) -> str:
    """``No multikueue adapter found for owner kind "<group/version, Kind=K>"`` (Go's
    ``GroupVersionKind.String``: the core group prints as ``/v1``)."""
    group, _, version = api_version.rpartition("/")
    return f"{MSG_NO_ADAPTER} for owner kind {go_quote(f'{group}/{version}, Kind={kind}')}"


def not_managed(managed_by: str) -> str:
    """The Rejected message of a batch/v1 Job whose ``spec.managedBy`` is not MultiKueue's."""
    return (
        "The owner is not managed by Kueue: Expecting spec.managedBy to be "
        f"{go_quote(CONTROLLER_NAME)} not {go_quote(managed_by)}"
    )


def with_previous(message: str, previous_state: str) -> str:
    """Upstream's ``updateACS`` suffix: ``<message>, Previously: "<old state>"``."""
    return f"{message}, Previously: {go_quote(previous_state)}"


def evicted_on_manager(message: str) -> str:
    """The ``DeactivationTarget`` message patched on the admitting copy (SPEC §3.4 R6b.2)."""
    return f"Evicted on manager: {message}"
