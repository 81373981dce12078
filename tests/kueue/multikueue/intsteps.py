"""Steps the INT scenarios share (see intworld): a Job dispatched to both workers, a copy
admitted on one, another controller's admission check state."""

from __future__ import annotations

from typing import Any

from numaplane.testing import multikueue_int as mk
from tests.kueue.multikueue.intworld import World

Obj = dict[str, Any]
ORIGIN_LABEL = "kueue.x-k8s.io/multikueue-origin"
PREBUILT_LABEL = "kueue.x-k8s.io/prebuilt-workload-name"
ADMITTED_ON_1 = 'The workload was admitted on "worker1"'


def spec_equal(a: Obj | None, b: Obj | None) -> bool:
    """Whether two workloads have the same spec."""
    return a is not None and b is not None and a["spec"] == b["spec"]


def state_of(wl: Obj | None) -> tuple[str, str] | None:
    """The MultiKueue check's (state, message)."""
    found = mk.check_state(wl)
    return None if found is None else (found["state"], found.get("message", ""))


async def dispatched(w: World, job_name: str, **job_args: Any) -> tuple[Obj, str]:
    """Create Job ``job_name`` in q1, reserve its workload on the manager, wait for the copies
    on both workers (spec-equal, nominated [worker1, worker2]); the Job and workload name."""
    job = await w.create("manager", mk.batch_job(w.namespace, job_name, **job_args))
    wl = await w.workload_of_job(job)
    name = wl["metadata"]["name"]
    await mk.reserve(w.manager.client, wl)
    await w.until_copies(name, {"worker1", "worker2"})
    local = await w.workload("manager", name)
    for worker in mk.WORKERS:
        assert spec_equal(await w.workload(worker, name), local)
    await w.until_workload(
        "manager", name, lambda x: mk.nominated(x) == ["worker1", "worker2"], "nominated both"
    )
    return job, name


async def admitted_on(w: World, name: str, worker: str) -> Obj:
    """Reserve the ``worker`` copy; wait for the manager's check Ready on it and the other
    copy gone; the manager workload."""
    copy = await w.workload(worker, name)
    assert copy is not None
    await mk.reserve(w.client(worker), copy)
    message = f'The workload was admitted on "{worker}"'
    local = await w.until_workload(
        "manager", name, lambda x: state_of(x) == ("Ready", message), "Ready"
    )
    await w.until_copies(name, {worker})
    assert local is not None
    return local


async def runs_alone_and_finishes(w: World, name: str, job: str, worker: str) -> None:
    """Workload ``name`` admitted on ``worker``: Job ``job`` is there alone with our labels
    and no ``managedBy``; once it succeeds there the manager's workload is Finished, the copies
    go and the manager's Job is Complete."""
    remote = await w.until(lambda: w.job(worker, job), f"job on {worker}")
    labels = remote["metadata"]["labels"]
    assert labels[PREBUILT_LABEL] == name
    assert labels[ORIGIN_LABEL] == "multikueue"
    assert "managedBy" not in remote["spec"]
    for other in mk.WORKERS:
        if other != worker:
            assert await w.job(other, job) is None

    await w.finish_job(worker, job)
    finished = await w.until_workload(
        "manager", name, lambda x: mk.condition(x, "Finished") is not None, "Finished"
    )
    assert mk.condition(finished, "Finished") == ("True", "Succeeded", "Job finished successfully")
    await w.until_copies(name, set())

    async def manager_job_complete() -> bool:
        found = await w.job("manager", job)
        return (mk.condition(found, "Complete") or ("",))[0] == "True"

    await w.until(manager_job_complete, "the manager Job Complete")


async def set_check(w: World, name: str, check: str, state: str, message: str = "") -> None:
    """Play check ``check``'s controller: its state on the manager workload ``name``."""

    def edit(wl: Obj) -> None:
        for entry in wl["status"]["admissionChecks"]:
            if entry["name"] == check:
                entry["state"] = state
                entry["message"] = message
                entry["lastTransitionTime"] = mk.now_rfc3339()

    await w.change("manager", mk.workload_ref(w.namespace, name), edit, status=True)
