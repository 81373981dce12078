"""``Agent``: the node agent's reconcile loop (the kubelet's static pods, resource managers and
container lifecycle, on processes).

(Over 400 lines: admission, release, adoption and start-up share one lock and one state; the
merging of sources and the image lookup live beside it, in ``podsource`` and ``reconcile``.)

Every poll the agent reads its pod sources (the manifest directory, and any other
``PodSource``: the API server's pods bound to the node) and compares them with the pods it
runs: a pod whose manifest is gone is stopped and released, a changed one is stopped, released
and admitted again (a pinned pod, an API pod, is never restarted for a change), a new one is
admitted through the node engine, in the order its source gives, and started. A pod whose
source says it is being deleted is stopped with the deletion's grace period. A rejected pod
keeps the kubelet's reason and message and is not retried until its manifest changes, across
restarts too (``numaplane.agent.rejections``). After each admission and release, and every
``cpuManagerReconcilePeriod``, the shared pool's cpuset is written to every container that runs
on it (``numaplane.agent.cpupool``).

It refuses a host that lacks CPUs of its machine (``agent.host``) and a state directory another
agent holds (``agent.lock``); it holds that lock until ``close``.

One lock (``Agent.lock``) guards the node engine: admissions, releases, device-plugin updates
and the HTTP views all take it. Process changes reported by the runtimes only wake the
records writer, which never waits for a runtime while holding the lock.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from numaplane.agent.admissions import PodBook
from numaplane.agent.cgroups import CgroupDriver, detect_driver
from numaplane.agent.cpupool import CPUWriter, cpu_targets
from numaplane.agent.devices import DeviceAllocations, serve_device_plugins
from numaplane.agent.host import check_machine_is_host, host_online_cpus
from numaplane.agent.images import ImageTable
from numaplane.agent.lock import StateDirLock, lock_state_dir
from numaplane.agent.podsource import (
    ManifestDirectory,
    ManifestFault,
    PodSource,
    ScanResult,
    merge_scans,
)
from numaplane.agent.reconcile import limits_of, plan, runnable_specs
from numaplane.agent.records import ProcessSnapshot, RecordsWriter, records_of, snapshot_of
from numaplane.agent.rejections import Rejection
from numaplane.agent.runtime import PodRuntime, PodStatus, ProcessRecord
from numaplane.agent.startup import is_alive, kill_cgroup, kill_recorded, reset, restore
from numaplane.api.kubeletconfig import KubeletConfiguration
from numaplane.api.pod import Pod
from numaplane.cpuset import CPUSet
from numaplane.deviceplugin.registration import RegistrationServer
from numaplane.errors import NumaplaneError
from numaplane.node.admission import Admission, Node
from numaplane.node.checkpoint import CheckpointError
from numaplane.node.statedir import ensure_writable_dir
from numaplane.topology.model import Machine

_log = logging.getLogger(__name__)

#: The reason of a pod the agent could not admit for its own trouble (the kubelet's wording).
UNEXPECTED_ADMISSION_ERROR = "UnexpectedAdmissionError"


@dataclass(frozen=True)
class AgentOptions:
    """Everything the agent is started with."""

    machine: Machine
    config: KubeletConfiguration
    manifest_dir: Path | None
    state_dir: Path
    cgroup_root: Path = Path("/sys/fs/cgroup")
    cgroup_parent: str = "numaplane"
    poll_interval: float = 1.0
    reset_state: bool = False
    device_plugins: bool = True
    images: ImageTable | None = None
    """What images without a command run (``None``: the built-in table)."""


@dataclass
class PodEntry:
    """An admitted pod: its manifest, admission (``Admission.to_json()``, kept across
    restarts), runtime and start error if any. ``waiting`` names the containers that cannot
    start, with the kubelet's reason and message (``ErrImagePull``): the pod's containers
    are then not started."""

    pod: Pod
    manifest: Path | None
    admission: Mapping[str, Any] | None
    runtime: PodRuntime | None = None
    error: str | None = None
    waiting: Mapping[str, tuple[str, str]] = field(default_factory=dict)


class Agent:
    """One node's agent. ``open`` restores the state; ``run`` polls until stopped."""

    def __init__(
        self,
        options: AgentOptions,
        *,
        driver: CgroupDriver | None = None,
        warn: Callable[[str], None] | None = None,
        sources: Sequence[PodSource] = (),
    ) -> None:
        self.options = options
        self.lock = threading.RLock()
        self._warn = warn if warn is not None else _log.warning
        self.sources: list[PodSource] = list(sources)
        if options.manifest_dir is not None:
            self.sources.insert(0, ManifestDirectory(options.manifest_dir))
        self.images = options.images if options.images is not None else ImageTable()
        #: Called (from any thread, without the lock) after each admission, rejection,
        #: release and process change: the cluster side's status reporter and heartbeat.
        self.listeners: list[Callable[[], None]] = []
        self._wake = threading.Event()
        if driver is None:
            # The agent enforces its machine on this host (an injected driver is a test's).
            check_machine_is_host(options.machine, host_online_cpus())
        ensure_writable_dir(options.state_dir)
        self._state_lock: StateDirLock | None = lock_state_dir(options.state_dir)
        try:
            self._open(driver)
        except BaseException:
            self._release_state_lock()
            raise

    def _open(self, driver: CgroupDriver | None) -> None:
        options = self.options
        if options.reset_state:
            driver = driver if driver is not None else self._detect_driver()
            stopped = reset(options.state_dir, driver)
            if stopped:
                _log.info("reset: stopped %d recorded process(es)", len(stopped))
        # The state is checked before any cgroup is touched: a refusal leaves the host as is.
        restored = restore(options.state_dir, options.machine, options.config)
        self.driver: CgroupDriver = driver if driver is not None else self._detect_driver()
        self.node: Node = restored.node
        self._book = PodBook(restored.pod_records, restored.admission_records, restored.admissions)
        self._restarts = restored.restarts
        self.pods: dict[str, PodEntry] = {}
        self.rejections = restored.rejections
        self.faults: tuple[ManifestFault, ...] = ()
        self.directory_error: str | None = None
        self.state_error: str | None = None
        self._cpus = CPUWriter(self.driver)
        self.devices = DeviceAllocations(self.node.device_manager, self.lock)
        self._writer = RecordsWriter(restored.process_records, self._snapshot, self._failed)
        self.registration: RegistrationServer | None = None
        self._restored_pods = restored.pods
        self._restored_processes = restored.processes
        self._last_reconcile = time.monotonic()

    # -- start-up -------------------------------------------------------------------------

    def _detect_driver(self) -> CgroupDriver:
        machine = self.options.machine
        mems = CPUSet(machine.numa_ids) if machine.numa_ids else CPUSet([0])
        return detect_driver(
            self.options.cgroup_root,
            self.options.cgroup_parent,
            all_cpus=machine.all_cpu_ids,
            all_mems=mems,
            warn=self._warn,
        )

    @property
    def rejected(self) -> dict[str, Rejection]:
        """The pods the node refused, by uid (read under ``lock``)."""
        return self.rejections.current

    @property
    def all_cpus(self) -> CPUSet:
        """The machine's online CPUs."""
        return self.options.machine.all_cpu_ids

    def start(self) -> None:
        """Serve device plugins, re-adopt the restored pods' processes, start the writer."""
        if self.options.device_plugins:
            plugin_dir = self.options.state_dir / "device-plugins"
            self.registration = serve_device_plugins(
                self.node.device_manager, self.lock, plugin_dir
            )
        self._adopt_restored()
        self._writer.start()

    def _adopt_restored(self) -> None:
        known = {pod.uid for pod in self._restored_pods}
        orphans = [r for r in self._restored_processes if r.pod_uid not in known]
        if orphans:
            _log.info("stopping %d process(es) of pods no longer admitted", len(orphans))
            kill_recorded(orphans)
            for pod_uid in sorted({r.pod_uid for r in orphans}):
                for record in orphans:
                    if record.pod_uid == pod_uid:
                        kill_cgroup(self.driver, pod_uid, record.container)
                self._remove_cgroups(pod_uid)
        for pod in self._restored_pods:
            entry = PodEntry(pod, None, self._book.admission(pod.uid))
            with self.lock:
                self.pods[pod.uid] = entry
            records = records_of(self._restored_processes, pod.uid)
            counts = {name: n for (uid, name), n in self._restarts.items() if uid == pod.uid}
            self._run_pod(entry, records, counts)
        self._restored_pods = []
        self._restored_processes = []
        self._restarts = {}
        self.save_processes()
        self.reconcile_cpus(force=True)

    # -- the loop -------------------------------------------------------------------------

    def run(self, stop: threading.Event) -> None:
        """Poll the sources until ``stop`` is set (``wake`` polls at once); errors are logged,
        not raised."""
        period = self.options.config.cpu_manager_reconcile_period.total_seconds() or 10.0
        while not stop.is_set():
            try:
                self.sync()
                if time.monotonic() - self._last_reconcile >= period:
                    self.reconcile_cpus(force=True)
            except Exception:
                _log.exception("agent sync failed")
            self._wake.wait(self.options.poll_interval)
            self._wake.clear()

    def wake(self) -> None:
        """Poll the sources now rather than at the next interval (thread-safe)."""
        self._wake.set()

    def _notify(self) -> None:
        for listener in list(self.listeners):
            try:
                listener()
            except Exception:
                _log.exception("agent listener failed")

    def _runtime_changed(self) -> None:
        self._writer.wake()
        self._notify()

    def scan(self) -> ScanResult:
        """Every source's pods, merged in source order (the manifest directory first)."""
        return merge_scans(self.sources)

    def sync(self) -> None:
        """One pass: read the sources, stop what went away or changed, admit what is new."""
        scan = self.scan()
        self.directory_error = scan.error
        if scan.error is not None:
            # An unreadable source says nothing about the pods: keep them running.
            return
        self.faults = scan.faults
        with self.lock:
            running = {uid: e.pod for uid, e in self.pods.items()}
            self.rejections.match(scan.pods, set(running))
            rejected = self.rejections.refused()
            for uid, entry in self.pods.items():
                found = scan.pods.get(uid)
                if found is not None and entry.manifest is None:
                    entry.manifest = found.path
        # A pinned pod that runs is the pod it was admitted as (an API pod's object changes,
        # the pod does not).
        desired = {
            uid: running[uid] if mp.pinned and uid in running else mp.pod
            for uid, mp in scan.pods.items()
        }
        todo = plan(desired, running, rejected)
        for uid in todo.stop:
            self.stop_pod(uid, grace=scan.stopping.get(uid))
        for pod in todo.admit:
            found = scan.pods[pod.uid]
            self.admit_pod(pod, found.path, found.digest)
        if not todo.empty:
            self.save_processes()

    def admit_pod(
        self, pod: Pod, manifest: Path | None, digest: str | None = None
    ) -> Admission | None:
        """Admit ``pod``; on success record it and start its containers. ``digest`` identifies
        the manifest's content, so that a rejection outlives a restart."""
        try:
            return self._admit(pod, manifest, digest)
        finally:
            self._notify()

    def _admit(self, pod: Pod, manifest: Path | None, digest: str | None) -> Admission | None:
        with self.lock:
            self.rejections.discard(pod.uid)
            try:
                admission = self.node.admit(pod)
            except NumaplaneError as err:
                self.rejections.add(
                    Rejection(pod, manifest, UNEXPECTED_ADMISSION_ERROR, str(err), digest=digest)
                )
                return None
            if not admission.admitted:
                why = (admission.reason or UNEXPECTED_ADMISSION_ERROR, admission.message or "")
                rejection = Rejection(pod, manifest, *why, admission.to_json(), digest=digest)
                self.rejections.add(rejection)
                _log.info("pod %s rejected: %s: %s", pod.key, admission.reason, admission.message)
                return admission
            explained = admission.to_json()
            try:
                self._book.record(pod.uid, explained, self.node.pods)
                self.state_error = None
            except CheckpointError as err:
                # Without its record the pod would be lost (and its resources leaked) at the
                # next restart: refuse it now and try again at the next scan.
                self.node.release(pod.uid)
                self.state_error = str(err)
                message = f"cannot record the pod in the state directory: {err}"
                self.rejections.add(
                    Rejection(pod, manifest, UNEXPECTED_ADMISSION_ERROR, message, retry=True)
                )
                return admission
            entry = PodEntry(pod, manifest, explained)
            self.pods[pod.uid] = entry
        _log.info("pod %s admitted", pod.key)
        self._run_pod(entry, None, {})
        self.reconcile_cpus()
        return admission

    def stop_pod(self, pod_uid: str, *, grace: int | None = None) -> None:
        """Stop the pod's containers (``grace``: a deletion's grace period in seconds, over the
        pod's ``terminationGracePeriodSeconds``), forget it in the records, release its
        resources."""
        with self.lock:
            entry = self.pods.get(pod_uid)
        if entry is None:
            return
        if entry.runtime is not None and grace is not None:
            entry.runtime.grace_seconds = max(grace, 0)
        if entry.runtime is not None:
            try:
                entry.runtime.stop()
            except NumaplaneError as err:
                _log.error("stopping pod %s: %s", entry.pod.key, err)
        self.save_processes(exclude=pod_uid)
        with self.lock:
            remaining = [p for p in self.node.pods if p.uid != pod_uid]
            try:
                self._book.forget(pod_uid, remaining)
            except CheckpointError as err:
                # The release goes on: a restart finds the pod recorded but its manifest gone,
                # and releases it again.
                self.state_error = str(err)
                _log.error("cannot record the release of %s: %s", entry.pod.key, err)
            with contextlib.suppress(KeyError):
                self.node.release(pod_uid)
            del self.pods[pod_uid]
            self._cpus.forget(pod_uid)
            self.devices.forget(pod_uid)
        for container in entry.pod.all_containers():
            kill_cgroup(self.driver, pod_uid, container.name)
        self._remove_cgroups(pod_uid)
        _log.info("pod %s stopped and released", entry.pod.key)
        self.reconcile_cpus()
        self._notify()

    def _remove_cgroups(self, pod_uid: str) -> None:
        try:
            self.driver.remove_pod(pod_uid)
        except (NumaplaneError, OSError) as err:
            _log.warning("cannot remove the cgroups of pod %s: %s", pod_uid, err)

    # -- containers -----------------------------------------------------------------------

    def _run_pod(
        self, entry: PodEntry, adopt: list[ProcessRecord] | None, restarts: Mapping[str, int]
    ) -> None:
        """Set up the pod's cgroups and start (or re-adopt) its containers; ``restarts`` are
        the restart counts an adopted pod had."""
        pod = entry.pod
        try:
            self.driver.ensure_pod(pod.uid)
            with self.lock:
                for container in pod.all_containers():
                    placement = self.node.placement(pod, container.name)
                    limits = limits_of(
                        pod, placement, self.node.cpu_manager.shared_pool(), self.all_cpus
                    )
                    self.driver.ensure_container(pod.uid, container.name, limits)
                    self._cpus.applied(pod.uid, container.name, limits.cpus)
            specs, waiting = runnable_specs(pod, self.images)
            if waiting:
                # As a pull that failed: the containers wait (numaplane starts none of the
                # pod's containers then, where the kubelet starts the others).
                entry.waiting = waiting
                _log.error(
                    "pod %s cannot start: %s", pod.key, "; ".join(m for _, m in waiting.values())
                )
                return
            runtime = PodRuntime(
                pod.uid,
                specs,
                pod.restart_policy,
                pod.termination_grace_period_seconds,
                cgroups=self.driver,
                log_dir=self.options.state_dir / "logs" / pod.uid,
                extra_env=lambda name: self.devices.env(pod.uid, name),
                on_change=self._runtime_changed,
                restart_counts=restarts,
            )
            entry.runtime = runtime
            if adopt:
                live = {r.container for r in adopt if is_alive(r)}
                for container in pod.all_containers():
                    # A process the records never named (a crash between its start and its
                    # record) would run beside the one started now: a container without a
                    # live recorded process starts from an empty cgroup. Where the recorded
                    # process lives, the rest of its cgroup is its own descendants.
                    if container.name not in live:
                        kill_cgroup(self.driver, pod.uid, container.name)
                died = runtime.adopt(adopt)
                if died:
                    _log.info("pod %s: %s exited while the agent was down", pod.key, died)
            else:
                for container in pod.all_containers():
                    kill_cgroup(self.driver, pod.uid, container.name)
                runtime.start()
        except (NumaplaneError, OSError) as err:
            entry.error = str(err)
            _log.error("pod %s cannot run: %s", pod.key, err)
        self._writer.wake()

    # -- the shared pool ------------------------------------------------------------------

    def reconcile_cpus(self, *, force: bool = False) -> None:
        """Write the CPUs of every container whose CPUs changed (``force``: read each cgroup
        back and fix what drifted); see ``numaplane.agent.cpupool``."""
        with self.lock:
            pods = {uid: entry.pod for uid, entry in self.pods.items()}
            targets = cpu_targets(self.node, pods, self.all_cpus)
            self._last_reconcile = time.monotonic()
        self._cpus.write(targets, force=force)

    # -- process records ------------------------------------------------------------------

    def process_records(self, exclude: str | None = None) -> list[ProcessRecord]:
        """The processes of every running pod, as the runtimes report them."""
        return self._snapshot(exclude).processes

    def _snapshot(self, exclude: str | None = None) -> ProcessSnapshot:
        """What the process records file is to hold (without pod ``exclude``)."""
        with self.lock:
            runtimes = [e.runtime for uid, e in self.pods.items() if uid != exclude and e.runtime]
        return snapshot_of(runtimes)

    def save_processes(self, exclude: str | None = None) -> None:
        """Write the process records now (without pod ``exclude``)."""
        self._writer.save(exclude)

    def _failed(self, error: str) -> None:
        self.state_error = error

    # -- views and shutdown ---------------------------------------------------------------

    def statuses(self) -> dict[str, PodStatus | None]:
        """Each admitted pod's runtime status (``None`` when it never got a runtime)."""
        with self.lock:
            entries = dict(self.pods)
        return {uid: e.runtime.status() if e.runtime else None for uid, e in entries.items()}

    def registered_plugins(self) -> int:
        """Device plugins connected now."""
        return len(self.registration.sources()) if self.registration is not None else 0

    def stop_all_pods(self) -> None:
        """Stop and release every pod (``--stop-pods-on-exit`` and tests)."""
        with self.lock:
            uids = list(self.pods)
        for uid in reversed(uids):
            self.stop_pod(uid)

    def close(self) -> None:
        """Stop serving plugins and writing records; the pods keep running, as with the
        kubelet, and a restarted agent adopts them."""
        self.save_processes()
        self._writer.close()
        if self.registration is not None:
            self.registration.stop()
        self._release_state_lock()

    def _release_state_lock(self) -> None:
        lock, self._state_lock = self._state_lock, None
        if lock is not None:
            lock.release()


__all__ = ["UNEXPECTED_ADMISSION_ERROR", "Agent", "AgentOptions", "PodEntry", "Rejection"]
