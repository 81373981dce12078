"""What the MultiKueue workload reconciler is given (the binding interface of issue 16): the
local Workload, its Job and what the manager knows of each cluster of its MultiKueueConfig,
and the Configuration's ``multiKueue`` values it uses."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from numaplane.kueue.configvalues import DISPATCHER_ALL_AT_ONCE
from numaplane.kueue.multikueue import constants as mk

Obj = dict[str, Any]


@dataclass(frozen=True, slots=True)
class RemoteView:
    """What the manager knows of one cluster of the workload's MultiKueueConfig."""

    name: str
    #: A client exists and all its watches are open.
    connected: bool
    #: Connected: None; else when the connection first dropped (client creation time if it
    #: never connected); None and not connected: no client at all (MultiKueueCluster missing).
    lost_since: float | None
    #: The remote copy (same namespace/name), when connected.
    workload: Obj | None = None
    #: The remote batch Job of the local Job's namespace/name, when connected.
    job: Obj | None = None


@dataclass(frozen=True, slots=True)
class GroupView:
    """The local Workload, its Job and the clusters of its MultiKueueConfig."""

    #: The local Workload; None when gone.
    local: Obj | None
    #: The last known local Workload when gone or being deleted (R0).
    deleted: Obj | None
    #: The local batch/v1 Job owning it (None: no adapter, or gone).
    local_job: Obj | None
    #: Name of the MultiKueue AdmissionCheck of the workload.
    check: str
    #: The config's clusters, in config order.
    clusters: tuple[RemoteView, ...]


@dataclass(frozen=True, slots=True)
class ReconcileOptions:
    """The Configuration's ``multiKueue`` section as the reconciler uses it."""

    origin: str = "multikueue"
    worker_lost_timeout: float = 900.0
    #: ``AllAtOnce``, ``Incremental``, or any other name: an external dispatcher.
    dispatcher: str = DISPATCHER_ALL_AT_ONCE
    step_size: int = mk.INCREMENTAL_STEP_SIZE
    incremental_round_s: float = mk.INCREMENTAL_ROUND_S
    #: Feature gate ``MultiKueueIncrementalDispatcherConfig`` (beta, on): honour step_size.
    incremental_step_size_config: bool = True
    #: Feature gate ``MultiKueueIncrementalDispatcherRespectConfigOrder`` (beta, on).
    incremental_config_order: bool = True


def workload_key(wl: Mapping[str, Any]) -> str:
    """``namespace/name`` of a Workload (the dispatcher state's key)."""
    meta = wl.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"
