"""The scale subresource of a custom resource."""

from __future__ import annotations

from numaplane.apiserver.crd.scale import scale_of, validate_scale, with_scale

from .helpers import widget, widget_info

SPEC = {
    "specReplicasPath": ".spec.replicas",
    "statusReplicasPath": ".status.replicas",
    "labelSelectorPath": ".status.selector",
}


def test_scale_read_from_the_named_paths() -> None:
    obj = widget(replicas=3)
    obj["metadata"].update(uid="u1", resourceVersion="7", labels={"a": "b"})
    obj["status"] = {"replicas": 2, "selector": "app=w"}
    assert scale_of(SPEC, obj) == {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {"name": "w", "namespace": "default", "uid": "u1", "resourceVersion": "7"},
        "spec": {"replicas": 3},
        "status": {"replicas": 2, "selector": "app=w"},
    }


def test_absent_replicas_read_as_zero() -> None:
    assert scale_of(SPEC, widget())["spec"] == {"replicas": 0}
    assert scale_of(SPEC, widget())["status"] == {"replicas": 0}


def test_scale_written_back_then_validated_by_the_schema() -> None:
    obj = widget(replicas=1)
    scaled = with_scale(SPEC, obj, {"spec": {"replicas": 11}, "metadata": {"resourceVersion": "9"}})
    assert scaled["spec"]["replicas"] == 11
    assert scaled["metadata"]["resourceVersion"] == "9"
    assert obj["spec"]["replicas"] == 1
    assert [str(e) for e in widget_info().strategy.validate_update(scaled, obj)] == [
        "spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10"
    ]


def test_negative_replicas() -> None:
    assert [str(e) for e in validate_scale({"spec": {"replicas": -1}})] == [
        "spec.replicas: Invalid value: -1: must be greater than or equal to 0"
    ]
