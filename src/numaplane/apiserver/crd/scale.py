"""The ``scale`` subresource of a custom resource: an ``autoscaling/v1`` Scale read from and
written to the paths the CRD names (upstream's ``scaleFromCustomResource`` and
``scaleUpdatedObjectInfo``)."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from numaplane.apiserver.errors import FieldError, invalid_value
from numaplane.apiserver.resource import Object


def _steps(path: str) -> list[str]:
    return [p for p in path.lstrip(".").split(".") if p]


def _get(obj: Mapping[str, Any], path: str) -> Any:
    current: Any = obj
    for key in _steps(path):
        if not isinstance(current, Mapping) or key not in current:
            return None
        current = current[key]
    return current


def scale_of(spec: Mapping[str, Any], obj: Object) -> Object:
    """The Scale of ``obj``: replicas at ``specReplicasPath`` / ``statusReplicasPath`` (0 when
    absent), selector at ``labelSelectorPath`` (empty when absent)."""
    meta = obj.get("metadata") or {}
    want = _get(obj, str(spec.get("specReplicasPath", "")))
    have = _get(obj, str(spec.get("statusReplicasPath", "")))
    status: dict[str, Any] = {"replicas": have if isinstance(have, int) else 0}
    selector_path = spec.get("labelSelectorPath")
    if selector_path:
        selector = _get(obj, str(selector_path))
        if isinstance(selector, str) and selector:
            status["selector"] = selector
    scale_meta = {
        k: meta[k]
        for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
        if k in meta
    }
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": scale_meta,
        "spec": {"replicas": want if isinstance(want, int) else 0},
        "status": status,
    }


def validate_scale(scale: Mapping[str, Any]) -> list[FieldError]:
    """A Scale's own checks: ``spec.replicas`` a non-negative integer."""
    replicas = (scale.get("spec") or {}).get("replicas", 0)
    if not isinstance(replicas, int) or isinstance(replicas, bool):
        return [invalid_value("spec.replicas", replicas, "must be an integer")]
    if replicas < 0:
        return [invalid_value("spec.replicas", replicas, "must be greater than or equal to 0")]
    return []


def with_scale(spec: Mapping[str, Any], obj: Object, scale: Mapping[str, Any]) -> Object:
    """A copy of ``obj`` with ``scale.spec.replicas`` written at ``specReplicasPath`` (and the
    Scale's resourceVersion, for the optimistic-concurrency check the update does)."""
    out = copy.deepcopy(obj)
    steps = _steps(str(spec.get("specReplicasPath", "")))
    target = out
    for key in steps[:-1]:
        nxt = target.get(key)
        if not isinstance(nxt, dict):
            nxt = target[key] = {}
        target = nxt
    if steps:
        target[steps[-1]] = int((scale.get("spec") or {}).get("replicas", 0))
    rv = (scale.get("metadata") or {}).get("resourceVersion")
    if rv:
        out.setdefault("metadata", {})["resourceVersion"] = rv
    return out
