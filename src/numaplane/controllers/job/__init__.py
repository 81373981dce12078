"""The batch/v1 Job controller, as upstream's ``pkg/controller/job``: pods from the template up
to parallelism and the remaining completions, NonIndexed and Indexed completion, backoff limit
with the pod-failure backoff, active deadline, suspend and resume, ``managedBy`` (Jobs of
another controller left alone), pod failure and success policies, and exact counting of
finished pods with the ``batch.kubernetes.io/job-tracking`` finalizer."""

from numaplane.controllers.job.backoff import PodFailureBackoff
from numaplane.controllers.job.controller import JobController

__all__ = ["JobController", "PodFailureBackoff"]
