"""Kueue's batch/v1 Job integration, pure (upstream ``pkg/controller/jobframework`` and
``pkg/controller/jobs/job``): the Workload of a Job (:mod:`.workloads`), the Job's side
(:mod:`.batchjob`), the pod template edits (:mod:`.podsets`) and one reconcile pass as a
decision (:mod:`.reconciler`)."""

from numaplane.kueue.jobs.batchjob import finished as job_finished
from numaplane.kueue.jobs.batchjob import (
    is_active,
    is_suspended,
    pod_sets,
    pods_count,
    prebuilt_workload_name,
    queue_name,
)
from numaplane.kueue.jobs.decision import JobContext, JobDecision, JobEvent, JobWrite
from numaplane.kueue.jobs.equivalence import equivalent
from numaplane.kueue.jobs.lifecycle import start, stop, stop_steps
from numaplane.kueue.jobs.reconciler import reconcile_job
from numaplane.kueue.jobs.workloads import (
    PriorityClassInfo,
    controller_of,
    extract_priority,
    new_workload,
    owned_workloads,
    owner_job_key,
    workload_name,
)

#: ``finished(job) -> (reason, message) | None`` (the binding interface's name).
finished = job_finished

__all__ = [
    "JobContext",
    "JobDecision",
    "JobEvent",
    "JobWrite",
    "PriorityClassInfo",
    "controller_of",
    "equivalent",
    "extract_priority",
    "finished",
    "is_active",
    "is_suspended",
    "new_workload",
    "owned_workloads",
    "owner_job_key",
    "pod_sets",
    "pods_count",
    "prebuilt_workload_name",
    "queue_name",
    "reconcile_job",
    "start",
    "stop",
    "stop_steps",
    "workload_name",
]
