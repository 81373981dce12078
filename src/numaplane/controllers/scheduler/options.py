"""``SchedulerOptions``: what the scheduler does, as the controller manager's flags set it."""

from __future__ import annotations

from dataclasses import dataclass

from numaplane.controllers.scheduler.noderesources_fit import LEAST_ALLOCATED, MOST_ALLOCATED
from numaplane.errors import InputError

__all__ = ["DEFAULT_SCHEDULER_NAME", "SchedulerOptions", "SchedulerOptionsError"]

DEFAULT_SCHEDULER_NAME = "default-scheduler"


class SchedulerOptionsError(InputError):
    """An option the scheduler cannot run with."""


@dataclass(frozen=True)
class SchedulerOptions:
    """The scheduler's options.

    ``numa_filter=False`` switches the NUMA plugin (filter and score) off: pods are placed on
    resources, affinity and taints alone, as a scheduler that knows nothing of NUMA.
    ``scoring_strategy`` is NodeResourcesFit's (``LeastAllocated`` or ``MostAllocated``).
    Only pods whose ``schedulerName`` is ``scheduler_name`` are scheduled.
    """

    numa_filter: bool = True
    scoring_strategy: str = LEAST_ALLOCATED
    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    #: Bindings written at the same time (across nodes; one at a time per node).
    bind_concurrency: int = 32
    #: Upstream's podInitialBackoffSeconds / podMaxBackoffSeconds.
    initial_backoff: float = 1.0
    max_backoff: float = 10.0
    #: Upstream's podMaxInUnschedulablePodsDuration, and how often it is checked.
    max_unschedulable: float = 300.0
    flush_interval: float = 30.0
    #: How long to wait for the first NodeResourceTopology list before scheduling (the CRD may
    #: be missing on a cluster without NUMA-aware nodes).
    nrt_sync_timeout: float = 5.0
    #: Seed of the tie-break between equally scored nodes (None: random, as upstream).
    seed: int | None = None
    #: Once the caches are synced, move what they hold out of the cyclic garbage collector's
    #: reach (``gc.freeze()``; see ``numaplane.cli.gctune``): the ``controllers`` command sets
    #: it, tests sharing one interpreter do not.
    freeze_gc_after_sync: bool = False

    def __post_init__(self) -> None:
        if self.scoring_strategy not in (LEAST_ALLOCATED, MOST_ALLOCATED):
            raise SchedulerOptionsError(
                "scheduler options",
                f"{self.scoring_strategy!r} is no scoring strategy "
                f"(expected {LEAST_ALLOCATED} or {MOST_ALLOCATED})",
                "scoringStrategy",
            )
        if self.bind_concurrency < 1:
            raise SchedulerOptionsError(
                "scheduler options", "must be at least 1", "bindConcurrency"
            )
