"""Simulator traces: what runs where and when, read from YAML or JSON lines and validated.

(Just over 400 lines: the reader of one format, kept whole; nodes are in ``trace_nodes``.)

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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

import yaml

from numaplane.api.manifest import pod_from_dict, pod_uid
from numaplane.api.pod import Pod
from numaplane.errors import InputError
from numaplane.sim.configs import FieldError as _Fail
from numaplane.sim.configs import NamedConfig, config_entry
from numaplane.sim.limits import (
    MAX_CONFIGS,
    MAX_EVENTS,
    MAX_TRACE_BYTES,
    LimitError,
    check_aliases,
    check_seconds,
    describe,
    printable,
    shown,
)
from numaplane.sim.trace_nodes import NodeSpec, join_field, parse_nodes, within

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
_EVENT_KEYS: Final = frozenset(
    {"t", "type", "pod", "lifetime", "node", "resource", "device", "healthy"}
)
_REF_KEYS: Final = frozenset({"template", "name", "namespace"})


class TraceError(InputError):
    """A trace cannot be used; ``str()`` is ``<file>: <place>: <reason>``, on one line (names
    and keys from the trace are escaped: see ``printable``)."""

    def __init__(self, source: str, reason: str, field: str | None = None) -> None:
        super().__init__(
            printable(source), printable(reason), None if field is None else printable(field)
        )


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
        # Read at most one byte past the limit: /dev/zero or a huge file is refused, not read.
        with Path(path).open("rb") as handle:
            data = handle.read(MAX_TRACE_BYTES + 1)
        if len(data) > MAX_TRACE_BYTES:
            raise TraceError(
                source, f"the file is over the simulator's limit of {MAX_TRACE_BYTES >> 20} MiB"
            )
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise TraceError(source, f"not UTF-8 text (byte {err.start})") from None
    except OSError as err:
        raise TraceError(source, f"cannot read the file: {err.strerror or err}") from None
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
        problem = getattr(err, "problem", None) or (str(err).splitlines() or ["?"])[0]
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise TraceError(source, f"invalid YAML{where}: {problem}") from None
    except (ValueError, RecursionError) as err:
        # The constructors' own limits: an integer of over 4,300 digits, nesting too deep.
        raise TraceError(source, f"invalid YAML: {_first_line(err)}") from None
    if len(documents) != 1:
        raise TraceError(source, f"expected one YAML document, found {len(documents)}")
    try:
        check_aliases(documents[0], len(text) + 10_000)
    except LimitError as err:
        raise TraceError(source, err.reason) from None
    return trace_from_dict(documents[0], source, base_dir)


def trace_from_dict(obj: object, source: str = "<trace>", base_dir: Path | None = None) -> Trace:
    """Validate an already-decoded trace document (events inline)."""
    try:
        header = _header(obj, source, base_dir)
        events = _list(obj, "events") if isinstance(obj, Mapping) else []
        if len(events) > MAX_EVENTS:
            raise _Fail("events", f"{len(events):,} events: over the limit of {MAX_EVENTS:,}")
    except _Fail as fail:
        raise TraceError(source, fail.reason, fail.where or None) from None
    reader = _EventReader(header)
    parsed: list[Event] = []
    for index, raw in enumerate(events):
        try:
            parsed.append(reader.event(raw))
        except _Fail as fail:
            raise TraceError(
                source, fail.reason, join_field(f"events[{index}]", fail.where)
            ) from None
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
        except (ValueError, RecursionError) as err:
            raise TraceError(
                source, f"invalid JSON: {_first_line(err)}", f"line {number}"
            ) from None
        if header is not None and len(events) >= MAX_EVENTS:
            raise TraceError(
                source, f"over the simulator's limit of {MAX_EVENTS:,} events", f"line {number}"
            )
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
            raise TraceError(
                source, fail.reason, join_field(f"line {number}", fail.where)
            ) from None
    if header is None:
        raise TraceError(source, "empty trace; expected a header line with kind: Trace")
    return replace(header, events=tuple(events))


# -- the header --------------------------------------------------------------------------


def _header(obj: object, source: str, base_dir: Path | None) -> Trace:
    if not isinstance(obj, Mapping):
        raise _Fail("", f"expected a mapping with kind: {KIND}, got {describe(obj)}")
    unknown = sorted(str(k) for k in obj if k not in _TOP_KEYS)
    if unknown:
        raise _Fail(unknown[0], f"unknown key (expected {', '.join(sorted(_TOP_KEYS))})")
    if obj.get("kind", KIND) != KIND:
        raise _Fail("kind", f"expected {KIND!r}, got {shown(obj.get('kind'))}")
    name = obj.get("name", Path(source).stem)
    if not isinstance(name, str) or not name:
        raise _Fail("name", "expected a non-empty string")
    seed = obj.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise _Fail("seed", f"expected an integer, got {describe(seed)}")
    base = obj.get("baseConfig")
    if base is not None and not isinstance(base, Mapping):
        raise _Fail("baseConfig", "expected a KubeletConfiguration mapping")
    nodes = parse_nodes(_list(obj, "nodes"), base_dir)
    if not nodes:
        raise _Fail("nodes", "a trace needs at least one node")
    seen: set[str] = set()
    for i, spec in enumerate(nodes):
        for node_name in spec.node_names():
            if node_name in seen:
                raise _Fail(f"nodes[{i}].name", f"duplicate node name {node_name!r}")
            seen.add(node_name)
    raw_configs = _list(obj, "configs")
    if len(raw_configs) > MAX_CONFIGS:
        raise _Fail("configs", f"{len(raw_configs)} configs: over the limit of {MAX_CONFIGS}")
    configs = tuple(
        replace(
            within(f"configs[{i}]", config_entry, raw, base, base_dir),
            origin=f"{source}: configs[{i}]",
        )
        for i, raw in enumerate(raw_configs)
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
            raise _Fail("", f"expected an event mapping, got {describe(raw)}")
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
            raise _Fail("type", f"expected one of {', '.join(_EVENT_TYPES)}, got {shown(kind)}")
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
                raise _Fail("pod.template", f"unknown template {shown(template)} (known: {known})")
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
            raise _Fail("node", f"unknown node {shown(node)} (nodes: {known})")
        inventory = self.devices[node]
        resource = raw.get("resource")
        if not isinstance(resource, str) or resource not in inventory:
            raise _Fail("resource", f"node {node} has no device resource {shown(resource)}")
        device = raw.get("device")
        if isinstance(device, int) and not isinstance(device, bool):
            device = str(device)
        if not isinstance(device, str) or device not in {d.id for d in inventory[resource]}:
            raise _Fail("device", f"node {node} has no {resource} device {shown(device)}")
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
        raise _Fail(key, f"expected a list, got {describe(value)}")
    return value


def _number(value: object, where: str, *, required: bool) -> float | None:
    if value is None:
        if required:
            raise _Fail(where, "required (seconds, a number)")
        return None
    try:
        return check_seconds(value)
    except LimitError as err:
        raise _Fail(where, err.reason) from None


def _first_line(err: BaseException) -> str:
    return (str(err).splitlines() or [type(err).__name__])[0]
