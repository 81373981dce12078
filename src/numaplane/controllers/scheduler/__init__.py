"""The NUMA-aware scheduler (one module per plugin or part, as kube-scheduler's framework).

``Scheduler(client, SchedulerOptions(...)).run()`` binds pending pods whose ``schedulerName``
is ``default-scheduler``: ``queue`` (active, backoff, unschedulable pods), ``cache`` (nodes,
assigned and assumed pods), the filters ``node_unschedulable``, ``taint_toleration``,
``node_affinity``, ``noderesources_fit`` and ``numa`` (the node engine's exact prediction from
the node's NodeResourceTopology snapshot), the scores of ``noderesources_fit`` and ``numa``,
``binder`` (``pods/binding``, serialized per node) and ``fiterror`` (the FailedScheduling
message).
"""

from numaplane.controllers.scheduler.options import SchedulerOptions, SchedulerOptionsError
from numaplane.controllers.scheduler.scheduler import Scheduler

__all__ = ["Scheduler", "SchedulerOptions", "SchedulerOptionsError"]
