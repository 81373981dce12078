"""The Workload of a Job: upstream's name hash, the object built from the Job, its priority, and
whether a Workload still matches its Job."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import pytest

from numaplane.kueue.api.model import ResourceFlavor
from numaplane.kueue.errors import KueueError
from numaplane.kueue.jobs import (
    PriorityClassInfo,
    equivalent,
    extract_priority,
    new_workload,
    owned_workloads,
    owner_job_key,
    workload_name,
)
from numaplane.kueue.jobs.batchjob import (
    finished,
    pod_sets,
    pods_count,
    pods_ready,
    prebuilt_workload_name,
)
from numaplane.kueue.jobs.patch import merge_patch
from tests.kueue.jobs.helpers import NS, UID, WL_NAME, admitted, cond, job, with_status


@dataclass(frozen=True)
class NameCase:
    name: str
    owner: str
    uid: str
    kind: str
    group: str
    want: str


NAME_CASES = [
    # upstream TestGetWorkloadNameForOwnerWithGVK "RegularInput": kind-owner-<sha1[:5]>
    NameCase("regular input", "owner", "uid", "kind", "group", "kind-owner-2aabf"),
    NameCase("batch job", "sample-job", UID, "Job", "batch", WL_NAME),
    # "InputThatResultsInTrimmedPrefix": the prefix is cut to 247 characters, hash of the full name
    NameCase("trimmed prefix", "a" * 247, "uid", "kind", "group", "kind-" + "a" * 242 + "-e93ce"),
]


@pytest.mark.parametrize("case", NAME_CASES, ids=lambda c: c.name)
def test_workload_name(case: NameCase) -> None:
    assert workload_name(case.owner, case.uid, case.kind, case.group) == case.want


def test_new_workload_from_the_quick_start_job() -> None:
    source = job(
        labels={"team": "a", "kueue.x-k8s.io/max-exec-time-seconds": "600"},
        annotations={"provreq.kueue.x-k8s.io/ValidUntilSeconds": "60", "other": "x"},
    )
    ref = {"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass", "name": "high"}
    wl = new_workload(source, 1000, ref, label_keys_to_copy=("team",))
    template = copy.deepcopy(source["spec"]["template"])
    template["metadata"]["labels"] = {}  # the Job controller's labels are not copied
    assert wl == {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {
            "name": WL_NAME,
            "namespace": NS,
            "labels": {"team": "a", "kueue.x-k8s.io/job-uid": UID},
            "annotations": {"provreq.kueue.x-k8s.io/ValidUntilSeconds": "60"},
            "finalizers": ["kueue.x-k8s.io/resource-in-use"],
            "ownerReferences": [
                {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "name": "sample-job",
                    "uid": UID,
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "queueName": "user-queue",
            "podSets": [{"name": "main", "template": template, "count": 3}],
            "maximumExecutionTimeSeconds": 600,
            "priorityClassRef": ref,
            "priority": 1000,
        },
    }


@dataclass(frozen=True)
class CountCase:
    name: str
    parallelism: int
    completions: int | None
    min_parallelism: str | None
    want_count: int
    want_min: int | None


COUNT_CASES = [
    CountCase("parallelism", 3, 5, None, 3, None),
    CountCase("completions cap parallelism", 4, 2, None, 2, None),
    CountCase("no completions", 4, None, None, 4, None),
    CountCase("partial admission", 5, 5, "2", 5, 2),
    CountCase("bad min parallelism is ignored", 5, 5, "two", 5, None),
]


@pytest.mark.parametrize("case", COUNT_CASES, ids=lambda c: c.name)
def test_pod_set_count_and_min_count(case: CountCase) -> None:
    annotations = (
        {"kueue.x-k8s.io/job-min-parallelism": case.min_parallelism}
        if case.min_parallelism
        else None
    )
    source = job(
        parallelism=case.parallelism, completions=case.completions, annotations=annotations
    )
    (pod_set,) = pod_sets(source)
    assert (pod_set["count"], pod_set.get("minCount")) == (case.want_count, case.want_min)
    assert pods_count(source) == case.want_count


@dataclass(frozen=True)
class PriorityCase:
    name: str
    label: str | None
    pod_class: str | None
    classes: tuple[PriorityClassInfo, ...]
    want: tuple[dict[str, str] | None, int] | None
    error: str = ""


_WPC = {"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass"}
_PC = {"group": "scheduling.k8s.io", "kind": "PriorityClass"}
PRIORITY_CASES = [
    PriorityCase(
        "workload priority class label", "high", None, (), ({**_WPC, "name": "high"}, 10000)
    ),
    PriorityCase(
        "the label wins over the pod's class",
        "high",
        "pod-low",
        (PriorityClassInfo("pod-low", 5),),
        ({**_WPC, "name": "high"}, 10000),
    ),
    PriorityCase(
        "pod priority class",
        None,
        "pod-low",
        (PriorityClassInfo("pod-low", 5),),
        ({**_PC, "name": "pod-low"}, 5),
    ),
    PriorityCase(
        "the lowest global default",
        None,
        None,
        (
            PriorityClassInfo("d1", 7, global_default=True),
            PriorityClassInfo("d2", 3, global_default=True),
            PriorityClassInfo("x", 1),
        ),
        ({**_PC, "name": "d2"}, 3),
    ),
    PriorityCase("nothing: priority 0", None, None, (PriorityClassInfo("x", 1),), (None, 0)),
    PriorityCase(
        "missing workload priority class",
        "nope",
        None,
        (),
        None,
        'workloadpriorityclasses.kueue.x-k8s.io "nope" not found',
    ),
    PriorityCase(
        "missing pod priority class",
        None,
        "nope",
        (),
        None,
        'priorityclasses.scheduling.k8s.io "nope" not found',
    ),
]


@pytest.mark.parametrize("case", PRIORITY_CASES, ids=lambda c: c.name)
def test_extract_priority(case: PriorityCase) -> None:
    labels = {"kueue.x-k8s.io/priority-class": case.label} if case.label else None
    source = job(labels=labels, priority_class=case.pod_class)
    wpcs = {"high": 10000}
    pcs = {pc.name: pc for pc in case.classes}
    if case.error:
        with pytest.raises(KueueError) as err:
            extract_priority(source, wpcs, pcs)
        assert str(err.value) == case.error
    else:
        assert extract_priority(source, wpcs, pcs) == case.want


FLAVORS = {
    "default-flavor": ResourceFlavor(
        "default-flavor",
        node_labels={"zone": "a"},
        tolerations=({"key": "spot", "operator": "Exists", "effect": "NoSchedule"},),
    )
}


def _wl() -> dict[str, Any]:
    return new_workload(job(), 0, None)


def _running_job() -> dict[str, Any]:
    """The Job as the start of an admitted Workload leaves it."""
    running = job(suspend=False)
    pod = running["spec"]["template"]["spec"]
    pod["nodeSelector"] = {"zone": "a"}
    pod["tolerations"] = [{"key": "spot", "operator": "Exists", "effect": "NoSchedule"}]
    return running


@dataclass(frozen=True)
class EquivalenceCase:
    name: str
    job: dict[str, Any]
    wl: dict[str, Any]
    want: bool
    flavors: dict[str, ResourceFlavor] = field(default_factory=lambda: FLAVORS)


def _edited(source: dict[str, Any], **spec: Any) -> dict[str, Any]:
    new = copy.deepcopy(source)
    new["spec"].update(spec)
    return new


def _other_owner(wl: dict[str, Any]) -> dict[str, Any]:
    new = copy.deepcopy(wl)
    new["metadata"]["ownerReferences"][0]["name"] = "other"
    return new


def _cpu(source: dict[str, Any], cpu: str) -> dict[str, Any]:
    new = copy.deepcopy(source)
    new["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = cpu
    return new


EQUIVALENCE_CASES = [
    EquivalenceCase("same job", job(), _wl(), True),
    EquivalenceCase("other owner name", job(), _other_owner(_wl()), False),
    EquivalenceCase(
        "parallelism changed", _edited(job(), parallelism=2, completions=2), _wl(), False
    ),
    EquivalenceCase("cpu written differently, same amount", _cpu(job(), "1000m"), _wl(), True),
    EquivalenceCase("more cpu", _cpu(job(), "2"), _wl(), False),
    EquivalenceCase("node selector does not count", job(node_selector={"x": "y"}), _wl(), True),
    EquivalenceCase("running under its admission", _running_job(), admitted(_wl()), True),
    EquivalenceCase(
        "running, admission unreadable (flavor gone), tolerations ignored once admitted",
        _running_job(),
        admitted(_wl()),
        True,
        {},
    ),
    EquivalenceCase(
        "running with quota reserved, not admitted: tolerations count",
        _running_job(),
        with_status(
            admitted(_wl()),
            admission=admitted(_wl())["status"]["admission"],
            conditions=[cond("QuotaReserved", "True", "QuotaReserved")],
        ),
        True,
    ),
    EquivalenceCase(
        "unreserved: the injected tolerations make it another job",
        _running_job(),
        _wl(),
        False,
    ),
    EquivalenceCase(
        "max execution time changed",
        job(labels={"kueue.x-k8s.io/max-exec-time-seconds": "60"}),
        _wl(),
        False,
    ),
]


@pytest.mark.parametrize("case", EQUIVALENCE_CASES, ids=lambda c: c.name)
def test_equivalent(case: EquivalenceCase) -> None:
    assert equivalent(case.job, case.wl, case.flavors) is case.want


@dataclass(frozen=True)
class FinishedCase:
    name: str
    conditions: tuple[dict[str, Any], ...]
    want: tuple[str, str] | None


FINISHED_CASES = [
    FinishedCase("running", (), None),
    FinishedCase(
        "complete",
        (
            {
                "type": "Complete",
                "status": "True",
                "message": "Reached expected number of succeeded pods",
            },
        ),
        ("Succeeded", "Reached expected number of succeeded pods"),
    ),
    FinishedCase(
        "failed",
        (
            {
                "type": "Failed",
                "status": "True",
                "message": "Job has reached the specified backoff limit",
            },
        ),
        ("Failed", "Job has reached the specified backoff limit"),
    ),
    FinishedCase("failure target only", ({"type": "FailureTarget", "status": "True"},), None),
    FinishedCase("complete false", ({"type": "Complete", "status": "False"},), None),
]


@pytest.mark.parametrize("case", FINISHED_CASES, ids=lambda c: c.name)
def test_finished(case: FinishedCase) -> None:
    assert finished(job(status={"conditions": list(case.conditions)})) == case.want


def test_pods_ready_counts_succeeded_and_ready() -> None:
    assert not pods_ready(job(status={"ready": 2}))
    assert pods_ready(job(status={"ready": 2, "succeeded": 1}))


def test_merge_patch() -> None:
    old = {"a": 1, "b": {"c": 2, "d": 3}, "l": [1], "gone": True}
    new = {"a": 1, "b": {"c": 5, "d": 3}, "l": [1, 2], "added": "x"}
    assert merge_patch(old, new) == {"b": {"c": 5}, "l": [1, 2], "added": "x", "gone": None}
    assert merge_patch(new, new) == {}


def test_owner_job_key_and_owned_workloads() -> None:
    mine = new_workload(job(), 0, None)
    foreign = copy.deepcopy(mine)
    foreign["metadata"]["ownerReferences"][0].update(uid="other", name="other-job")
    predecessor = copy.deepcopy(mine)
    predecessor["metadata"]["ownerReferences"][0]["uid"] = "uid-of-a-deleted-job"
    not_a_job = copy.deepcopy(mine)
    not_a_job["metadata"]["ownerReferences"][0].update(
        apiVersion="jobset.x-k8s.io/v1alpha2", kind="JobSet"
    )
    elsewhere = copy.deepcopy(mine)
    elsewhere["metadata"]["namespace"] = "team-b"
    assert owner_job_key(mine) == f"{NS}/sample-job"
    assert owner_job_key(foreign) == f"{NS}/other-job"
    assert owner_job_key(not_a_job) is None
    everything = [mine, foreign, predecessor, not_a_job, elsewhere]
    assert owned_workloads(NS, "sample-job", everything) == [mine, predecessor]


@dataclass(frozen=True)
class PrebuiltCase:
    name: str
    labels: dict[str, str]
    annotations: dict[str, str]
    want: str | None


PREBUILT_CASES = [
    PrebuiltCase("none", {}, {}, None),
    PrebuiltCase("label", {"kueue.x-k8s.io/prebuilt-workload-name": "wl1"}, {}, "wl1"),
    PrebuiltCase(
        "annotation (a name too long for a label)",
        {},
        {"kueue.x-k8s.io/prebuilt-workload-name": "w" * 70},
        "w" * 70,
    ),
    PrebuiltCase(
        "the label first",
        {"kueue.x-k8s.io/prebuilt-workload-name": "wl1"},
        {"kueue.x-k8s.io/prebuilt-workload-name": "wl2"},
        "wl1",
    ),
]


@pytest.mark.parametrize("case", PREBUILT_CASES, ids=lambda c: c.name)
def test_prebuilt_workload_name(case: PrebuiltCase) -> None:
    source = job(labels=case.labels, annotations=case.annotations)
    assert prebuilt_workload_name(source) == case.want
