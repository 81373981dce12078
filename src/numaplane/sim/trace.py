"""Simulator traces: what runs where and when, read from YAML or JSON lines and validated.

The format is documented in ``docs/traces.md``. A trace holds:

- ``nodes``: machines (any ``--machine`` value), each with a name, a count and optionally a
  device inventory or PCI device rules;
- ``configs``: the kubelet configurations to compare (shorthands, inline mappings or paths;
  see ``numaplane.sim.configs``);
- ``templates``: named Pod manifests;
- ``events``: timed arrivals (a manifest or a template reference, with an optional lifetime),
  ends and device health changes.

Every problem raises ``TraceError`` (an ``InputError``) whose message is one line: the file, the
place (``events[12].pod.template``, or ``line 7: pod.template`` for JSON lines) and the reason.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

import yaml

from numaplane.api.manifest import pod_from_dict, pod_uid
from numaplane.api.pod import Pod
from numaplane.errors import InputError
from numaplane.node.devicemanager.device import Device
from numaplane.node.devicemanager.inventory import (
    DEFAULT_PCI_RULES,
    PCIRule,
    devices_from_machine,
)
from numaplane.sim.configs import FieldError as _Fail
from numaplane.sim.configs import NamedConfig, config_entry
from numaplane.topology.discover import load_machine
from numaplane.topology.model import Machine

__all__ = [
    "ARRIVE",
    "END",
    "HEALTH",
    "Event",
    "NodeSpec",
    "Trace",
    "TraceError",
    "load_trace",
    "parse_trace",
    "trace_from_dict",
]

KIND: Final = "Trace"
ARRIVE: Final = "arrive"
END: Final = "end"
HEALTH: Final = "device-health"
_EVENT_TYPES: Final = (ARRIVE, END, HEALTH)
_TOP_KEYS: Final = frozenset(
    {"apiVersion", "kind", "name", "seed", "nodes", "configs", "baseConfig", "templates", "events"}
)
_NODE_KEYS: Final = frozenset({"name", "machine", "count", "devices", "deviceRules"})
_EVENT_KEYS: Final = frozenset(
    {"t", "type", "pod", "lifetime", "node", "resource", "device", "healthy"}
)
_REF_KEYS: Final = frozenset({"template", "name", "namespace"})


class TraceError(InputError):
    """A trace cannot be used; ``str()`` is ``<file>: <place>: <reason>``."""


@dataclass(frozen=True)
class NodeSpec:
    """One kind of node of the trace: ``count`` identical nodes built from ``machine``.

    ``devices`` is the device inventory each of these nodes advertises (resource -> devices).
    """

    name: str
    machine_spec: str
    machine: Machine
    count: int
    devices: Mapping[str, tuple[Device, ...]]

    def node_names(self) -> tuple[str, ...]:
        """The names of the nodes: ``name`` alone, or ``name-0`` .. ``name-<count-1>``."""
        if self.count == 1:
            return (self.name,)
        return tuple(f"{self.name}-{i}" for i in range(self.count))


@dataclass(frozen=True)
class Event:
    """One timed event, in trace order.

    ``arrive``: ``pod`` arrives (``lifetime`` seconds later it ends, if set); ``end``: the pod
    ``pod_key`` (``namespace/name``) ends; ``device-health``: device ``device`` of ``resource`` on
    node ``node`` becomes unhealthy (or healthy again when ``healthy``). ``template`` names the
    template an arriving pod came from, if any.
    """

    t: float
    type: str
    pod: Pod | None = None
    template: str | None = None
    lifetime: float | None = None
    pod_key: str | None = None
    node: str | None = None
    resource: str | None = None
    device: str | None = None
    healthy: bool = False


@dataclass(frozen=True)
class Trace:
    """A validated trace."""

    name: str
    seed: int | None
    nodes: tuple[NodeSpec, ...]
    configs: tuple[NamedConfig, ...]
    templates: Mapping[str, Pod]
    events: tuple[Event, ...]
    base_config: Mapping[str, Any] | None = None
    source: str = field(default="<trace>", compare=False)

    def node_names(self) -> tuple[str, ...]:
        """Every node's name, in trace order."""
        return tuple(n for spec in self.nodes for n in spec.node_names())


