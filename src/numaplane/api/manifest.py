"""Read Pods from ordinary Kubernetes manifests (YAML or JSON).

(Over 400 lines: reading and writing (``pod_to_manifest``) are kept together so that a pod
round-trips through the state directory's records field for field.)

A file may hold several YAML documents, and a document may be a ``kind: List`` whose ``items``
are pods. Fields numaplane does not use are ignored, so real manifests load unchanged. What the
API server would default is defaulted here too (requests from limits, the restart policy, the
grace period), because the kubelet only ever sees defaulted pods.

Documents are parsed by the pydantic models of ``numaplane.api._podschema`` (as the kubelet
configuration is by ``_kubeletschema``), then checked across fields and defaulted here.

Every problem raises :class:`ManifestError`, whose message is one line naming the file, the
field (``spec.containers[0].resources.limits.cpu``) and what is wrong with it.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import yaml
from pydantic import ValidationError

from numaplane.api import _podschema as schema
from numaplane.api.pod import (
    Container,
    Pod,
    QOSClass,
    ResourceRequirements,
    default_pod_resources,
    is_pod_level_resource,
)
from numaplane.api.quantity import Quantity
from numaplane.api.yamlbounds import AliasError, check_text_aliases
from numaplane.errors import InputError, escape_unprintable

__all__ = [
    "ManifestError",
    "default_pod_resources",
    "load_pods",
    "pod_from_dict",
    "pod_uid",
    "pods_from_text",
]

# A fixed namespace so derived uids agree across runs and machines.
_UID_NAMESPACE: Final = uuid.UUID("6f1f3d0c-4d55-4a8b-9c36-2b8d6f0e7a51")


class ManifestError(InputError):
    """A manifest cannot be read as pods; ``str()`` is ``<file>: <field>: <reason>``.

    Control characters in what is echoed (a pod name holding a newline) are escaped, so the
    message stays one line.
    """

    def __init__(self, source: str, reason: str, field: str | None = None) -> None:
        super().__init__(
            escape_unprintable(source),
            escape_unprintable(reason),
            None if field is None else escape_unprintable(field),
        )


def pod_uid(namespace: str, name: str) -> str:
    """The uid numaplane gives a pod whose manifest has none: stable for ``namespace/name``."""
    return str(uuid.uuid5(_UID_NAMESPACE, f"{namespace}/{name}"))


def load_pods(path: str | Path) -> list[Pod]:
    """All pods in the manifest file at ``path``."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        raise ManifestError(source, f"cannot read the file: {reason}") from error
    return pods_from_text(text, source)


def pods_from_text(text: str, source: str) -> list[Pod]:
    """All pods in manifest ``text`` (YAML, possibly several documents, or JSON).

    ``source`` names the text in error messages, usually its file name.
    """
    documents = _parse_documents(text, source)
    pods: list[Pod] = []
    many = len(documents) > 1
    for number, document in enumerate(documents, start=1):
        prefix = f"document {number}: " if many else ""
        pods.extend(_pods_from_document(document, source, prefix))
    seen: set[tuple[str, str]] = set()
    for pod in pods:
        if (pod.namespace, pod.name) in seen:
            raise ManifestError(source, f"pod {pod.namespace}/{pod.name} appears more than once")
        seen.add((pod.namespace, pod.name))
    return pods


def _parse_documents(text: str, source: str) -> list[Any]:
    if source.endswith(".json"):
        try:
            return [json.loads(text)]
        except json.JSONDecodeError as error:
            raise ManifestError(
                source, f"invalid JSON at line {error.lineno}, column {error.colno}: {error.msg}"
            ) from error
        except (ValueError, RecursionError) as error:  # a number too long, nesting too deep
            raise ManifestError(source, f"invalid JSON: {_first_line(error)}") from None
    try:
        documents = [doc for doc in yaml.safe_load_all(text) if doc is not None]
        for document in documents:
            check_text_aliases(document, text)
        return documents
    except AliasError as error:
        raise ManifestError(source, error.reason) from None
    except yaml.YAMLError as error:
        raise ManifestError(source, _yaml_reason(error)) from error
    except (ValueError, OverflowError, RecursionError) as error:
        # PyYAML builds some scalars with int() and datetime(), which raise these for values
        # its grammar accepts (a 5000-digit number, 2024-13-45); deep nesting exhausts the stack.
        raise ManifestError(source, f"invalid YAML: {_first_line(error)}") from None


def _first_line(error: BaseException) -> str:
    if isinstance(error, RecursionError):
        return "nested too deeply"
    text = str(error).splitlines()[0] if str(error) else type(error).__name__
    return text[:200]


def _yaml_reason(error: yaml.YAMLError) -> str:
    mark = getattr(error, "problem_mark", None)
    problem = getattr(error, "problem", None) or str(error).splitlines()[0]
    if mark is not None:
        return f"invalid YAML at line {mark.line + 1}, column {mark.column + 1}: {problem}"
    return f"invalid YAML: {problem}"


