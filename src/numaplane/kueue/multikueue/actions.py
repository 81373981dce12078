"""What the MultiKueue workload reconciler asks its controller to do, in order: the writes to
the manager and to the workers, the events and the metric counts of one reconcile pass
(:func:`numaplane.kueue.multikueue.reconcile.reconcile` returns them in a :class:`Reconciled`).

Every action is idempotent against a fresh view: when one fails the controller stops, and
reconciles again (with backoff) from what the clusters then show.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Obj = dict[str, Any]


@dataclass(frozen=True, slots=True)
class CreateRemoteWorkload:
    """Create the copy ``obj`` of the local Workload on worker ``cluster``."""

    cluster: str
    obj: Obj


@dataclass(frozen=True, slots=True)
class UpdateRemoteWorkload:
    """Update the spec of the copy on ``cluster`` (priority sync); ``obj`` carries its
    resourceVersion."""

    cluster: str
    obj: Obj


@dataclass(frozen=True, slots=True)
class PatchRemoteWorkloadStatus:
    """Write the status of the copy on ``cluster`` (``DeactivationTarget`` of a manager-side
    eviction); ``obj`` carries its resourceVersion."""

    cluster: str
    obj: Obj


@dataclass(frozen=True, slots=True)
class RemoveRemoteObjects:
    """On ``cluster``: delete the Job ``namespace/job`` when it carries our origin label
    (background propagation, so its pods go too; a foreign Job is left alone), then drop the
    ``resource-in-use`` finalizer of the Workload ``namespace/workload`` and delete it (either
    may already be gone)."""

    cluster: str
    namespace: str
    workload: str
    job: str | None


@dataclass(frozen=True, slots=True)
class CreateRemoteJob:
    """Create the Job ``obj`` on the admitting worker ``cluster``."""

    cluster: str
    obj: Obj


@dataclass(frozen=True, slots=True)
class UpdateLocalJobStatus:
    """Write the status subresource of the manager's Job; ``obj`` carries its
    resourceVersion."""

    obj: Obj


@dataclass(frozen=True, slots=True)
class UpdateLocalWorkloadStatus:
    """Write the status of the manager's Workload; ``obj`` carries its resourceVersion (a
    conflict means: reconcile again)."""

    obj: Obj


@dataclass(frozen=True, slots=True)
class RecordEvent:
    """Record an event on ``obj`` (``type`` Normal or Warning)."""

    obj: Obj
    type: str
    reason: str
    message: str


@dataclass(frozen=True, slots=True)
class CountMetric:
    """Add one to counter ``name`` with ``labels`` (name, value pairs)."""

    name: str
    labels: tuple[tuple[str, str], ...]


Action = (
    CreateRemoteWorkload
    | UpdateRemoteWorkload
    | PatchRemoteWorkloadStatus
    | RemoveRemoteObjects
    | CreateRemoteJob
    | UpdateLocalJobStatus
    | UpdateLocalWorkloadStatus
    | RecordEvent
    | CountMetric
)


@dataclass
class Reconciled:
    """One reconcile pass: the actions in the order to make them, when to reconcile again
    (seconds; None: only on the next change) and the error upstream would return (the
    controller retries with backoff, after making the actions)."""

    actions: list[Action] = field(default_factory=list)
    requeue_after: float | None = None
    error: str | None = None
