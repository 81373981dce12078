"""One reconcile of a workload group, step by step (upstream ``reconcileGroup``, SPEC §3.4
R2–R8; R0 and the Rejected updates are :func:`numaplane.kueue.multikueue.reconcile.reconcile`'s).

Pure: reads a :class:`~numaplane.kueue.multikueue.view.GroupView`, collects actions.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from numaplane.gofmt import go_quote
from numaplane.kueue.configvalues import DISPATCHER_ALL_AT_ONCE, DISPATCHER_INCREMENTAL
from numaplane.kueue.constants import (
    ADMITTED,
    CHECK_PENDING,
    CHECK_READY,
    CHECK_REJECTED,
    CHECK_RETRY,
    EVICTED,
    FINISHED,
    REASON_OUT_OF_SYNC,
)
from numaplane.kueue.multikueue import constants as mk
from numaplane.kueue.multikueue.actions import (
    Action,
    CountMetric,
    CreateRemoteJob,
    CreateRemoteWorkload,
    PatchRemoteWorkloadStatus,
    Reconciled,
    RecordEvent,
    RemoveRemoteObjects,
    UpdateLocalJobStatus,
    UpdateLocalWorkloadStatus,
    UpdateRemoteWorkload,
)
from numaplane.kueue.multikueue.batchjob import (
    determine_status_update,
    is_owned,
    ownership_error,
    remote_job,
)
from numaplane.kueue.multikueue.copies import (
    clone_for_create,
    condition_of,
    earliest_true,
    find_check,
    priority_changed,
    ready_delayed_topology,
    set_check_state,
    spec_out_of_sync,
    with_priority_of,
)
from numaplane.kueue.multikueue.dispatch import (
    DispatchState,
    Nomination,
    all_at_once,
    effective_step_size,
    incremental,
)
from numaplane.kueue.multikueue.view import GroupView, ReconcileOptions, workload_key
from numaplane.kueue.workload import status as st
from numaplane.kueue.workload.eviction import set_deactivation_target

Obj = dict[str, Any]


class GroupPass:
    """One reconcile of a workload group: reads the view, collects actions in ``out``."""

    def __init__(
        self,
        view: GroupView,
        options: ReconcileOptions,
        now: float,
        wl: Obj,
        job_name: str | None,
    ) -> None:
        self.view, self.opt, self.now, self.wl, self.job_name = view, options, now, wl, job_name
        self.meta: Mapping[str, Any] = wl.get("metadata") or {}
        self.status = st.status_copy(wl)
        self.check_state = str((find_check(self.status, view.check) or {}).get("state", ""))
        connected = [c for c in view.clusters if c.connected]
        self.available = [c.name for c in connected]
        self.unavailable = [c.name for c in view.clusters if not c.connected]
        self.remotes: dict[str, Obj | None] = {c.name: c.workload for c in connected}
        self.jobs: dict[str, Obj | None] = {c.name: c.job for c in connected}
        self.out = Reconciled()

    # --- writes -------------------------------------------------------------------------------

    def emit(self, action: Action) -> None:
        """Append ``action`` to the pass's result."""
        self.out.actions.append(action)

    def remove(self, cluster: str) -> None:
        """Remove the remote Job and copy on ``cluster`` (upstream ``RemoveRemoteObjects``)."""
        self.emit(
            RemoveRemoteObjects(
                cluster,
                str(self.meta.get("namespace", "")),
                str(self.meta.get("name", "")),
                self.job_name,
            )
        )
        self.remotes[cluster] = None

    def write_status(self) -> None:
        """Write the local Workload's status as edited so far."""
        self.emit(UpdateLocalWorkloadStatus({**self.wl, "status": self.status}))

    def event(self, kind: str, message: str) -> None:
        """Record a ``MultiKueue`` event of ``kind`` on the local Workload."""
        message = st.truncate_event_message(message)
        self.emit(RecordEvent(self.wl, kind, mk.EVENT_REASON, message))

    def update_check(self, state: str, message: str) -> None:
        """Upstream ``updateACS``: the message completed with ``, Previously: "<old>"``."""
        message = mk.with_previous(message, self.check_state)
        if set_check_state(self.status, self.view.check, state, message, self.now):
            self.write_status()

    def reject(self, message: str) -> Reconciled:
        """Set the check Rejected with ``message`` (no adapter, or not managed)."""
        self.update_check(CHECK_REJECTED, message)
        return self.out

    def remove_everywhere(self) -> None:
        """R0 and R2: remove whatever is on every connected cluster (a cluster where the view
        shows neither copy nor Job has nothing to remove)."""
        for cluster in self.available:
            if self.remotes[cluster] is not None or self.jobs[cluster] is not None:
                self.remove(cluster)

    def not_owned(self, cluster: str) -> str | None:
        """Upstream ``ValidateRemoteObjectOwnership`` of the remote Job on ``cluster``."""
        job = self.jobs.get(cluster)
        if job is None or is_owned(job, self.opt.origin):
            return None
        return ownership_error(job, self.opt.origin)

    def sync_job(self, cluster: str, *, create: bool) -> bool:
        """The adapter's ``SyncJob``: mirror the remote Job's status (SPEC §3.8), or create the
        remote Job when ``create`` (only ever for the admitting copy, SPEC §3.7). Returns
        whether the sync was deferred."""
        local_job, remote = self.view.local_job, self.jobs.get(cluster)
        if local_job is None:
            return False
        if remote is None:
            if create:
                job = remote_job(local_job, str(self.meta.get("name", "")), self.opt.origin)
                self.emit(CreateRemoteJob(cluster, job))
            return False
        update = determine_status_update(local_job, remote, self.now)
        if update.status is not None:
            self.emit(UpdateLocalJobStatus({**local_job, "status": update.status}))
        return update.deferred

    def copies(self) -> list[tuple[str, Obj | None]]:
        """The copies still there, by cluster name (upstream's ties are map order)."""
        return sorted(self.remotes.items())

    # --- the steps ----------------------------------------------------------------------------

    def run(self, state: DispatchState) -> None:
        """R2–R8 for a live Workload whose Job is MultiKueue's."""
        if st.is_finished(self.status) or not st.has_quota_reservation(self.status):
            # R2: nothing of a finished or unreserved workload stays on the workers.
            state.forget(workload_key(self.wl))
            self.remove_everywhere()
            if self.unavailable:
                self.out.requeue_after = self.opt.worker_lost_timeout
            return
        if self.remote_finished() or self.remote_evicted():
            return
        for cluster in self.available:  # R5
            remote = self.remotes[cluster]
            if remote is None or not spec_out_of_sync(self.wl, remote):
                continue
            if priority_changed(self.wl, remote):
                self.emit(UpdateRemoteWorkload(cluster, with_priority_of(self.wl, remote)))
            else:
                self.remove(cluster)
        admitting = earliest_true(self.contenders(), ADMITTED)  # R6
        if admitting is not None:
            self.converge(admitting)
        elif self.check_state == CHECK_READY:
            self.admitting_gone()
        else:
            self.nominate(state)

    def contenders(self) -> list[tuple[str, Obj | None]]:
        """The copies that may be the admitting one (R6). Beyond upstream's
        ``bestMatchByCondition``: once the check is Ready on a recorded cluster, only that
        cluster's copy is. A stale copy admitted earlier on a worker that comes back from an
        outage (the workload ran again elsewhere meanwhile) is a loser to delete (SPEC §3.15),
        not the winner: upstream picks it and then fails on the immutable clusterName on every
        reconcile, leaving the manager mirroring nothing."""
        recorded = self.status.get("clusterName")
        copies = list(self.copies())
        if recorded and self.check_state == CHECK_READY:
            return [(cluster, remote) for cluster, remote in copies if cluster == recorded]
        return copies

    def remote_finished(self) -> bool:
        """R3: a copy finished on its worker finishes the local workload (never OutOfSync)."""
        cluster = earliest_true(self.copies(), FINISHED)
        if cluster is None:
            return False
        finished = condition_of(self.remotes[cluster] or {}, FINISHED)
        if finished.get("reason") == REASON_OUT_OF_SYNC:
            if self.check_state == CHECK_READY:
                message = mk.out_of_sync_on_worker(cluster)
                self.update_check(CHECK_RETRY, message)
                self.event("Warning", mk.with_previous(message, CHECK_READY))
            return True
        error = self.not_owned(cluster)
        if error is not None:
            self.out.error = error
            return True
        # A missing remote Job is not created here: the copy is finished (SPEC §3.7 keeps Job
        # creation to the admitting copy); the local Job finishes from the Workload.
        self.sync_job(cluster, create=False)
        reason, message = str(finished.get("reason", "")), str(finished.get("message", ""))
        self.status = st.finish(self.wl, reason, message, self.now)
        self.write_status()
        return True

    def remote_evicted(self) -> bool:
        """R4: an evicted copy either drains a manager-side eviction (status mirrored until the
        local Job is inactive) or, evicted by its worker, sends the check to Retry."""
        cluster = earliest_true(self.copies(), EVICTED)
        if cluster is None:
            return False
        if st.is_evicted(self.status):
            error = self.not_owned(cluster)
            if error is not None:
                self.out.error = error
            elif self.sync_job(cluster, create=False):
                self.out.requeue_after = mk.SYNC_DEFERRED_REQUEUE_S
            return True
        if self.check_state != CHECK_READY:
            return False
        message = mk.evicted_on_worker(str(self.status.get("clusterName") or cluster), CHECK_READY)
        if set_check_state(self.status, self.view.check, CHECK_RETRY, message, self.now):
            self.write_status()
        self.event("Normal", message)
        return True

    def admitting_gone(self) -> None:
        """R6a: the check is Ready but no copy is admitted any more."""
        cluster = str(self.status.get("clusterName") or "")
        if cluster and cluster in self.unavailable:
            lost = next(c.lost_since for c in self.view.clusters if c.name == cluster)
            # No client at all: upstream measures from "now", so the grace never runs out.
            remaining = self.opt.worker_lost_timeout - (0.0 if lost is None else self.now - lost)
            if remaining > 0:
                self.out.requeue_after = remaining
                return
            self.update_check(CHECK_RETRY, mk.MSG_ADMITTING_REMOTE_LOST)
        elif not cluster:
            self.update_check(CHECK_RETRY, mk.MSG_NO_ADMITTING_CLUSTER)
            return
        else:
            self.update_check(CHECK_RETRY, mk.MSG_ADMITTING_REMOTE_GONE)
        self.stop_local_job()

    def stop_local_job(self) -> None:
        """Intentional divergence (SPEC §3.14): with the admitting copy lost or gone nothing
        mirrors the worker's Job any more, so its last ``active``/``ready`` counts are cleared
        and the eviction that follows can release the quota (upstream PR #15682)."""
        local_job = self.view.local_job
        if local_job is None:
            return
        status = dict(local_job.get("status") or {})
        if not (status.get("active") or status.get("ready")):
            return
        status["active"] = 0
        status.pop("ready", None)
        self.emit(UpdateLocalJobStatus({**local_job, "status": status}))

    def converge(self, cluster: str) -> None:
        """R6b: the admitting copy wins; the others go; its Job is created or mirrored."""
        for other, remote in self.copies():
            if other != cluster and remote is not None:
                self.remove(other)
        remote = self.remotes[cluster] or {}
        evicted = st.condition_true(self.status, EVICTED)
        if st.has_quota_reservation(self.status) and evicted:
            message = str(condition_of(self.wl, EVICTED).get("message", ""))
            message = st.truncate_condition_message(mk.evicted_on_manager(message))
            target = set_deactivation_target(
                remote, mk.REASON_EVICTED_ON_MANAGER, message, self.now
            )
            if target != (remote.get("status") or {}):
                self.emit(PatchRemoteWorkloadStatus(cluster, {**remote, "status": target}))
            return
        error = self.not_owned(cluster)
        settle = self.check_state not in (CHECK_RETRY, CHECK_REJECTED)
        recorded = self.status.get("clusterName")
        if error is None and settle and recorded and recorded != cluster:
            # Checked before the Job is created: a Job only ever goes to the recorded cluster.
            error = (
                "attempting to change immutable ClusterName from "
                f"{go_quote(str(recorded))} to {go_quote(cluster)}"
            )
        if error is not None:
            self.out.error = error
            return
        changed = ready_delayed_topology(self.status, remote)
        if settle:
            message = mk.admitted_on(cluster)
            transition = set_check_state(
                self.status, self.view.check, CHECK_READY, message, self.now
            )
            changed = changed or transition or not recorded
            changed = bool(self.status.pop("nominatedClusterNames", None)) or changed
            self.status["clusterName"] = cluster
            if changed:
                self.write_status()
            if transition:
                self.event("Normal", message)
            if self.check_state != CHECK_READY:
                self.count(mk.METRIC_ADMITTED, cluster)
        elif changed:
            self.write_status()
        # Beyond upstream (which creates the Job first): the admitting cluster is recorded
        # before its Job is created, so a failed record (the pass stops at it) never leaves a
        # Job running on a worker the manager does not know admitted it; were that worker then
        # lost, the Workload would be dispatched again at once, without workerLostTimeout's
        # grace and without a retry (found by the fault tests: a Job run twice).
        deferred = self.sync_job(cluster, create=True)
        # A periodic resync; sooner while the local Job waits to be unsuspended.
        resync = mk.SYNC_DEFERRED_REQUEUE_S if deferred else self.opt.worker_lost_timeout
        self.out.requeue_after = resync

    def count(self, metric: str, cluster: str) -> None:
        """Count ``metric`` for the Workload's ClusterQueue and ``cluster``."""
        cq = str((self.status.get("admission") or {}).get("clusterQueue") or "")
        self.emit(CountMetric(metric, (("cluster_queue", cq), ("cluster", cluster))))

    def nominate(self, state: DispatchState) -> None:
        """R8: nominate clusters (by the dispatcher) and keep a copy on exactly the nominated
        available ones."""
        if self.check_state != CHECK_PENDING or self.status.get("clusterName"):
            return
        if st.condition_true(self.status, EVICTED):
            # Beyond upstream, which may nominate again here: an evicted workload still holding
            # its quota is draining (its checks were reset to Pending); copies made now would be
            # removed as soon as the quota is released, and an incremental round started now
            # would hold back the real dispatch after the next reservation (scenario C1).
            return
        for other in st.checks_of(self.status):
            if other.get("name") != self.view.check and other.get("state") != CHECK_READY:
                return  # every other check first (SPEC §3.4 R8, scenario B17)
        nomination = self.dispatch(state)
        if nomination.changed:
            if nomination.nominated:
                self.status["nominatedClusterNames"] = list(nomination.nominated)
            else:
                self.status.pop("nominatedClusterNames", None)
            self.write_status()
        errors = [nomination.error] if nomination.error else []
        for name in nomination.nominated:
            if name not in self.remotes:
                errors.append(f"cluster {name}: {mk.ERR_NO_REMOTE_CLIENT}")
        for cluster in self.available:
            if cluster in nomination.nominated:
                if self.remotes[cluster] is None:
                    clone = clone_for_create(self.wl, self.opt.origin)
                    self.emit(CreateRemoteWorkload(cluster, clone))
                    self.count(mk.METRIC_DISPATCHED, cluster)
            elif self.remotes[cluster] is not None:
                self.remove(cluster)
        self.out.requeue_after = nomination.requeue_after
        self.out.error = "\n".join(errors) or None

    def dispatch(self, state: DispatchState) -> Nomination:
        """The configured dispatcher's nominations (SPEC §3.5)."""
        current = tuple(self.status.get("nominatedClusterNames") or ())
        if self.opt.dispatcher == DISPATCHER_ALL_AT_ONCE:
            return all_at_once(self.available, current)
        if self.opt.dispatcher == DISPATCHER_INCREMENTAL:
            return incremental(
                workload_key(self.wl),
                [c.name for c in self.view.clusters],
                current,
                state,
                self.now,
                step_size=effective_step_size(
                    self.opt.step_size, config_gate=self.opt.incremental_step_size_config
                ),
                round_s=self.opt.incremental_round_s,
                respect_config_order=self.opt.incremental_config_order,
            )
        return Nomination(current, False)  # external: someone else writes the nominations