def _pods_from_document(document: Any, source: str, prefix: str) -> list[Pod]:
    if not isinstance(document, Mapping):
        where = prefix.rstrip(": ") or None
        raise ManifestError(
            source,
            f"expected a Kubernetes object (a mapping), got {schema.describe(document)}",
            where,
        )
    kind = document.get("kind")
    if kind == "Pod":
        return [pod_from_dict(document, source, prefix)]
    if isinstance(kind, str) and kind.endswith("List"):
        items = document.get("items")
        if items is None:
            return []
        if not isinstance(items, list):
            raise ManifestError(
                source, f"expected a list, got {schema.describe(items)}", prefix + "items"
            )
        pods: list[Pod] = []
        for index, item in enumerate(items):
            item_path = f"{prefix}items[{index}]"
            if not isinstance(item, Mapping):
                raise ManifestError(
                    source, f"expected a Pod (a mapping), got {schema.describe(item)}", item_path
                )
            if item.get("kind", "Pod") != "Pod":
                raise ManifestError(
                    source,
                    f"expected kind Pod, got {schema.quote(item.get('kind'))}",
                    item_path + ".kind",
                )
            pods.append(pod_from_dict(item, source, item_path + "."))
        return pods
    if kind is None:
        raise ManifestError(source, "missing; expected Pod or List", prefix + "kind")
    raise ManifestError(
        source, f"kind {schema.quote(kind)} is not supported; expected Pod or List", prefix + "kind"
    )


def pod_from_dict(obj: object, source: str, path_prefix: str = "") -> Pod:
    """One pod from its manifest mapping; ``path_prefix`` is prepended to field paths in errors.

    The mapping is parsed by the pydantic models of ``_podschema``; the first error becomes the
    ``ManifestError``. Then the checks across fields, and the API server's defaulting.
    """
    where = path_prefix.rstrip(".") or None
    if not isinstance(obj, Mapping):
        raise ManifestError(
            source, f"expected a Pod (a mapping), got {schema.describe(obj)}", where
        )
    if "kind" in obj and obj["kind"] != "Pod":
        raise ManifestError(
            source, f"expected kind Pod, got {schema.quote(obj['kind'])}", path_prefix + "kind"
        )
    try:
        wire = schema.WirePod.model_validate(dict(obj))
    except ValidationError as error:
        first = error.errors(include_url=False)[0]
        raise ManifestError(
            source, schema.error_message(first), path_prefix + schema.field_path(first["loc"])
        ) from None
    try:
        return _build(wire)
    except _FieldError as error:
        raise ManifestError(source, error.reason, path_prefix + error.field) from None


