"""What a workload-controller pass reads from Kueue's configuration and what it decides."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from numaplane.kueue.workload.status import Event, Status


@dataclass(frozen=True, slots=True)
class WorkloadOptions:
    """The parts of Kueue's ``Configuration`` the workload rules read: ``waitForPodsReady``
    (``pods_ready_timeout`` None: disabled) and its ``requeuingStrategy``."""

    pods_ready_timeout: float | None = None
    recovery_timeout: float | None = None
    #: None: requeue forever.
    backoff_limit_count: int | None = None
    backoff_base_seconds: int = 60
    backoff_max_seconds: int = 3600


@dataclass(frozen=True, slots=True)
class WorkloadDecision:
    """What one reconcile pass wants written."""

    #: The whole new ``status`` to write, or None when the status stays as it is.
    new_status: Status | None = None
    events: tuple[Event, ...] = ()
    #: Seconds until the workload must be reconciled again (backoff, PodsReady timeout,
    #: maximum execution time), if any.
    requeue_after: float | None = None
    #: ``spec.active=false`` to write (a ``DeactivationTarget`` was reached).
    deactivate: bool = False
    #: Names of the steps taken, for logs and tests.
    steps: tuple[str, ...] = field(default=())


#: Kueue's defaults: waitForPodsReady disabled.
DEFAULT_OPTIONS: Final = WorkloadOptions()
