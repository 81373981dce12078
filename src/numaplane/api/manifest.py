"""Read Pods from ordinary Kubernetes manifests (YAML or JSON).

A file may hold several YAML documents, and a document may be a ``kind: List`` whose ``items``
are pods. Fields numaplane does not use are ignored, so real manifests load unchanged. What the
API server would default is defaulted here too (requests from limits, the restart policy, the
grace period), because the kubelet only ever sees defaulted pods.

Every problem raises :class:`ManifestError`, whose message is one line naming the file, the
field (``spec.containers[0].resources.limits.cpu``) and what is wrong with it.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final, NoReturn

import yaml

from numaplane.api.pod import (
    Container,
    Pod,
    QOSClass,
    ResourceRequirements,
    default_pod_resources,
    is_pod_level_resource,
)
from numaplane.api.quantity import Quantity, QuantityError
from numaplane.errors import InputError

__all__ = [
    "ManifestError",
    "default_pod_resources",
    "load_pods",
    "pod_from_dict",
    "pod_uid",
    "pods_from_text",
]

_RESTART_POLICIES: Final = ("Always", "OnFailure", "Never")
# A fixed namespace so derived uids agree across runs and machines.
_UID_NAMESPACE: Final = uuid.UUID("6f1f3d0c-4d55-4a8b-9c36-2b8d6f0e7a51")


class ManifestError(InputError):
    """A manifest cannot be read as pods; ``str()`` is ``<file>: <field>: <reason>``."""


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
    try:
        return [doc for doc in yaml.safe_load_all(text) if doc is not None]
    except yaml.YAMLError as error:
        raise ManifestError(source, _yaml_reason(error)) from error


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
            f"expected a Kubernetes object (a mapping), got {_describe(document)}",
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
                source, f"expected a list, got {_describe(items)}", prefix + "items"
            )
        pods: list[Pod] = []
        for index, item in enumerate(items):
            item_path = f"{prefix}items[{index}]"
            if not isinstance(item, Mapping):
                raise ManifestError(
                    source, f"expected a Pod (a mapping), got {_describe(item)}", item_path
                )
            if item.get("kind", "Pod") != "Pod":
                raise ManifestError(
                    source, f"expected kind Pod, got {item.get('kind')!r}", item_path + ".kind"
                )
            pods.append(pod_from_dict(item, source, item_path + "."))
        return pods
    if kind is None:
        raise ManifestError(source, "missing; expected Pod or List", prefix + "kind")
    raise ManifestError(
        source, f"kind {kind!r} is not supported; expected Pod or List", prefix + "kind"
    )


def pod_from_dict(obj: Mapping[str, Any], source: str, path_prefix: str = "") -> Pod:
    """One pod from its manifest mapping; ``path_prefix`` is prepended to field paths in errors."""
    reader = _Reader(source, path_prefix)
    if "kind" in obj and obj["kind"] != "Pod":
        reader.fail("kind", f"expected kind Pod, got {obj['kind']!r}")
    metadata = reader.mapping(obj, "metadata", "metadata", required=True)
    name = reader.string(metadata, "name", "metadata.name", required=True)
    namespace = reader.string(metadata, "namespace", "metadata.namespace") or "default"
    uid = reader.string(metadata, "uid", "metadata.uid") or pod_uid(namespace, name)
    labels = reader.string_map(metadata, "labels", "metadata.labels")
    annotations = reader.string_map(metadata, "annotations", "metadata.annotations")

    spec = reader.mapping(obj, "spec", "spec", required=True)
    containers = reader.containers(spec, "containers", required=True)
    init_containers = reader.containers(spec, "initContainers", required=False)
    seen: set[str] = set()
    for field_name, group in (("initContainers", init_containers), ("containers", containers)):
        for index, container in enumerate(group):
            if container.name in seen:
                reader.fail(
                    f"spec.{field_name}[{index}].name",
                    f"duplicate container name {container.name!r}",
                )
            seen.add(container.name)

    restart_policy = reader.string(spec, "restartPolicy", "spec.restartPolicy") or "Always"
    reader.check_choice(restart_policy, _RESTART_POLICIES, "spec.restartPolicy")
    grace = reader.integer(
        spec, "terminationGracePeriodSeconds", "spec.terminationGracePeriodSeconds", default=30
    )
    node_name = reader.string(spec, "nodeName", "spec.nodeName") or None
    overhead = reader.quantities(spec, "overhead", "spec.overhead")
    pod_resources = None
    if spec.get("resources") is not None:
        pod_resources = reader.resources(spec, "spec.resources")
        for kind_name, values in (
            ("requests", pod_resources.requests),
            ("limits", pod_resources.limits),
        ):
            for resource in values:
                if not is_pod_level_resource(resource):
                    reader.fail(
                        f"spec.resources.{kind_name}.{resource}",
                        "pod-level resources may only set cpu, memory and hugepages-<size>",
                    )
        pod_resources = default_pod_resources(
            pod_resources,
            Pod(name=name, uid=uid, containers=containers, init_containers=init_containers),
        )

    status = reader.mapping(obj, "status", "status", required=False)
    qos_text = reader.string(status, "qosClass", "status.qosClass")
    qos: QOSClass | None = None
    if qos_text:
        reader.check_choice(qos_text, tuple(c.value for c in QOSClass), "status.qosClass")
        qos = QOSClass(qos_text)
    container_ids = _container_ids(reader, status, seen)

    return Pod(
        name=name,
        uid=uid,
        namespace=namespace,
        containers=containers,
        init_containers=init_containers,
        restart_policy=restart_policy,
        status_qos_class=qos,
        resources=pod_resources,
        overhead=overhead,
        termination_grace_period_seconds=grace,
        labels=labels,
        annotations=annotations,
        node_name=node_name,
        container_ids=container_ids,
    )


def _container_ids(reader: _Reader, status: Mapping[str, Any], names: set[str]) -> dict[str, str]:
    """``status.{initContainerStatuses,containerStatuses}[].containerID`` by container name.

    The runtime's IDs (``<type>://<id>``, checked as the kubelet's ``ParseContainerID`` does) are
    what the kubelet's container map holds; a status without an ID (not created yet) is skipped.
    """
    ids: dict[str, str] = {}
    for key in ("initContainerStatuses", "containerStatuses"):
        entries = status.get(key)
        if entries is None:
            continue
        if not isinstance(entries, list):
            reader.fail(f"status.{key}", f"expected a list, got {_describe(entries)}")
        for index, entry in enumerate(entries):
            path = f"status.{key}[{index}]"
            if not isinstance(entry, Mapping):
                reader.fail(path, f"expected a mapping, got {_describe(entry)}")
            name = reader.string(entry, "name", f"{path}.name", required=True)
            if name not in names:
                reader.fail(f"{path}.name", f"no container named {name!r} in the spec")
            container_id = reader.string(entry, "containerID", f"{path}.containerID")
            if not container_id:
                continue
            if len(container_id.split("://")) != 2:
                reader.fail(f"{path}.containerID", f"invalid container ID: {container_id!r}")
            ids[name] = container_id
    return ids


def _describe(value: Any) -> str:
    if value is None:
        return "nothing (null)"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, bool):
        return f"the boolean {value}"
    return f"{type(value).__name__} {value!r}"


class _Reader:
    """Typed access to a manifest mapping that reports failures with their field path."""

    def __init__(self, source: str, prefix: str) -> None:
        self.source = source
        self.prefix = prefix

    def fail(self, path: str, reason: str) -> NoReturn:
        raise ManifestError(self.source, reason, self.prefix + path)

    def mapping(
        self, obj: Mapping[str, Any], key: str, path: str, *, required: bool
    ) -> Mapping[str, Any]:
        value = obj.get(key)
        if value is None:
            if required:
                self.fail(path, "required field is missing")
            return {}
        if not isinstance(value, Mapping):
            self.fail(path, f"expected a mapping, got {_describe(value)}")
        return value

    def string(self, obj: Mapping[str, Any], key: str, path: str, *, required: bool = False) -> str:
        value = obj.get(key)
        if value is None or value == "":
            if required:
                self.fail(path, "required field is missing")
            return ""
        if not isinstance(value, str):
            self.fail(path, f"expected a string, got {_describe(value)}")
        return str(value)

    def integer(self, obj: Mapping[str, Any], key: str, path: str, *, default: int) -> int:
        value = obj.get(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(path, f"expected an integer, got {_describe(value)}")
        if value < 0:
            self.fail(path, f"must not be negative, got {value}")
        return int(value)

    def string_map(self, obj: Mapping[str, Any], key: str, path: str) -> dict[str, str]:
        values = self.mapping(obj, key, path, required=False)
        result: dict[str, str] = {}
        for name, value in values.items():
            if not isinstance(value, str):
                self.fail(f"{path}.{name}", f"expected a string, got {_describe(value)}")
            result[str(name)] = value
        return result

    def strings(self, obj: Mapping[str, Any], key: str, path: str) -> tuple[str, ...]:
        values = obj.get(key)
        if values is None:
            return ()
        if not isinstance(values, list):
            self.fail(path, f"expected a list of strings, got {_describe(values)}")
        for index, value in enumerate(values):
            if not isinstance(value, str):
                self.fail(f"{path}[{index}]", f"expected a string, got {_describe(value)}")
        return tuple(values)

    def check_choice(self, value: str, choices: Sequence[str], path: str) -> None:
        if value not in choices:
            self.fail(path, f"must be one of {', '.join(choices)}; got {value!r}")

    def quantities(self, obj: Mapping[str, Any], key: str, path: str) -> dict[str, Quantity]:
        values = self.mapping(obj, key, path, required=False)
        result: dict[str, Quantity] = {}
        for name, value in values.items():
            field = f"{path}.{name}"
            if not isinstance(name, str) or not name:
                self.fail(field, "resource names must be non-empty strings")
            if isinstance(value, bool) or not isinstance(value, str | int | float):
                self.fail(field, f"expected a quantity, got {_describe(value)}")
            # YAML reads `cpu: 0.5` as a float; its shortest repr is the text that was written.
            text = repr(value) if isinstance(value, float) else value
            try:
                quantity = Quantity.parse(text)
            except QuantityError as error:
                self.fail(field, f"invalid quantity {error.text!r}: {error.reason}")
            if quantity.sign() < 0:
                self.fail(field, f"must not be negative, got {value!r}")
            result[name] = quantity
        return result

    def resources(self, obj: Mapping[str, Any], path: str) -> ResourceRequirements:
        resources = self.mapping(obj, "resources", path, required=False)
        requests = self.quantities(resources, "requests", f"{path}.requests")
        limits = self.quantities(resources, "limits", f"{path}.limits")
        for name, request in requests.items():
            if name in limits and request > limits[name]:
                self.fail(
                    f"{path}.requests.{name}",
                    f"request {request} is greater than the limit {limits[name]}",
                )
        return ResourceRequirements(requests, limits)

    def containers(
        self, spec: Mapping[str, Any], key: str, *, required: bool
    ) -> tuple[Container, ...]:
        path = f"spec.{key}"
        values = spec.get(key)
        if values is None or values == []:
            if required:
                self.fail(path, "a pod needs at least one container")
            return ()
        if not isinstance(values, list):
            self.fail(path, f"expected a list of containers, got {_describe(values)}")
        return tuple(self.container(value, f"{path}[{i}]") for i, value in enumerate(values))

    def container(self, value: Any, path: str) -> Container:
        if not isinstance(value, Mapping):
            self.fail(path, f"expected a container (a mapping), got {_describe(value)}")
        name = self.string(value, "name", f"{path}.name", required=True)
        restart_policy = self.string(value, "restartPolicy", f"{path}.restartPolicy") or None
        if restart_policy is not None:
            self.check_choice(restart_policy, _RESTART_POLICIES, f"{path}.restartPolicy")
        # The API server defaults each missing request to its limit before the kubelet sees it.
        resources = self.resources(value, f"{path}.resources").with_defaulted_requests()
        return Container(
            name=name,
            resources=resources,
            restart_policy=restart_policy,
            image=self.string(value, "image", f"{path}.image"),
            command=self.strings(value, "command", f"{path}.command"),
            args=self.strings(value, "args", f"{path}.args"),
            env=self.env(value, f"{path}.env"),
            working_dir=self.string(value, "workingDir", f"{path}.workingDir") or None,
        )

    def env(self, container: Mapping[str, Any], path: str) -> tuple[tuple[str, str], ...]:
        values = container.get("env")
        if values is None:
            return ()
        if not isinstance(values, list):
            self.fail(path, f"expected a list of variables, got {_describe(values)}")
        result: list[tuple[str, str]] = []
        for index, entry in enumerate(values):
            entry_path = f"{path}[{index}]"
            if not isinstance(entry, Mapping):
                self.fail(entry_path, f"expected a mapping, got {_describe(entry)}")
            name = self.string(entry, "name", f"{entry_path}.name", required=True)
            if entry.get("valueFrom") is not None:
                # Resolved by the kubelet from other objects; numaplane has nothing to read.
                continue
            result.append((name, self.string(entry, "value", f"{entry_path}.value")))
        return tuple(result)


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