class _FieldError(Exception):
    """A check across fields failed at ``field`` (a path inside the pod)."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


def _build(wire: schema.WirePod) -> Pod:
    metadata = wire.metadata
    if metadata is None:
        raise _FieldError("metadata", "required field is missing")
    if not metadata.name:
        raise _FieldError("metadata.name", "required field is missing")
    name = metadata.name
    namespace = metadata.namespace or "default"
    uid = metadata.uid or pod_uid(namespace, name)
    spec = wire.spec
    if spec is None:
        raise _FieldError("spec", "required field is missing")
    if not spec.containers:
        raise _FieldError("spec.containers", "a pod needs at least one container")
    init_containers = _containers(spec.init_containers or [], "spec.initContainers")
    containers = _containers(spec.containers, "spec.containers")
    seen: set[str] = set()
    for field_name, group in (("initContainers", init_containers), ("containers", containers)):
        for index, container in enumerate(group):
            if container.name in seen:
                raise _FieldError(
                    f"spec.{field_name}[{index}].name",
                    f"duplicate container name {schema.quote(container.name)}",
                )
            seen.add(container.name)
    pod_resources = None
    if spec.resources is not None:
        pod_resources = _resources(spec.resources, "spec.resources")
        for kind_name, values in (
            ("requests", pod_resources.requests),
            ("limits", pod_resources.limits),
        ):
            for resource in values:
                if not is_pod_level_resource(resource):
                    raise _FieldError(
                        f"spec.resources.{kind_name}.{resource}",
                        "pod-level resources may only set cpu, memory and hugepages-<size>",
                    )
        pod_resources = default_pod_resources(
            pod_resources,
            Pod(name=name, uid=uid, containers=containers, init_containers=init_containers),
        )
    qos_text = wire.status.qos_class if wire.status is not None else None
    grace = spec.termination_grace_period_seconds
    return Pod(
        name=name,
        uid=uid,
        namespace=namespace,
        containers=containers,
        init_containers=init_containers,
        restart_policy=spec.restart_policy or "Always",
        status_qos_class=QOSClass(qos_text) if qos_text else None,
        resources=pod_resources,
        overhead=dict(spec.overhead or {}),
        termination_grace_period_seconds=30 if grace is None else grace,
        labels=dict(metadata.labels or {}),
        annotations=dict(metadata.annotations or {}),
        node_name=spec.node_name or None,
        container_ids=_container_ids(wire.status, seen),
    )


def _container_ids(status: schema.WireStatus | None, names: set[str]) -> dict[str, str]:
    """``status.{initContainerStatuses,containerStatuses}[].containerID`` by container name.

    The runtime's IDs (``<type>://<id>``, checked as the kubelet's ``ParseContainerID`` does) are
    what the kubelet's container map holds; a status without an ID (not created yet) is skipped.
    """
    ids: dict[str, str] = {}
    if status is None:
        return ids
    for key, entries in (
        ("initContainerStatuses", status.init_container_statuses),
        ("containerStatuses", status.container_statuses),
    ):
        for index, entry in enumerate(entries or []):
            path = f"status.{key}[{index}]"
            if not entry.name:
                raise _FieldError(f"{path}.name", "required field is missing")
            if entry.name not in names:
                raise _FieldError(f"{path}.name", f"no container named {entry.name!r} in the spec")
            if not entry.container_id:
                continue
            if len(entry.container_id.split("://")) != 2:
                raise _FieldError(
                    f"{path}.containerID", f"invalid container ID: {entry.container_id!r}"
                )
            ids[entry.name] = entry.container_id
    return ids


def _containers(wires: list[schema.WireContainer], path: str) -> tuple[Container, ...]:
    return tuple(_container(wire, f"{path}[{index}]") for index, wire in enumerate(wires))


def _container(wire: schema.WireContainer, path: str) -> Container:
    if not wire.name:
        raise _FieldError(f"{path}.name", "required field is missing")
    env: list[tuple[str, str]] = []
    for index, entry in enumerate(wire.env or []):
        if not entry.name:
            raise _FieldError(f"{path}.env[{index}].name", "required field is missing")
        if entry.value_from is not None:
            # Resolved by the kubelet from other objects; numaplane has nothing to read.
            continue
        env.append((entry.name, entry.value or ""))
    resources = wire.resources or schema.WireResources()
    return Container(
        name=wire.name,
        # The API server defaults each missing request to its limit before the kubelet sees it.
        resources=_resources(resources, f"{path}.resources").with_defaulted_requests(),
        restart_policy=wire.restart_policy or None,
        image=wire.image or "",
        command=tuple(wire.command or ()),
        args=tuple(wire.args or ()),
        env=tuple(env),
        working_dir=wire.working_dir or None,
    )


def _resources(wire: schema.WireResources, path: str) -> ResourceRequirements:
    requests = dict(wire.requests or {})
    limits = dict(wire.limits or {})
    for name, request in requests.items():
        if name in limits and request > limits[name]:
            raise _FieldError(
                f"{path}.requests.{name}",
                f"request {request} is greater than the limit {limits[name]}",
            )
    return ResourceRequirements(requests, limits)


def pod_to_manifest(pod: Pod) -> dict[str, Any]:
    """A Pod manifest that ``pod_from_dict`` reads back into an equal ``Pod``.

    Used to persist admitted pods (``numaplane admit --state-dir``, the agent's records).
    Quantities are written in their canonical text.
    """
    metadata: dict[str, Any] = {"name": pod.name, "namespace": pod.namespace, "uid": pod.uid}
    if pod.labels:
        metadata["labels"] = dict(pod.labels)
    if pod.annotations:
        metadata["annotations"] = dict(pod.annotations)
    spec: dict[str, Any] = {
        "restartPolicy": pod.restart_policy,
        "terminationGracePeriodSeconds": pod.termination_grace_period_seconds,
        "containers": [_container_to_manifest(c) for c in pod.containers],
    }
    if pod.init_containers:
        spec["initContainers"] = [_container_to_manifest(c) for c in pod.init_containers]
    if pod.node_name:
        spec["nodeName"] = pod.node_name
    if pod.overhead:
        spec["overhead"] = _quantities_to_manifest(pod.overhead)
    if pod.resources is not None:
        spec["resources"] = _resources_to_manifest(pod.resources)
    doc: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}
    status: dict[str, Any] = {}
    if pod.status_qos_class is not None:
        status["qosClass"] = pod.status_qos_class.value
    init_names = {c.name for c in pod.init_containers}
    for key, group in (("initContainerStatuses", True), ("containerStatuses", False)):
        statuses = [
            {"name": name, "containerID": cid}
            for name, cid in pod.container_ids.items()
            if (name in init_names) == group
        ]
        if statuses:
            status[key] = statuses
    if status:
        doc["status"] = status
    return doc


def _container_to_manifest(container: Container) -> dict[str, Any]:
    out: dict[str, Any] = {"name": container.name}
    if container.image:
        out["image"] = container.image
    if container.command:
        out["command"] = list(container.command)
    if container.args:
        out["args"] = list(container.args)
    if container.env:
        out["env"] = [{"name": k, "value": v} for k, v in container.env]
    if container.working_dir is not None:
        out["workingDir"] = container.working_dir
    if container.restart_policy is not None:
        out["restartPolicy"] = container.restart_policy
    out["resources"] = _resources_to_manifest(container.resources)
    return out


def _resources_to_manifest(resources: ResourceRequirements) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if resources.requests:
        out["requests"] = _quantities_to_manifest(resources.requests)
    if resources.limits:
        out["limits"] = _quantities_to_manifest(resources.limits)
    return out


def _quantities_to_manifest(values: Mapping[str, Quantity]) -> dict[str, str]:
    return {name: str(q) for name, q in sorted(values.items())}
