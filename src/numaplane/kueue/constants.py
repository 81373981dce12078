"""Names Kueue users and tools see: API group, labels, annotations, finalizers, condition types
and reasons (upstream's ``apis/kueue/v1beta2`` and ``pkg/controller/constants``)."""

from __future__ import annotations

from typing import Final

GROUP: Final = "kueue.x-k8s.io"
VERSION: Final = "v1beta2"
API_VERSION: Final = f"{GROUP}/{VERSION}"

# --- labels, annotations, finalizers ------------------------------------------------------------
QUEUE_NAME_LABEL: Final = "kueue.x-k8s.io/queue-name"
QUEUE_NAME_ANNOTATION: Final = "kueue.x-k8s.io/queue-name"
PRIORITY_CLASS_LABEL: Final = "kueue.x-k8s.io/priority-class"
PREBUILT_WORKLOAD_LABEL: Final = "kueue.x-k8s.io/prebuilt-workload-name"
JOB_UID_LABEL: Final = "kueue.x-k8s.io/job-uid"
JOB_MIN_PARALLELISM_ANNOTATION: Final = "kueue.x-k8s.io/job-min-parallelism"
MULTIKUEUE_ORIGIN_LABEL: Final = "kueue.x-k8s.io/multikueue-origin"
RESOURCE_IN_USE_FINALIZER: Final = "kueue.x-k8s.io/resource-in-use"
MULTIKUEUE_CONTROLLER: Final = "kueue.x-k8s.io/multikueue"
#: The field manager of Kueue's admission writes (upstream ``constants.AdmissionName``).
ADMISSION_FIELD_MANAGER: Final = "kueue-admission"
#: The name Kueue's events are recorded under (upstream ``constants.KueueName``).
KUEUE_NAME: Final = "kueue"

# --- Workload condition types -------------------------------------------------------------------
QUOTA_RESERVED: Final = "QuotaReserved"
ADMITTED: Final = "Admitted"
FINISHED: Final = "Finished"
EVICTED: Final = "Evicted"
PREEMPTED: Final = "Preempted"
REQUEUED: Final = "Requeued"
PODS_READY: Final = "PodsReady"
DEACTIVATION_TARGET: Final = "DeactivationTarget"

# --- Workload condition reasons -----------------------------------------------------------------
REASON_QUOTA_RESERVED: Final = "QuotaReserved"
REASON_ADMITTED: Final = "Admitted"
REASON_PENDING: Final = "Pending"
REASON_INADMISSIBLE: Final = "Inadmissible"
REASON_NO_RESERVATION: Final = "NoReservation"
REASON_UNSATISFIED_CHECKS: Final = "UnsatisfiedAdmissionChecks"
REASON_PREEMPTED: Final = "Preempted"
REASON_PODS_READY_TIMEOUT: Final = "PodsReadyTimeout"
REASON_ADMISSION_CHECK: Final = "AdmissionCheck"
REASON_CLUSTER_QUEUE_STOPPED: Final = "ClusterQueueStopped"
REASON_LOCAL_QUEUE_STOPPED: Final = "LocalQueueStopped"
REASON_DEACTIVATED: Final = "Deactivated"
REASON_BACKOFF_FINISHED: Final = "BackoffFinished"
REASON_SUCCEEDED: Final = "Succeeded"
REASON_FAILED: Final = "Failed"
REASON_OUT_OF_SYNC: Final = "OutOfSync"
REASON_IN_CLUSTER_QUEUE: Final = "InClusterQueue"
REASON_IN_COHORT_RECLAMATION: Final = "InCohortReclamation"
REASON_IN_COHORT_RECLAIM_WHILE_BORROWING: Final = "InCohortReclaimWhileBorrowing"
REASON_IN_COHORT_FAIR_SHARING: Final = "InCohortFairSharing"

# --- admission check states ---------------------------------------------------------------------
CHECK_PENDING: Final = "Pending"
CHECK_READY: Final = "Ready"
CHECK_RETRY: Final = "Retry"
CHECK_REJECTED: Final = "Rejected"
