"""Trace loading and validation: every error names the place (path or line) and the reason."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from numaplane.errors import InputError
from numaplane.sim.trace import ARRIVE, END, HEALTH, TraceError, load_trace, trace_from_dict

MACHINE = "sockets=2,cores-per-numa=4,memory-per-numa=8Gi"


def pod(name: str, cpu: str = "2", memory: str = "1Gi") -> dict[str, Any]:
    """A Guaranteed single-container Pod manifest."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "containers": [{"name": "c", "resources": {"limits": {"cpu": cpu, "memory": memory}}}]
        },
    }


def base(**overrides: Any) -> dict[str, Any]:
    """A valid trace document, with top-level keys replaced."""
    doc: dict[str, Any] = {
        "kind": "Trace",
        "name": "t",
        "nodes": [
            {
                "name": "w",
                "machine": MACHINE,
                "devices": {"example.com/dev": [{"id": "d0", "numa": 0}]},
            }
        ],
        "configs": ["single-numa-node"],
        "templates": {"small": pod("small")},
        "events": [
            {"t": 0, "pod": {"template": "small", "name": "a"}, "lifetime": 5},
            {"t": 1, "pod": pod("b")},
            {"t": 2, "type": "end", "pod": "b"},
            {
                "t": 3,
                "type": "device-health",
                "node": "w",
                "resource": "example.com/dev",
                "device": "d0",
            },
        ],
    }
    doc.update(overrides)
    return doc


def test_valid_trace_reads_every_event_kind() -> None:
    trace = trace_from_dict(base())
    assert [e.type for e in trace.events] == [ARRIVE, ARRIVE, END, HEALTH]
    first = trace.events[0]
    assert first.pod is not None
    assert first.pod.name == "a"
    assert first.template == "small"
    assert first.lifetime == 5.0
    assert trace.events[2].pod_key == "default/b"
    assert trace.node_names() == ("w",)
    assert [c.name for c in trace.configs] == ["single-numa-node"]
    assert trace.configs[0].config.topology_manager_policy == "single-numa-node"


@dataclass(frozen=True)
class BadCase:
    name: str
    doc: dict[str, Any]
    message: str


BAD = [
    BadCase(
        "unknown template",
        base(events=[{"t": 0, "pod": {"template": "nope"}}]),
        "events[0].pod.template: unknown template 'nope'",
    ),
    BadCase(
        "time goes back",
        base(events=[{"t": 2, "pod": pod("a")}, {"t": 1, "pod": pod("b")}]),
        "events[1].t: events must be in time order",
    ),
    BadCase(
        "bad pod manifest",
        base(events=[{"t": 0, "pod": pod("a", cpu="two")}]),
        "events[0].pod.spec.containers[0].resources.limits.cpu",
    ),
    BadCase(
        "end of unknown pod",
        base(events=[{"t": 0, "type": "end", "pod": "ghost"}]),
        "events[0].pod: no pod default/ghost arrived",
    ),
    BadCase(
        "duplicate pod",
        base(events=[{"t": 0, "pod": pod("a")}, {"t": 1, "pod": pod("a")}]),
        "events[1].pod: pod default/a already arrived",
    ),
    BadCase(
        "unknown device",
        base(
            events=[
                {
                    "t": 0,
                    "type": "device-health",
                    "node": "w",
                    "resource": "example.com/dev",
                    "device": "zz",
                }
            ]
        ),
        "events[0].device: node w has no example.com/dev device 'zz'",
    ),
    BadCase(
        "unknown event type",
        base(events=[{"t": 0, "type": "explode"}]),
        "events[0].type: expected one of",
    ),
    BadCase(
        "bad machine",
        base(nodes=[{"name": "w", "machine": "no-such-machine"}]),
        "nodes[0].machine:",
    ),
    BadCase(
        "bad device entry",
        base(
            nodes=[{"name": "w", "machine": MACHINE, "devices": {"example.com/dev": [{"numa": 0}]}}]
        ),
        "nodes[0].devices.example.com/dev[0].id: expected a non-empty device id",
    ),
    BadCase(
        "bad config shorthand",
        base(configs=["sometimes-numa"]),
        "configs[0]: 'sometimes-numa': unknown policy",
    ),
    BadCase(
        "bad inline config",
        base(configs=[{"name": "x", "config": {"cpuManagerPolicy": "fast"}}]),
        "configs[0].config.cpuManagerPolicy: unknown policy",
    ),
    BadCase(
        "negative lifetime",
        base(events=[{"t": 0, "pod": pod("a"), "lifetime": -1}]),
        "events[0].lifetime",
    ),
    BadCase("unknown top key", base(extra=1), "t.yaml: extra: unknown key"),
    BadCase("no nodes", base(nodes=[]), "nodes: a trace needs at least one node"),
]


@pytest.mark.parametrize("case", BAD, ids=[c.name for c in BAD])
def test_invalid_yaml_trace_names_the_path(case: BadCase, tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump(case.doc))
    with pytest.raises(TraceError) as info:
        load_trace(path)
    message = str(info.value)
    assert case.message in message
    assert message.startswith(str(path))
    assert "\n" not in message
    assert isinstance(info.value, InputError)


def write_jsonl(path: Path, doc: dict[str, Any]) -> None:
    """A trace as JSON lines: the header, then one event per line."""
    events = doc.pop("events")
    path.write_text("\n".join(json.dumps(x) for x in [doc, *events]) + "\n")


def test_json_lines_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    write_jsonl(path, base())
    assert load_trace(path) == trace_from_dict(base())


def test_json_lines_error_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    write_jsonl(path, base(events=[{"t": 0, "pod": pod("a")}, {"t": 1, "pod": {"template": "zz"}}]))
    with pytest.raises(TraceError, match=r"t\.jsonl: line 3: pod\.template: unknown template"):
        load_trace(path)


def test_json_lines_bad_json_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    header = base()
    del header["events"]
    path.write_text(json.dumps(header) + "\n{oops\n")
    with pytest.raises(TraceError, match=r"line 2: invalid JSON"):
        load_trace(path)


def test_template_pods_get_distinct_uids() -> None:
    trace = trace_from_dict(
        base(
            events=[{"t": 0, "pod": {"template": "small"}}, {"t": 0, "pod": {"template": "small"}}]
        )
    )
    pods = [e.pod for e in trace.events if e.pod is not None]
    assert len({p.uid for p in pods}) == 2
    assert [p.name for p in pods] == ["small-1", "small-2"]


def test_counted_nodes_are_numbered() -> None:
    trace = trace_from_dict(base(nodes=[{"name": "w", "machine": MACHINE, "count": 3}], events=[]))
    assert trace.node_names() == ("w-0", "w-1", "w-2")


def test_example_trace_loads() -> None:
    root = Path(__file__).resolve().parents[2]
    trace = load_trace(root / "examples" / "traces" / "kep6007.yaml")
    assert len(trace.configs) == 2
    assert trace.events[0].template == "gpu"
