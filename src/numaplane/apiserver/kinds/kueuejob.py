"""Kueue's mutating webhook for batch/v1 Jobs, run in the server's create path (upstream
``jobs/job/job_webhook.go`` ``Default`` with ``jobframework.ApplyDefaultForSuspend``): a new
Job that carries the ``kueue.x-k8s.io/queue-name`` label (or the deprecated annotation) is
created suspended, so that it starts only once Kueue admits its Workload. Jobs without a queue
name are left alone (``manageJobsWithoutQueueName: false``, Kueue's default). Upstream also
spares a Job whose controlling ancestor Kueue already manages; with only the batch/v1 Job
integration that would be a Job owned by a queued Job, which this hook does not look up.

Enabled by ``numaplane apiserver --kueue-job-defaulting`` (on in ``numaplane up``); the webhook
itself lives in Kueue's own process on a real cluster.
"""

from __future__ import annotations

from typing import Any, Final

from numaplane.apiserver.kinds.meta import as_dict, as_str

QUEUE_NAME_LABEL: Final = "kueue.x-k8s.io/queue-name"
QUEUE_NAME_ANNOTATION: Final = "kueue.x-k8s.io/queue-name"
#: Set by Kueue while it stops a Job; a Job carrying it does not count as suspended.
STOPPING_ANNOTATION: Final = "kueue.x-k8s.io/stopping"

Object = dict[str, Any]


def queue_name(job: Object) -> str:
    """Upstream ``QueueNameForObject``: the queue-name label, else the deprecated annotation."""
    meta = as_dict(job.get("metadata"))
    return as_str(as_dict(meta.get("labels")).get(QUEUE_NAME_LABEL)) or as_str(
        as_dict(meta.get("annotations")).get(QUEUE_NAME_ANNOTATION)
    )


def default_kueue_job(job: Object) -> bool:
    """Upstream ``JobWebhook.Default`` (in place): suspend a new Job with a queue name unless it
    already is suspended; whether it changed the Job."""
    if not queue_name(job):
        return False
    spec = job.setdefault("spec", {})
    if not isinstance(spec, dict):
        return False
    suspended = spec.get("suspend") is True
    stopping = as_dict(as_dict(job.get("metadata")).get("annotations")).get(STOPPING_ANNOTATION)
    if suspended and stopping != "true":
        return False
    spec["suspend"] = True
    return True