def load_trace(path: str | Path) -> Trace:
    """Read and validate the trace at ``path`` (``.jsonl``/``.ndjson``: JSON lines, else YAML)."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        reason = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
        raise TraceError(source, f"cannot read the file: {reason}") from None
    return parse_trace(text, source, base_dir=Path(path).parent)


def parse_trace(text: str, source: str, base_dir: Path | None = None) -> Trace:
    """Validate trace ``text``; JSON lines when ``source`` ends in ``.jsonl``/``.ndjson``."""
    if source.endswith((".jsonl", ".ndjson")):
        return _parse_json_lines(text, source, base_dir)
    try:
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        documents = [d for d in yaml.load_all(text, Loader=loader) if d is not None]
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise TraceError(source, f"invalid YAML{where}: {problem}") from None
    if len(documents) != 1:
        raise TraceError(source, f"expected one YAML document, found {len(documents)}")
    return trace_from_dict(documents[0], source, base_dir)


def trace_from_dict(obj: object, source: str = "<trace>", base_dir: Path | None = None) -> Trace:
    """Validate an already-decoded trace document (events inline)."""
    try:
        header = _header(obj, source, base_dir)
        events = _list(obj, "events") if isinstance(obj, Mapping) else []
    except _Fail as fail:
        raise TraceError(source, fail.reason, fail.where or None) from None
    reader = _EventReader(header)
    parsed: list[Event] = []
    for index, raw in enumerate(events):
        try:
            parsed.append(reader.event(raw))
        except _Fail as fail:
            raise TraceError(source, fail.reason, _join(f"events[{index}]", fail.where)) from None
    return replace(header, events=tuple(parsed))


def _parse_json_lines(text: str, source: str, base_dir: Path | None) -> Trace:
    lines = text.splitlines()
    header: Trace | None = None
    reader: _EventReader | None = None
    events: list[Event] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as err:
            raise TraceError(source, f"invalid JSON: {err.msg}", f"line {number}") from None
        try:
            if header is None:
                header = _header(value, source, base_dir)
                if isinstance(value, Mapping) and "events" in value:
                    raise _Fail("events", "events go on the lines after the header")
                reader = _EventReader(header)
            else:
                assert reader is not None
                events.append(reader.event(value))
        except _Fail as fail:
            raise TraceError(source, fail.reason, _join(f"line {number}", fail.where)) from None
    if header is None:
        raise TraceError(source, "empty trace; expected a header line with kind: Trace")
    return replace(header, events=tuple(events))


# -- the header --------------------------------------------------------------------------


def _header(obj: object, source: str, base_dir: Path | None) -> Trace:
    if not isinstance(obj, Mapping):
        raise _Fail("", f"expected a mapping with kind: {KIND}, got {_describe(obj)}")
    unknown = sorted(str(k) for k in obj if k not in _TOP_KEYS)
    if unknown:
        raise _Fail(unknown[0], f"unknown key (expected {', '.join(sorted(_TOP_KEYS))})")
    if obj.get("kind", KIND) != KIND:
        raise _Fail("kind", f"expected {KIND!r}, got {obj.get('kind')!r}")
    name = obj.get("name", Path(source).stem)
    if not isinstance(name, str) or not name:
        raise _Fail("name", "expected a non-empty string")
    seed = obj.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise _Fail("seed", f"expected an integer, got {_describe(seed)}")
    base = obj.get("baseConfig")
    if base is not None and not isinstance(base, Mapping):
        raise _Fail("baseConfig", "expected a KubeletConfiguration mapping")
    nodes = tuple(
        _within(f"nodes[{i}]", _node, raw, base_dir) for i, raw in enumerate(_list(obj, "nodes"))
    )
    if not nodes:
        raise _Fail("nodes", "a trace needs at least one node")
    seen: set[str] = set()
    for i, spec in enumerate(nodes):
        for node_name in spec.node_names():
            if node_name in seen:
                raise _Fail(f"nodes[{i}].name", f"duplicate node name {node_name!r}")
            seen.add(node_name)
    configs = tuple(
        _within(f"configs[{i}]", config_entry, raw, base, base_dir)
        for i, raw in enumerate(_list(obj, "configs"))
    )
    names = [c.name for c in configs]
    for i, config_name in enumerate(names):
        if config_name in names[:i]:
            raise _Fail(f"configs[{i}]", f"duplicate config name {config_name!r}")
    raw_templates = obj.get("templates") or {}
    if not isinstance(raw_templates, Mapping):
        raise _Fail("templates", "expected a mapping of template name to Pod manifest")
    templates: dict[str, Pod] = {}
    for key, manifest in raw_templates.items():
        if not isinstance(manifest, Mapping):
            raise _Fail(f"templates.{key}", "expected a Pod manifest (a mapping)")
        templates[str(key)] = _pod(manifest, source, f"templates.{key}.")
    return Trace(
        name=name,
        seed=seed,
        nodes=nodes,
        configs=configs,
        templates=templates,
        events=(),
        base_config=base,
        source=source,
    )


def _node(raw: object, base_dir: Path | None) -> NodeSpec:
    if not isinstance(raw, Mapping):
        raise _Fail("", "expected a mapping with name and machine")
    unknown = sorted(str(k) for k in raw if k not in _NODE_KEYS)
    if unknown:
        raise _Fail(unknown[0], f"unknown key (expected {', '.join(sorted(_NODE_KEYS))})")
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise _Fail("name", "expected a non-empty string")
    spec = raw.get("machine")
    if not isinstance(spec, str) or not spec:
        raise _Fail("machine", "expected a --machine value (a path, a shape or a preset)")
    count = raw.get("count", 1)
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise _Fail("count", f"expected a positive integer, got {count!r}")
    machine = _machine(spec, base_dir)
    inventory = raw.get("devices")
    if inventory is not None and "deviceRules" in raw:
        raise _Fail("devices", "give devices or deviceRules, not both")
    if inventory is not None:
        devices = _within("devices", _inventory, inventory)
    else:
        rules = _within("deviceRules", _rules, raw.get("deviceRules"))
        devices = devices_from_machine(machine, rules)
    return NodeSpec(name, spec, machine, count, devices)


def _machine(spec: str, base_dir: Path | None) -> Machine:
    # A relative path is read beside the trace first, so traces travel with their machines.
    candidate = base_dir / spec if base_dir is not None else None
    text = str(candidate) if candidate is not None and candidate.exists() else spec
    try:
        return load_machine(text)
    except InputError as err:
        raise _Fail("machine", err.reason) from None


def _rules(raw: object) -> tuple[PCIRule, ...]:
    if raw is None:
        return DEFAULT_PCI_RULES
    if not isinstance(raw, list):
        raise _Fail("", "expected a list of RESOURCE=VENDOR[:CLASS_PREFIX] strings")
    rules: list[PCIRule] = []
    for i, text in enumerate(raw):
        if not isinstance(text, str):
            raise _Fail(f"[{i}]", "expected a RESOURCE=VENDOR[:CLASS_PREFIX] string")
        try:
            rules.append(PCIRule.parse(text))
        except InputError as err:
            raise _Fail(f"[{i}]", err.reason) from None
    return tuple(rules)


def _inventory(raw: object) -> dict[str, tuple[Device, ...]]:
    if not isinstance(raw, Mapping):
        raise _Fail("", "expected a mapping of resource name to a device list")
    out: dict[str, tuple[Device, ...]] = {}
    for resource, entries in raw.items():
        if not isinstance(resource, str) or "/" not in resource:
            raise _Fail(str(resource), "a device resource is named vendor-domain/name")
        if not isinstance(entries, list):
            raise _Fail(resource, "expected a list like [{id: vf0, numa: 0}, ...]")
        devices: list[Device] = []
        for i, entry in enumerate(entries):
            devices.append(_within(f"{resource}[{i}]", _device, entry))
        ids = [d.id for d in devices]
        for i, device_id in enumerate(ids):
            if device_id in ids[:i]:
                raise _Fail(f"{resource}[{i}].id", f"duplicate device id {device_id!r}")
        out[resource] = tuple(devices)
    return out


def _device(entry: object) -> Device:
    if not isinstance(entry, Mapping):
        raise _Fail("", "expected a mapping like {id: vf0, numa: 0}")
    unknown = sorted(str(k) for k in entry if k not in ("id", "numa", "healthy"))
    if unknown:
        raise _Fail(unknown[0], "unknown key (expected id, numa, healthy)")
    device_id = entry.get("id")
    if isinstance(device_id, bool) or not isinstance(device_id, str | int) or device_id == "":
        raise _Fail("id", "expected a non-empty device id")
    numa = entry.get("numa")
    numa_nodes: tuple[int, ...] | None = None
    if numa is not None:
        values = numa if isinstance(numa, list) else [numa]
        if not values or any(isinstance(v, bool) or not isinstance(v, int) for v in values):
            raise _Fail("numa", f"expected a NUMA node id or a list of them, got {numa!r}")
        numa_nodes = tuple(dict.fromkeys(values))
    healthy = entry.get("healthy", True)
    if not isinstance(healthy, bool):
        raise _Fail("healthy", "expected true or false")
    return Device(str(device_id), numa_nodes, healthy)


# -- events ------------------------------------------------------------------------------


class _EventReader:
    """Validates events against the header; keeps the pods seen so far."""

    def __init__(self, header: Trace) -> None:
        self.header = header
        self.source = header.source
        self.devices = {name: spec.devices for spec in header.nodes for name in spec.node_names()}
        self.arrived: set[str] = set()
        self.last_t = 0.0
        self.count = 0

    def event(self, raw: object) -> Event:
        if not isinstance(raw, Mapping):
            raise _Fail("", f"expected an event mapping, got {_describe(raw)}")
        unknown = sorted(str(k) for k in raw if k not in _EVENT_KEYS)
        if unknown:
            raise _Fail(unknown[0], f"unknown key (expected {', '.join(sorted(_EVENT_KEYS))})")
        t = _number(raw.get("t"), "t", required=True)
        assert t is not None
        if t < self.last_t:
            raise _Fail("t", f"events must be in time order ({t} comes after {self.last_t})")
        self.last_t = t
        kind = raw.get("type", ARRIVE)
        if kind not in _EVENT_TYPES:
            raise _Fail("type", f"expected one of {', '.join(_EVENT_TYPES)}, got {kind!r}")
        self.count += 1
        if kind == ARRIVE:
            return self._arrive(raw, t)
        if kind == END:
            key = raw.get("pod")
            if not isinstance(key, str) or not key:
                raise _Fail("pod", "expected the ending pod's name or namespace/name")
            full = key if "/" in key else f"default/{key}"
            if full not in self.arrived:
                raise _Fail("pod", f"no pod {full} arrived before this event")
            return Event(t, END, pod_key=full)
        return self._health(raw, t)

    def _arrive(self, raw: Mapping[str, Any], t: float) -> Event:
        lifetime = _number(raw.get("lifetime"), "lifetime", required=False)
        if lifetime is not None and lifetime < 0:
            raise _Fail("lifetime", "must not be negative")
        ref = raw.get("pod")
        if not isinstance(ref, Mapping):
            raise _Fail("pod", "expected a Pod manifest or {template: NAME, name: NAME}")
        template: str | None = None
        if "template" in ref:
            unknown = sorted(str(k) for k in ref if k not in _REF_KEYS)
            if unknown:
                raise _Fail(f"pod.{unknown[0]}", "unknown key (expected template, name, namespace)")
            template = ref["template"]
            if not isinstance(template, str) or template not in self.header.templates:
                known = ", ".join(sorted(self.header.templates)) or "none"
                raise _Fail("pod.template", f"unknown template {template!r} (known: {known})")
            name = ref.get("name", f"{template}-{self.count}")
            namespace = ref.get("namespace", "default")
            for label, value in (("name", name), ("namespace", namespace)):
                if not isinstance(value, str) or not value:
                    raise _Fail(f"pod.{label}", "expected a non-empty string")
            base = self.header.templates[template]
            pod = replace(base, name=name, namespace=namespace, uid=pod_uid(namespace, name))
        else:
            pod = _pod(ref, self.source, "pod.")
        if pod.key in self.arrived:
            raise _Fail("pod", f"pod {pod.key} already arrived; pod names must be unique")
        self.arrived.add(pod.key)
        return Event(t, ARRIVE, pod=pod, template=template, lifetime=lifetime, pod_key=pod.key)

    def _health(self, raw: Mapping[str, Any], t: float) -> Event:
        node = raw.get("node")
        if not isinstance(node, str) or node not in self.devices:
            known = ", ".join(self.devices)
            raise _Fail("node", f"unknown node {node!r} (nodes: {known})")
        inventory = self.devices[node]
        resource = raw.get("resource")
        if not isinstance(resource, str) or resource not in inventory:
            raise _Fail("resource", f"node {node} has no device resource {resource!r}")
        device = raw.get("device")
        if isinstance(device, int) and not isinstance(device, bool):
            device = str(device)
        if device not in {d.id for d in inventory[resource]}:
            raise _Fail("device", f"node {node} has no {resource} device {device!r}")
        healthy = raw.get("healthy", False)
        if not isinstance(healthy, bool):
            raise _Fail("healthy", "expected true or false")
        return Event(t, HEALTH, node=node, resource=resource, device=device, healthy=healthy)


# -- helpers -----------------------------------------------------------------------------


def _pod(manifest: Mapping[str, Any], source: str, prefix: str) -> Pod:
    try:
        return pod_from_dict(manifest, source, prefix)
    except InputError as err:
        raise _Fail(err.field or prefix.rstrip("."), err.reason) from None


def _list(obj: Mapping[str, Any], key: str) -> Sequence[Any]:
    value = obj.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise _Fail(key, f"expected a list, got {_describe(value)}")
    return value


def _number(value: object, where: str, *, required: bool) -> float | None:
    if value is None:
        if required:
            raise _Fail(where, "required (seconds, a number)")
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _Fail(where, f"expected a number of seconds, got {_describe(value)}")
    if value < 0:
        raise _Fail(where, "must not be negative")
    return float(value)


def _within(where: str, fn: Any, *args: Any) -> Any:
    try:
        return fn(*args)
    except _Fail as fail:
        raise _Fail(_join(where, fail.where), fail.reason) from None


def _join(outer: str, inner: str) -> str:
    if not inner:
        return outer
    if not outer:
        return inner
    if outer.startswith("line "):
        return f"{outer}: {inner}"
    return outer + inner if inner.startswith("[") else f"{outer}.{inner}"


def _describe(value: object) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return f"{type(value).__name__} {value!r}"
