"""What the MultiKueue workload controller reads, as the pure reconciler wants it: the
workload's MultiKueue check and config (upstream ``admissioncheck.FilterForController`` and
``multiKueueStoreHelper``), its owning batch/v1 Job, and one
:class:`~numaplane.kueue.multikueue.reconcile.RemoteView` per cluster of the config (upstream
``readGroup``). No I/O: the stores are the informers' caches."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from numaplane.kueue import constants as c
from numaplane.kueue.multikueue import GroupView, RemoteView

Obj = dict[str, Any]
#: A store lookup by ``namespace/name`` (or ``name`` for cluster-scoped objects).
Lookup = Callable[[str], Obj | None]


class StoreLike(Protocol):
    """An informer's cache."""

    def get_by_key(self, key: str) -> Obj | None: ...


class RemoteLike(Protocol):
    """What the view reads of one ``RemoteCluster`` (its connection and its caches of our
    Workloads and Jobs there)."""

    @property
    def connected(self) -> bool: ...
    @property
    def lost_since(self) -> float | None: ...
    @property
    def workloads(self) -> StoreLike | None: ...
    @property
    def jobs(self) -> StoreLike | None: ...


@dataclass(frozen=True)
class CheckRef:
    """A workload's MultiKueue AdmissionCheck and the MultiKueueConfig it names."""

    check: str
    config: str


def with_kind(obj: Mapping[str, Any], api_version: str, kind: str) -> Obj:
    """``obj`` with its ``apiVersion`` and ``kind`` (list items come without them)."""
    if obj.get("kind") == kind and obj.get("apiVersion") == api_version:
        return dict(obj)
    return {**obj, "apiVersion": api_version, "kind": kind}


def config_of_check(check: Mapping[str, Any] | None) -> str | None:
    """The MultiKueueConfig a MultiKueue AdmissionCheck names, or None when ``check`` is not
    one (another controller, or parameters of another kind)."""
    if check is None:
        return None
    spec = check.get("spec") or {}
    if spec.get("controllerName") != c.MULTIKUEUE_CONTROLLER:
        return None
    params = spec.get("parameters") or {}
    if params.get("apiGroup") != c.GROUP or params.get("kind") != "MultiKueueConfig":
        return None
    name = params.get("name")
    return str(name) if name else None


def multikueue_check(workload: Mapping[str, Any], checks: Lookup) -> CheckRef | None:
    """The first of the workload's admission check states whose AdmissionCheck is
    MultiKueue's (a ClusterQueue with two is inactive, so the first is the one); None:
    MultiKueue ignores the workload."""
    for state in (workload.get("status") or {}).get("admissionChecks") or ():
        name = str(state.get("name") or "")
        check = checks(name)
        if check is None or (check.get("spec") or {}).get("controllerName") != (
            c.MULTIKUEUE_CONTROLLER
        ):
            continue
        return CheckRef(name, config_of_check(check) or "")
    return None


def check_state(workload: Mapping[str, Any], check: str) -> str:
    """The state of admission check ``check`` on ``workload`` ("" when it has none)."""
    for state in (workload.get("status") or {}).get("admissionChecks") or ():
        if state.get("name") == check:
            return str(state.get("state") or "")
    return ""


def config_clusters(config: Mapping[str, Any] | None) -> tuple[str, ...]:
    """A MultiKueueConfig's ``spec.clusters`` in order (none when the config is missing)."""
    if config is None:
        return ()
    return tuple(str(n) for n in (config.get("spec") or {}).get("clusters") or ())


def owner_job_key(workload: Mapping[str, Any]) -> str | None:
    """``namespace/name`` of the batch/v1 Job that owns ``workload`` (its controller owner
    reference, else its first Job owner)."""
    meta = workload.get("metadata") or {}
    refs = [
        r
        for r in meta.get("ownerReferences") or ()
        if r.get("kind") == "Job" and str(r.get("apiVersion", "")).startswith("batch/")
    ]
    if not refs:
        return None
    ref = next((r for r in refs if r.get("controller")), refs[0])
    return f"{meta.get('namespace', '')}/{ref.get('name', '')}"


def owner_job(workload: Mapping[str, Any], jobs: Lookup) -> Obj | None:
    """The Job that owns ``workload`` from the store, when its uid still matches."""
    key = owner_job_key(workload)
    if key is None:
        return None
    job = jobs(key)
    if job is None:
        return None
    uids = {r.get("uid") for r in (workload.get("metadata") or {}).get("ownerReferences") or ()}
    if (job.get("metadata") or {}).get("uid") not in uids:
        return None
    return with_kind(job, "batch/v1", "Job")


def object_key(obj: Mapping[str, Any]) -> str:
    """``namespace/name``."""
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


def is_deleting(obj: Mapping[str, Any] | None) -> bool:
    """Whether ``obj`` carries a deletionTimestamp."""
    return obj is not None and bool((obj.get("metadata") or {}).get("deletionTimestamp"))


def _cached(store: StoreLike | None, key: str) -> Obj | None:
    return None if store is None else store.get_by_key(key)


def group_view(
    key: str,
    local: Obj | None,
    last_known: Obj | None,
    check: str,
    clusters: tuple[str, ...],
    jobs: Lookup,
    remotes: Callable[[str], RemoteLike | None],
) -> GroupView:
    """The reconciler's input for workload ``key``: ``local`` from the store (None when
    gone), ``last_known`` the copy kept when it was deleted."""
    workload = None if local is None else with_kind(local, c.API_VERSION, "Workload")
    deleted = workload if is_deleting(workload) else last_known
    source = workload or deleted
    local_job = None if workload is None else owner_job(workload, jobs)
    job_key = owner_job_key(source) if source is not None else None
    views = []
    for name in clusters:
        remote = remotes(name)
        if remote is None:
            views.append(RemoteView(name, connected=False, lost_since=None))
            continue
        if not remote.connected:
            views.append(RemoteView(name, connected=False, lost_since=remote.lost_since))
            continue
        views.append(
            RemoteView(
                name,
                connected=True,
                lost_since=None,
                workload=_cached(remote.workloads, key),
                job=None if job_key is None else _cached(remote.jobs, job_key),
            )
        )
    return GroupView(
        local=workload,
        deleted=deleted,
        local_job=local_job,
        check=check,
        clusters=tuple(views),
    )
