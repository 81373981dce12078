"""The pods a Job creates (``GetPodFromTemplate`` and the Indexed additions)."""

from __future__ import annotations

from typing import Any

import pytest

from numaplane.controllers.job.pods import adopt_patch, generate_name, pod_for_job

JOB: dict[str, Any] = {
    "metadata": {"name": "work", "namespace": "ns", "uid": "u-1"},
    "spec": {
        "template": {
            "metadata": {
                "labels": {"batch.kubernetes.io/controller-uid": "u-1", "job-name": "work"},
                "annotations": {"a": "b"},
            },
            "spec": {
                "restartPolicy": "Never",
                "initContainers": [{"name": "init", "image": "busybox"}],
                "containers": [
                    {"name": "main", "image": "busybox", "env": [{"name": "X", "value": "1"}]}
                ],
            },
        }
    },
}
REF = {
    "apiVersion": "batch/v1",
    "kind": "Job",
    "name": "work",
    "uid": "u-1",
    "controller": True,
    "blockOwnerDeletion": True,
}
INDEX_ENV = {
    "name": "JOB_COMPLETION_INDEX",
    "valueFrom": {
        "fieldRef": {"fieldPath": "metadata.labels['batch.kubernetes.io/job-completion-index']"}
    },
}


def test_non_indexed_pod() -> None:
    pod = pod_for_job(JOB)
    assert pod["metadata"] == {
        "generateName": "work-",
        "namespace": "ns",
        "labels": {"batch.kubernetes.io/controller-uid": "u-1", "job-name": "work"},
        "annotations": {"a": "b"},
        "ownerReferences": [REF],
        "finalizers": ["batch.kubernetes.io/job-tracking"],
    }
    assert pod["spec"] == JOB["spec"]["template"]["spec"]
    assert "hostname" not in pod["spec"]


def test_indexed_pod_carries_its_index() -> None:
    pod = pod_for_job(JOB, 3)
    meta = pod["metadata"]
    assert meta["generateName"] == "work-3-"
    assert meta["annotations"]["batch.kubernetes.io/job-completion-index"] == "3"
    assert meta["labels"]["batch.kubernetes.io/job-completion-index"] == "3"
    assert pod["spec"]["hostname"] == "work-3"
    assert pod["spec"]["initContainers"][0]["env"] == [INDEX_ENV]
    assert pod["spec"]["containers"][0]["env"] == [{"name": "X", "value": "1"}, INDEX_ENV]
    # The Job's template is not changed.
    assert "env" not in JOB["spec"]["template"]["spec"]["initContainers"][0]


def test_user_set_index_variable_is_kept() -> None:
    job = {
        **JOB,
        "spec": {
            "template": {
                "spec": {
                    "containers": [
                        {"name": "c", "env": [{"name": "JOB_COMPLETION_INDEX", "value": "mine"}]}
                    ]
                }
            }
        },
    }
    pod = pod_for_job(job, 0)
    assert pod["spec"]["containers"][0]["env"] == [
        {"name": "JOB_COMPLETION_INDEX", "value": "mine"}
    ]


@pytest.mark.parametrize(
    ("name", "index", "want"),
    [
        ("a", -1, "a-"),
        ("a", 12, "a-12-"),
        ("x" * 60, 7, "x" * 55 + "-7-"),
        ("x" * 56, 123, "x" * 53 + "-123-"),
    ],
    ids=["plain", "indexed", "long name cut", "long index"],
)
def test_generate_name(name: str, index: int, want: str) -> None:
    got = generate_name(name, index)
    assert got == want
    assert len(got) <= 58


def test_adopt_patch_guards_by_uid() -> None:
    patch = adopt_patch(JOB, {"metadata": {"uid": "pod-9"}})
    assert patch == {
        "metadata": {
            "ownerReferences": [REF],
            "uid": "pod-9",
            "finalizers": ["batch.kubernetes.io/job-tracking"],
        }
    }
