"""Kueue's mutating webhook for batch/v1 Jobs, run in the server's create path (upstream
``jobs/job/job_webhook.go`` ``Default`` with ``jobframework.ApplyDefaultForSuspend``): a new
Job that carries the ``kueue.x-k8s.io/queue-name`` label (or the deprecated annotation) is
created suspended, so that it starts only once Kueue admits its Workload; a Job without one gets
``queue-name: default`` first when its namespace has a LocalQueue named ``default``
(``LocalQueueDefaulting``). Other Jobs without a queue name are left alone
(``manageJobsWithoutQueueName: false``, Kueue's default). A Job whose LocalQueue leads to a
ClusterQueue with a MultiKueue AdmissionCheck gets ``spec.managedBy: kueue.x-k8s.io/multikueue``
(``ApplyDefaultForManagedBy``) so that only a worker runs it. Upstream also spares a Job whose
controlling ancestor Kueue already manages; with only the batch/v1 Job integration that would be
a Job owned by a queued Job, which this hook does not look up.

Enabled by ``numaplane apiserver --kueue-job-defaulting`` (on in ``numaplane up``); the webhook
itself lives in Kueue's own process on a real cluster.
"""

from __future__ import annotations

from typing import Any, Final

from numaplane.apiserver.kinds.meta import as_dict, as_list, as_str

QUEUE_NAME_LABEL: Final = "kueue.x-k8s.io/queue-name"
QUEUE_NAME_ANNOTATION: Final = "kueue.x-k8s.io/queue-name"
#: Set by Kueue while it stops a Job; a Job carrying it does not count as suspended.
STOPPING_ANNOTATION: Final = "kueue.x-k8s.io/stopping"
#: The LocalQueue a namespace may name ``default`` for Jobs that name none.
DEFAULT_LOCAL_QUEUE: Final = "default"
LOCAL_QUEUES: Final = "localqueues.kueue.x-k8s.io"
CLUSTER_QUEUES: Final = "clusterqueues.kueue.x-k8s.io"
ADMISSION_CHECKS: Final = "admissionchecks.kueue.x-k8s.io"
MULTIKUEUE_CONTROLLER: Final = "kueue.x-k8s.io/multikueue"
#: The Job controller's own ``spec.managedBy`` value (the default).
JOB_CONTROLLER: Final = "kubernetes.io/job-controller"

Object = dict[str, Any]


def queue_name(job: Object) -> str:
    """Upstream ``QueueNameForObject``: the queue-name label, else the deprecated annotation."""
    meta = as_dict(job.get("metadata"))
    return as_str(as_dict(meta.get("labels")).get(QUEUE_NAME_LABEL)) or as_str(
        as_dict(meta.get("annotations")).get(QUEUE_NAME_ANNOTATION)
    )


def _controller_is_job(job: Object) -> bool:
    # Upstream IsOwnerManagedByKueueForObject: the controller is a kind Kueue integrates; with
    # only the batch/v1 Job integration, another Job.
    for ref in as_list(as_dict(job.get("metadata")).get("ownerReferences")):
        ref = as_dict(ref)
        if ref.get("controller") is True:
            return ref.get("kind") == "Job" and as_str(ref.get("apiVersion")) == "batch/v1"
    return False


def admission_check_names(cluster_queue: Object) -> list[str]:
    """The AdmissionChecks a ClusterQueue names: ``spec.admissionChecksStrategy`` (v1beta2),
    else the v1beta1 flat ``spec.admissionChecks``."""
    spec = as_dict(cluster_queue.get("spec"))
    strategy = as_dict(spec.get("admissionChecksStrategy")).get("admissionChecks")
    if strategy:
        return [as_str(as_dict(rule).get("name")) for rule in as_list(strategy)]
    return [as_str(name) for name in as_list(spec.get("admissionChecks"))]


def default_managed_by(job: Object) -> bool:
    """Upstream ``ApplyDefaultForManagedBy`` for a Job whose ClusterQueue has a MultiKueue
    AdmissionCheck (the caller decides that): ``spec.managedBy`` becomes
    ``kueue.x-k8s.io/multikueue`` unless the Job names another controller; whether it changed."""
    spec = job.get("spec")
    if not isinstance(spec, dict):
        return False
    current = spec.get("managedBy")
    if current not in (None, JOB_CONTROLLER):
        return False
    spec["managedBy"] = MULTIKUEUE_CONTROLLER
    return True


def default_kueue_job(job: Object, *, default_local_queue: bool = False) -> bool:
    """Upstream ``JobWebhook.Default`` (in place): ``ApplyDefaultLocalQueue`` (a Job without a
    queue name, not controlled by a Kueue-managed owner, gets ``queue-name: default`` when the
    namespace has a LocalQueue named ``default``: ``default_local_queue``;
    ``LocalQueueDefaulting``, on), then ``ApplyDefaultForSuspend`` (a Job with a queue name is
    suspended unless it already is). Whether it changed the Job."""
    changed = False
    if default_local_queue and not queue_name(job) and not _controller_is_job(job):
        meta = job.setdefault("metadata", {})
        labels = meta.get("labels")
        if not isinstance(labels, dict):
            labels = meta["labels"] = {}
        labels[QUEUE_NAME_LABEL] = DEFAULT_LOCAL_QUEUE
        changed = True
    if not queue_name(job):
        return changed
    spec = job.setdefault("spec", {})
    if not isinstance(spec, dict):
        return changed
    stopping = as_dict(as_dict(job.get("metadata")).get("annotations")).get(STOPPING_ANNOTATION)
    if spec.get("suspend") is True and stopping != "true":
        return changed
    spec["suspend"] = True
    return True
