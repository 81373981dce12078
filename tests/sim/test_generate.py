"""Workload generators: seeded, byte-stable, valid traces of the documented mixes."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from numaplane.errors import InputError
from numaplane.sim.generate import MIXES, Lifetime, dump_trace, generate, parse_size_mix
from numaplane.sim.trace import parse_trace
from numaplane.topology.discover import load_machine

SPEC = "sockets=2,numa-per-socket=2,cores-per-numa=4,hugepages-1Gi-per-numa=4"
MACHINE = load_machine(SPEC)


def text(mix: str, seed: int, **kw: object) -> str:
    return dump_trace(generate(mix, seed=seed, pods=50, machine_spec=SPEC, machine=MACHINE, **kw))  # type: ignore[arg-type]


@pytest.mark.parametrize("mix", MIXES)
def test_same_seed_same_bytes_other_seed_other_bytes(mix: str) -> None:
    assert text(mix, 1) == text(mix, 1)
    assert text(mix, 1) != text(mix, 2)


@pytest.mark.parametrize("mix", MIXES)
def test_generated_trace_is_valid(mix: str) -> None:
    trace = parse_trace(text(mix, 5), f"{mix}.yaml")
    assert len(trace.events) == 50
    assert trace.seed == 5
    assert all(e.lifetime is not None for e in trace.events)
    times = [e.t for e in trace.events]
    assert times == sorted(times)


def test_telco_pods_carry_hugepages_and_a_vf() -> None:
    trace = parse_trace(text("telco", 1), "t.yaml")
    resources = {r for p in trace.templates.values() for r in p.containers[0].resources.limits}
    assert {"hugepages-1Gi", "intel.com/sriov_vf"} <= resources
    assert len(trace.nodes[0].devices["intel.com/sriov_vf"]) == 8 * 4


def test_ml_pods_take_four_cpus_per_gpu() -> None:
    trace = parse_trace(text("ml", 1, size_mix=parse_size_mix("2:1")), "t.yaml")
    (template,) = trace.templates.values()
    limits = template.containers[0].resources.limits
    assert limits["nvidia.com/gpu"].value() == 2
    assert limits["cpu"].value() == 8


def test_batch_mixes_qos_classes() -> None:
    trace = parse_trace(text("batch", 1), "t.yaml")
    classes = {str(p.qos_class) for p in trace.templates.values()}
    assert classes == {"Guaranteed", "Burstable", "BestEffort"}


def test_lifetime_none_and_fixed() -> None:
    trace = parse_trace(text("telco", 1, lifetime=Lifetime.parse("none")), "t.yaml")
    assert all(e.lifetime is None for e in trace.events)
    trace = parse_trace(text("telco", 1, lifetime=Lifetime.parse("fixed:30")), "t.yaml")
    assert {e.lifetime for e in trace.events} == {30.0}


@dataclass(frozen=True)
class BadSyntax:
    name: str
    kind: str
    value: str


BAD = [
    BadSyntax("lifetime word", "lifetime", "forever"),
    BadSyntax("lifetime negative mean", "lifetime", "exp:-1"),
    BadSyntax("lifetime reversed range", "lifetime", "uniform:9-1"),
    BadSyntax("size not a number", "size", "x:1"),
    BadSyntax("size zero weight", "size", "2:0"),
]


@pytest.mark.parametrize("case", BAD, ids=[c.name for c in BAD])
def test_bad_parameters_are_input_errors(case: BadSyntax) -> None:
    parse = Lifetime.parse if case.kind == "lifetime" else parse_size_mix
    with pytest.raises(InputError):
        parse(case.value)
