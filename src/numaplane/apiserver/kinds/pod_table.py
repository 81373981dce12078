"""The table ``kubectl get pods`` prints (``printPod`` of ``pkg/printers/internalversion``):
READY, STATUS with its reasons (init containers, waiting and terminated states, a deletion in
progress, ``NodeLost``), RESTARTS with the time of the last one, and the wide columns."""

from __future__ import annotations

from typing import Any, Final

from numaplane.apiserver.kinds.meta import as_dict, as_int, as_list, as_str, metadata
from numaplane.apiserver.kinds.pod import SCHEDULING_GATED
from numaplane.apiserver.kinds.printing import (
    AGE_COLUMN,
    NAME_COLUMN,
    NONE,
    Printer,
    age,
    human_duration,
    name_of,
    parse_time,
)
from numaplane.apiserver.resource import TableColumn

Object = dict[str, Any]

POD_COLUMNS: Final = (
    NAME_COLUMN,
    TableColumn(
        "Ready", "string", "", "The aggregate readiness state of this pod for accepting traffic."
    ),
    TableColumn("Status", "string", "", "The aggregate status of the containers in this pod."),
    TableColumn(
        "Restarts",
        "string",
        "",
        "The number of times the containers in this pod have been restarted and when the last "
        "container in this pod has restarted.",
    ),
    AGE_COLUMN,
    TableColumn("IP", "string", "", "podIP address allocated to the pod.", 1),
    TableColumn("Node", "string", "", "NodeName indicates in which node this pod is scheduled.", 1),
    TableColumn("Nominated Node", "string", "", "nominatedNodeName of the pod.", 1),
    TableColumn("Readiness Gates", "string", "", "The readiness gates of the pod.", 1),
)


def _later(current: float | None, candidate: object) -> float | None:
    at = parse_time(candidate)
    if at is not None and (current is None or at > current):
        return at
    return current


def _terminated_reason(terminated: Object, prefix: str) -> str:
    reason = as_str(terminated.get("reason"))
    if reason:
        return prefix + reason
    signal = as_int(terminated.get("signal"))
    if signal:
        return f"{prefix}Signal:{signal}"
    return f"{prefix}ExitCode:{as_int(terminated.get('exitCode'))}"


def pod_row(pod: Object, now: float) -> list[Any]:
    """``printPod``: ready/total, the status reason kubectl shows, restarts (with the last
    restart's age) and age, then IP, node, nominated node and readiness gates."""
    spec, status = as_dict(pod.get("spec")), as_dict(pod.get("status"))
    init_specs = {
        as_str(as_dict(c).get("name")): as_dict(c) for c in as_list(spec.get("initContainers"))
    }

    def restartable(name: str) -> bool:
        return as_str(init_specs.get(name, {}).get("restartPolicy")) == "Always"

    total = len(as_list(spec.get("containers"))) + sum(1 for n in init_specs if restartable(n))
    ready = 0
    restarts = 0
    sidecar_restarts = 0
    last_restart: float | None = None
    last_sidecar_restart: float | None = None
    phase = as_str(status.get("phase"))
    reason = as_str(status.get("reason")) or phase
    for condition in as_list(status.get("conditions")):
        condition = as_dict(condition)
        if condition.get("type") == "PodScheduled" and condition.get("reason") == SCHEDULING_GATED:
            reason = SCHEDULING_GATED
    initializing = False
    init_statuses = as_list(status.get("initContainerStatuses"))
    for i, item in enumerate(init_statuses):
        cs = as_dict(item)
        name = as_str(cs.get("name"))
        restarts += as_int(cs.get("restartCount"))
        finished = as_dict(as_dict(cs.get("lastState")).get("terminated")).get("finishedAt")
        last_restart = _later(last_restart, finished)
        if restartable(name):
            sidecar_restarts += as_int(cs.get("restartCount"))
            last_sidecar_restart = _later(last_sidecar_restart, finished)
        state = as_dict(cs.get("state"))
        terminated = state.get("terminated")
        waiting = as_dict(state.get("waiting"))
        if isinstance(terminated, dict) and as_int(terminated.get("exitCode")) == 0:
            continue
        if restartable(name) and cs.get("started") is True:
            if cs.get("ready") is True:
                ready += 1
            continue
        if isinstance(terminated, dict):
            reason = _terminated_reason(terminated, "Init:")
        elif as_str(waiting.get("reason")) and waiting.get("reason") != "PodInitializing":
            reason = "Init:" + as_str(waiting.get("reason"))
        else:
            reason = f"Init:{i}/{len(init_specs)}"
        initializing = True
        break
    initialized = any(
        as_dict(c).get("type") == "Initialized" and as_dict(c).get("status") == "True"
        for c in as_list(status.get("conditions"))
    )
    if not initializing or initialized:
        restarts = sidecar_restarts
        last_restart = last_sidecar_restart
        has_running = False
        for item in reversed(as_list(status.get("containerStatuses"))):
            cs = as_dict(item)
            restarts += as_int(cs.get("restartCount"))
            finished = as_dict(as_dict(cs.get("lastState")).get("terminated")).get("finishedAt")
            last_restart = _later(last_restart, finished)
            state = as_dict(cs.get("state"))
            waiting, terminated = as_dict(state.get("waiting")), state.get("terminated")
            if as_str(waiting.get("reason")):
                reason = as_str(waiting.get("reason"))
            elif isinstance(terminated, dict):
                reason = _terminated_reason(terminated, "")
            elif cs.get("ready") is True and isinstance(state.get("running"), dict):
                has_running = True
                ready += 1
        if reason == "Completed" and has_running:
            pod_ready = any(
                as_dict(c).get("type") == "Ready" and as_dict(c).get("status") == "True"
                for c in as_list(status.get("conditions"))
            )
            reason = "Running" if pod_ready else "NotReady"
    deleting = bool(metadata(pod).get("deletionTimestamp"))
    if deleting and as_str(status.get("reason")) == "NodeLost":
        reason = "Unknown"
    elif deleting and phase not in ("Succeeded", "Failed"):
        reason = "Terminating"
    shown_restarts = str(restarts)
    if restarts and last_restart is not None:
        shown_restarts = f"{restarts} ({human_duration(now - last_restart)} ago)"
    ips = as_list(status.get("podIPs"))
    pod_ip = as_str(as_dict(ips[0]).get("ip")) if ips else ""
    gates = as_list(spec.get("readinessGates"))
    gates_cell = NONE
    if gates:
        true_count = 0
        for gate in gates:
            wanted = as_dict(gate).get("conditionType")
            for condition in as_list(status.get("conditions")):
                if as_dict(condition).get("type") == wanted:
                    true_count += as_dict(condition).get("status") == "True"
                    break
        gates_cell = f"{true_count}/{len(gates)}"
    return [
        name_of(pod),
        f"{ready}/{total}",
        reason,
        shown_restarts,
        age(pod, now),
        pod_ip or NONE,
        as_str(spec.get("nodeName")) or NONE,
        as_str(status.get("nominatedNodeName")) or NONE,
        gates_cell,
    ]


POD_PRINTER: Final = Printer(POD_COLUMNS, pod_row)
