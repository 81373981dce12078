"""``ApiPodSource`` without a server: the store's order (bind order, relists), what ``scan``
gives (terminal pods left out, deletions with their grace, pinned pods), and the downward API's
values (``env[].valueFrom``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from numaplane.agent.cluster.podsource import ApiPodSource, field_value, resolve_env


def _obj(name: str, rv: int, *, phase: str = "Pending", **meta: Any) -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "namespace": "default",
            "uid": f"uid-{name}",
            "resourceVersion": str(rv),
            **meta,
        },
        "spec": {
            "nodeName": "n",
            "terminationGracePeriodSeconds": 7,
            "containers": [{"name": "c", "image": "busybox", "command": ["true"]}],
        },
        "status": {"phase": phase},
    }


def test_scan_waits_for_the_first_list() -> None:
    source = ApiPodSource("n")
    assert source.scan().error == "waiting for the API server's pods of node n"


def test_pods_come_in_the_order_first_seen_and_a_relist_orders_new_ones_by_rv() -> None:
    source = ApiPodSource("n")
    source.replace([_obj("b", 5), _obj("a", 3)])
    source.apply("ADDED", _obj("c", 6))
    source.apply("MODIFIED", _obj("a", 9))  # a status write does not move a pod
    assert [p.pod.name for p in source.scan().pods.values()] == ["a", "b", "c"]
    source.replace([_obj("e", 12), _obj("c", 6), _obj("d", 11), _obj("a", 9)])
    assert [p.pod.name for p in source.scan().pods.values()] == ["a", "c", "d", "e"]


def test_terminal_pods_are_left_out_and_deleted_ones_are_stopping() -> None:
    source = ApiPodSource("n")
    source.replace(
        [
            _obj("done", 1, phase="Succeeded"),
            _obj("failed", 2, phase="Failed"),
            _obj(
                "going", 3, deletionTimestamp="2025-01-01T00:00:00Z", deletionGracePeriodSeconds=3
            ),
            _obj("going-spec", 4, deletionTimestamp="2025-01-01T00:00:00Z"),
            _obj("run", 5),
        ]
    )
    scan = source.scan()
    assert [p.pod.name for p in scan.pods.values()] == ["run"]
    assert dict(scan.stopping) == {"uid-going": 3, "uid-going-spec": 7}
    source.apply("DELETED", _obj("run", 6))
    assert not source.scan().pods


def test_an_api_pod_is_pinned_and_its_status_does_not_change_it() -> None:
    source = ApiPodSource("n")
    source.replace([_obj("a", 1)])
    (first,) = source.scan().pods.values()
    later = _obj("a", 2, phase="Running", labels={"new": "label"})
    later["status"]["containerStatuses"] = [{"name": "c", "containerID": "numaplane://x"}]
    source.apply("MODIFIED", later)
    (second,) = source.scan().pods.values()
    assert first.pinned
    assert second.pod is first.pod
    assert first.path is None


@dataclass(frozen=True)
class FieldCase:
    name: str
    path: str
    expected: str | None


FIELD_CASES = [
    FieldCase("name", "metadata.name", "p"),
    FieldCase("namespace", "metadata.namespace", "ns"),
    FieldCase("uid", "metadata.uid", "u"),
    FieldCase("label", "metadata.labels['app']", "web"),
    FieldCase(
        "job completion index",
        "metadata.annotations['batch.kubernetes.io/job-completion-index']",
        "4",
    ),
    FieldCase("missing annotation", "metadata.annotations['nope']", ""),
    FieldCase("all labels", "metadata.labels", 'app="web"\ntier="x"'),
    FieldCase("node", "spec.nodeName", "n"),
    FieldCase("service account", "spec.serviceAccountName", "sa"),
    FieldCase("host IP", "status.hostIP", "10.1.1.1"),
    FieldCase("pod IP", "status.podIP", "10.1.1.1"),
    FieldCase("unsupported", "status.phase", None),
]

POD = {
    "metadata": {
        "name": "p",
        "namespace": "ns",
        "uid": "u",
        "labels": {"tier": "x", "app": "web"},
        "annotations": {"batch.kubernetes.io/job-completion-index": "4"},
    },
    "spec": {"nodeName": "n", "serviceAccountName": "sa"},
}


@pytest.mark.parametrize("case", FIELD_CASES, ids=lambda c: c.name)
def test_field_value(case: FieldCase) -> None:
    assert field_value(POD, case.path, "10.1.1.1") == case.expected


def test_resolve_env_turns_value_from_into_values() -> None:
    pod = {
        **POD,
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "resources": {"limits": {"cpu": "1500m", "memory": "64Mi"}},
                    "env": [
                        {"name": "A", "value": "1"},
                        {"name": "N", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                        {
                            "name": "CPU",
                            "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu"}},
                        },
                        {
                            "name": "MEM",
                            "valueFrom": {
                                "resourceFieldRef": {
                                    "resource": "requests.memory",
                                    "divisor": "1Mi",
                                }
                            },
                        },
                        {"name": "S", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}},
                    ],
                }
            ]
        },
        "status": {"phase": "Running", "qosClass": "Burstable", "podIP": "1.2.3.4"},
    }
    doc = resolve_env(pod, "h")
    assert doc["spec"]["containers"][0]["env"] == [
        {"name": "A", "value": "1"},
        {"name": "N", "value": "p"},
        {"name": "CPU", "value": "2"},
        {"name": "MEM", "value": "64"},
    ]
    assert doc["status"] == {"qosClass": "Burstable"}
    # The pod given is left as it was.
    assert "valueFrom" in pod["spec"]["containers"][0]["env"][1]  # type: ignore[index]
