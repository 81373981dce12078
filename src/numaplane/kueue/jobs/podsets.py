"""What Kueue writes into a job's pod template when it starts it and takes back when it stops it
(upstream ``pkg/podset``): a :class:`PodSetInfo` per podSet — count, labels, annotations,
nodeSelector, tolerations, scheduling gates — built from the admission and the flavors' node
labels and tolerations, merged into the template without overriding what the user wrote
(a conflicting key is a permanent error), and restored from the Workload's own podSets."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from numaplane.kueue.api.model import ResourceFlavor
from numaplane.kueue.errors import KueueError

Obj = dict[str, Any]

#: The label Kueue puts on the pods of each podSet (upstream ``constants.PodSetLabel``).
PODSET_LABEL: Final = "kueue.x-k8s.io/podset"


class PodSetInfoError(KueueError):
    """A podSet update conflicts with the job's template: a permanent error (upstream
    ``ErrInvalidPodSetUpdate`` / ``ErrInvalidPodsetInfo``), the job cannot start."""


@dataclass
class PodSetInfo:
    """Upstream ``podset.PodSetInfo``: what is injected into (or restored to) one podSet."""

    name: str
    count: int
    annotations: dict[str, str] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    node_selector: dict[str, str] = field(default_factory=dict)
    tolerations: list[Obj] = field(default_factory=list)
    scheduling_gates: list[Obj] = field(default_factory=list)

    def merge(self, other: PodSetInfo) -> None:
        """Upstream ``PodSetInfo.Merge``: maps merged keeping this side's values, refusing a
        key both sides set differently; tolerations and gates appended unless present."""
        for what, mine, theirs in (
            ("annotations", self.annotations, other.annotations),
            ("labels", self.labels, other.labels),
            ("nodeSelector", self.node_selector, other.node_selector),
        ):
            conflict = _conflict(mine, theirs)
            if conflict:
                raise PodSetInfoError(
                    f"invalid admission check PodSetUpdate: conflict for {what}: {conflict}"
                )
        self.annotations = {**other.annotations, **self.annotations}
        self.labels = {**other.labels, **self.labels}
        self.node_selector = {**other.node_selector, **self.node_selector}
        for toleration in other.tolerations:
            if toleration not in self.tolerations:
                self.tolerations.append(copy.deepcopy(toleration))
        for gate in other.scheduling_gates:
            if gate not in self.scheduling_gates:
                self.scheduling_gates.append(copy.deepcopy(gate))


def _conflict(a: Mapping[str, str], b: Mapping[str, str]) -> str:
    # Upstream maps.HaveConflict walks ``a`` in map order; sorted here so the message is stable.
    for key in sorted(a):
        if key in b and a[key] != b[key]:
            return f"conflict for key={key}, value1={a[key]}, value2={b[key]}"
    return ""


def _str_map(value: object) -> dict[str, str]:
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, Mapping) else {}


def _dict_list(value: object) -> list[Obj]:
    if not isinstance(value, Sequence) or isinstance(value, str):
        return []
    return [copy.deepcopy(dict(item)) for item in value if isinstance(item, Mapping)]


def from_assignment(
    assignment: Mapping[str, Any], default_count: int, flavors: Mapping[str, ResourceFlavor]
) -> PodSetInfo:
    """Upstream ``FromAssignment``: the assignment's count (the podSet's when absent), the
    node labels and tolerations of every flavor it names (each flavor once, in resource order;
    the first value of a node label wins). A flavor that does not exist is an error the caller
    retries (upstream: the Get fails)."""
    count = assignment.get("count")
    info = PodSetInfo(
        name=str(assignment.get("name", "")),
        count=int(count) if count is not None else default_count,
    )
    seen: set[str] = set()
    for flavor_name in (assignment.get("flavors") or {}).values():
        name = str(flavor_name)
        if name in seen:
            continue
        flavor = flavors.get(name)
        if flavor is None:
            raise KueueError(f'resourceflavors.kueue.x-k8s.io "{name}" not found')
        for key, value in flavor.node_labels.items():
            info.node_selector.setdefault(key, value)
        info.tolerations.extend(copy.deepcopy(dict(t)) for t in flavor.tolerations)
        seen.add(name)
    return info


def from_update(update: Mapping[str, Any]) -> PodSetInfo:
    """Upstream ``FromUpdate``: an admission check's ``podSetUpdates`` entry."""
    return PodSetInfo(
        name=str(update.get("name", "")),
        count=0,
        annotations=_str_map(update.get("annotations")),
        labels=_str_map(update.get("labels")),
        node_selector=_str_map(update.get("nodeSelector")),
        tolerations=_dict_list(update.get("tolerations")),
    )


def from_pod_set(pod_set: Mapping[str, Any]) -> PodSetInfo:
    """Upstream ``FromPodSet``: what a Workload's podSet says the template was before Kueue
    touched it (what a stop restores)."""
    template = pod_set.get("template") or {}
    meta = template.get("metadata") or {}
    spec = template.get("spec") or {}
    return PodSetInfo(
        name=str(pod_set.get("name", "")),
        count=int(pod_set.get("count", 1)),
        annotations=_str_map(meta.get("annotations")),
        labels=_str_map(meta.get("labels")),
        node_selector=_str_map(spec.get("nodeSelector")),
        tolerations=_dict_list(spec.get("tolerations")),
        scheduling_gates=_dict_list(spec.get("schedulingGates")),
    )


def _set_or_drop(target: Obj, key: str, value: Any) -> None:
    # Go's nil map/slice is omitted from JSON: an empty result leaves the key out.
    if value:
        target[key] = value
    else:
        target.pop(key, None)


def merge_into_template(template: Obj, info: PodSetInfo) -> None:
    """Upstream ``podset.Merge`` on a pod template (edited in place): the template's own
    values win, a conflict raises :class:`PodSetInfoError`."""
    meta = template.setdefault("metadata", {})
    spec = template.setdefault("spec", {})
    current = PodSetInfo(
        name=info.name,
        count=info.count,
        annotations=_str_map(meta.get("annotations")),
        labels=_str_map(meta.get("labels")),
        node_selector=_str_map(spec.get("nodeSelector")),
        tolerations=_dict_list(spec.get("tolerations")),
        scheduling_gates=_dict_list(spec.get("schedulingGates")),
    )
    current.merge(info)
    _set_or_drop(meta, "annotations", current.annotations)
    _set_or_drop(meta, "labels", current.labels)
    _set_or_drop(spec, "nodeSelector", current.node_selector)
    _set_or_drop(spec, "tolerations", current.tolerations)
    _set_or_drop(spec, "schedulingGates", current.scheduling_gates)


def restore_template(template: Obj, info: PodSetInfo) -> bool:
    """Upstream ``podset.RestorePodSpec`` (in place): annotations, labels, nodeSelector,
    tolerations and scheduling gates set back to ``info``'s; whether anything changed."""
    meta = template.setdefault("metadata", {})
    spec = template.setdefault("spec", {})
    changed = False
    for target, key, want in (
        (meta, "annotations", info.annotations),
        (meta, "labels", info.labels),
        (spec, "nodeSelector", info.node_selector),
        (spec, "tolerations", info.tolerations),
        (spec, "schedulingGates", info.scheduling_gates),
    ):
        if (target.get(key) or type(want)()) != want:
            _set_or_drop(target, key, copy.deepcopy(want))
            changed = True
    return changed
