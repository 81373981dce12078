"""Opening the agent's state directory: restore, refuse or reset.

The state directory holds the kubelet-format checkpoints (``cpu_manager_state``,
``memory_manager_state``, ``kubelet_internal_checkpoint``), ``numaplane_pods.json`` (the
admitted pods), ``numaplane_processes.json`` (the process of each container) and
``numaplane_rejections.json`` (the refused manifests) and ``numaplane_admissions.json`` (what
each admitted pod was told: its affinity and explanation). ``restore`` rebuilds the node from them;
anything unusable (a corrupt checkpoint, a checkpoint of another
CPU or memory policy, a state the policy refuses) is an ``AgentStateError`` naming the file, and
the agent refuses to start. ``reset`` is ``--reset-state``: it stops the processes the
directory records, removes their cgroups and deletes the files.

Write order makes a crash at any point recoverable: an admission writes the checkpoints before
the pod records, a release removes the pod from the records before the checkpoints; so the
checkpoints hold a superset of the recorded pods, and ``restore`` drops every allocation of a
pod the records do not name (the kubelet's stale-state cleanup), first mending the CPU and
memory checkpoints a crash left between two of their writes (``numaplane.agent.repair``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from numaplane.agent.admissions import ADMISSIONS_FILE, AdmissionRecords, restore_affinities
from numaplane.agent.cgroups import CgroupDriver
from numaplane.agent.records import PROCESS_RECORDS_FILE, ContainerKey, ProcessRecords
from numaplane.agent.rejections import REJECTIONS_FILE, RejectionRecords, Rejections
from numaplane.agent.repair import (
    drop_stale_allocations,
    drop_unrecorded_devices,
    repair_torn_cpu_state,
    repair_torn_memory_state,
)
from numaplane.agent.runtime import ProcessRecord, process_start_time
from numaplane.api.kubeletconfig import KubeletConfiguration
from numaplane.api.pod import Pod
from numaplane.errors import InputError, NumaplaneError
from numaplane.node.admission import Node
from numaplane.node.checkpoint import CheckpointError, CheckpointStore, container_map
from numaplane.node.cpumanager.state_checkpoint import CheckpointState as CPUState
from numaplane.node.devicemanager.state_checkpoint import CheckpointState as DeviceState
from numaplane.node.memorymanager.state_checkpoint import CheckpointState as MemoryState
from numaplane.node.podrecords import POD_RECORDS_FILE, PodRecords
from numaplane.node.statedir import ensure_writable_dir, open_node_states
from numaplane.topology.model import Machine

_log = logging.getLogger(__name__)

#: Every file ``--reset-state`` removes.
STATE_FILES = (
    CPUState.checkpoint_name,
    MemoryState.checkpoint_name,
    DeviceState.checkpoint_name,
    POD_RECORDS_FILE,
    PROCESS_RECORDS_FILE,
    REJECTIONS_FILE,
    ADMISSIONS_FILE,
)


class AgentStateError(InputError):
    """The state directory cannot be used; ``source`` is the offending file."""


@dataclass
class Restored:
    """A node rebuilt from a state directory, with its pods and their recorded processes."""

    node: Node
    pods: list[Pod]
    processes: list[ProcessRecord]
    pod_records: PodRecords
    process_records: ProcessRecords
    rejections: Rejections
    admission_records: AdmissionRecords
    admissions: dict[str, Mapping[str, Any]]
    restarts: Mapping[ContainerKey, int]


def restore(state_dir: Path, machine: Machine, config: KubeletConfiguration) -> Restored:
    """Open ``state_dir`` and rebuild the node; ``AgentStateError`` when it is unusable."""
    ensure_writable_dir(state_dir)
    store = CheckpointStore(state_dir)
    pod_records = PodRecords(store)
    process_records = ProcessRecords(store)
    admission_records = AdmissionRecords(store)
    try:
        pods = _load_pods(pod_records)
        snapshot = process_records.load_snapshot()
        admissions = admission_records.load(machine.numa_ids)
    except InputError as err:
        raise AgentStateError(err.source or str(state_dir), _with_advice(err.reason)) from err
    except CheckpointError as err:
        raise AgentStateError(err.source or str(state_dir), str(err)) from err
    try:
        # The recorded pods stand for the kubelet's runtime: their container IDs are the
        # container map a CPU manager checkpoint of the V1 layout is migrated through.
        states = open_node_states(
            state_dir,
            config.cpu_manager_policy,
            config.memory_manager_policy,
            initial_containers=container_map(pods),
        )
    except CheckpointError as err:
        raise AgentStateError(err.source or str(state_dir), _with_advice(str(err))) from err
    recorded = {p.uid for p in pods}
    # The admissions file is written before the pod records and pruned after them.
    admissions = {uid: doc for uid, doc in admissions.items() if uid in recorded}
    if config.cpu_manager_policy == "static":
        repair_torn_cpu_state(states.cpu, recorded, machine, config)
    if config.memory_manager_policy == "Static":
        repair_torn_memory_state(states.memory, recorded, machine, config)
    drop_unrecorded_devices(states.devices, recorded)
    try:
        node = Node(machine, config, states=states)
    except InputError:
        raise
    except NumaplaneError as err:
        # The managers validate the restored state against the configuration (reserved CPUs
        # changed, an assignment outside the machine): the kubelet refuses to start too.
        raise AgentStateError(str(state_dir), _with_advice(str(err))) from err
    for pod in pods:
        node.adopt(pod)
        if pod.uid in admissions:
            restore_affinities(node, pod.uid, admissions[pod.uid])
    drop_stale_allocations(node)
    return Restored(
        node,
        pods,
        snapshot.processes,
        pod_records,
        process_records,
        _rejections(store),
        admission_records,
        admissions,
        snapshot.restarts,
    )


def _load_pods(records: PodRecords) -> list[Pod]:
    """The recorded pods; any malformed entry is an ``InputError`` naming the file."""
    try:
        return records.load()
    except InputError:
        raise
    except (TypeError, ValueError, KeyError, AttributeError, RecursionError) as err:
        # The manifest parser is made for files a person wrote, checked field by field; a
        # records file with entries of the wrong shape must still be refused as one line.
        reason = f"missing key {err}" if isinstance(err, KeyError) else str(err)
        raise InputError(records.path, f"not a numaplane pod record file: {reason}") from err


def _rejections(store: CheckpointStore) -> Rejections:
    # Forgotten rejections only cost one more admission attempt each: an unreadable file is
    # no reason to refuse to start.
    records = RejectionRecords(store)
    try:
        remembered = records.load()
    except (InputError, CheckpointError) as err:
        _log.warning("ignoring the unreadable rejections file: %s", err)
        remembered = {}
    return Rejections(records, remembered)


def reset(state_dir: Path, driver: CgroupDriver | None) -> list[ProcessRecord]:
    """``--reset-state``: stop the recorded processes, remove their cgroups, delete the files.

    Unreadable records are skipped (a corrupt file is why one resets). Returns the processes
    that were stopped.
    """
    ensure_writable_dir(state_dir)
    store = CheckpointStore(state_dir)
    try:
        processes = ProcessRecords(store).load()
    except (InputError, CheckpointError) as err:
        _log.warning("ignoring unreadable process records: %s", err)
        processes = []
    try:
        pod_uids = {pod.uid for pod in _load_pods(PodRecords(store))}
    except (InputError, CheckpointError) as err:
        _log.warning("ignoring unreadable pod records: %s", err)
        pod_uids = set()
    stopped = kill_recorded(processes)
    if driver is not None:
        for pod_uid in sorted(pod_uids | {r.pod_uid for r in processes}):
            for record in processes:
                if record.pod_uid == pod_uid:
                    kill_cgroup(driver, pod_uid, record.container)
            with contextlib.suppress(NumaplaneError, OSError):
                driver.remove_pod(pod_uid)
    for name in STATE_FILES:
        try:
            store.remove(name)
        except CheckpointError as err:
            raise AgentStateError(str(store.path(name)), str(err)) from err
    return stopped


def is_alive(record: ProcessRecord) -> bool:
    """Whether the recorded process still runs (same pid, same start time, not a zombie)."""
    if process_start_time(record.pid) != record.start_time:
        return False
    try:
        with open(f"/proc/{record.pid}/stat", "rb") as handle:
            data = handle.read()
    except OSError:
        return False
    state = data[data.rfind(b")") + 2 :][:1]
    return state not in (b"Z", b"X")


def kill_recorded(records: Iterable[ProcessRecord], timeout: float = 5.0) -> list[ProcessRecord]:
    """SIGKILL every recorded process that still runs (its process group too); wait for them."""
    alive = [r for r in records if is_alive(r)]
    for record in alive:
        _kill_group(record.pid)
    deadline = time.monotonic() + timeout
    while any(is_alive(r) for r in alive) and time.monotonic() < deadline:
        time.sleep(0.02)
    return alive


def kill_cgroup(driver: CgroupDriver, pod_uid: str, container: str) -> list[int]:
    """SIGKILL every process in a container's cgroup (processes the records never named: a
    crash between a start and its record)."""
    try:
        pids = driver.pids(pod_uid, container)
    except (NumaplaneError, OSError):
        return []
    for pid in pids:
        if pid != os.getpid():
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline:
        with contextlib.suppress(NumaplaneError, OSError):
            left = [p for p in driver.pids(pod_uid, container) if _running(p)]
            if not left:
                break
        time.sleep(0.02)
    return pids


def _running(pid: int) -> bool:
    start = process_start_time(pid)
    return start is not None and is_alive(ProcessRecord("", "", pid, start))


def _kill_group(pid: int) -> None:
    with contextlib.suppress(OSError):
        if os.getpgid(pid) == pid:
            os.killpg(pid, signal.SIGKILL)
            return
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)


def _with_advice(message: str) -> str:
    return f"{message} (start with --reset-state to discard the state and its pods)"
