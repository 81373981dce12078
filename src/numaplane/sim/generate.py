"""Seeded workload generators: traces of a documented mix of pods (``numaplane trace generate``).

Mixes (``docs/traces.md`` has the full description):

- ``telco``: many small Guaranteed pods (CPUs from the size mix, 1Gi of memory per CPU), each
  with hugepages (``hugepages-1Gi: 1Gi`` when the machine has 1Gi pages, else ``hugepages-2Mi:
  256Mi`` when it has 2Mi pages, else none) and one SR-IOV VF (``intel.com/sriov_vf``; the trace
  declares 8 VFs per NUMA node);
- ``ml``: GPU pods; the size mix counts GPUs (``nvidia.com/gpu``), each GPU comes with 4
  exclusive CPUs and 8Gi of memory, so the CPUs are aligned to the GPU under an aligning
  policy. The machine's NVIDIA GPUs are used when it has any, else the trace declares 2 per NUMA
  node;
- ``batch``: Guaranteed (50%), Burstable (30%: requests half the CPUs of its limit) and
  BestEffort (20%) pods, CPUs from the size mix, 2Gi of memory per CPU.

Arrivals are a Poisson process of ``arrival_rate`` pods per second; every pod gets a lifetime
drawn from the lifetime distribution. All randomness comes from one ``random.Random(seed)``
and the YAML is written with sorted keys, so the same arguments give byte-identical traces.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import yaml

from numaplane.errors import InputError
from numaplane.node.devicemanager.inventory import devices_from_machine
from numaplane.sim.limits import (
    MAX_EVENTS,
    MAX_POD_SIZE,
    MAX_SIZE_MIX,
    MAX_WEIGHT,
    LimitError,
    check_count,
    check_seconds,
)
from numaplane.topology.model import Machine

__all__ = [
    "DEFAULT_LIFETIME",
    "DEFAULT_SIZE_MIX",
    "MIXES",
    "Lifetime",
    "check_arrival_rate",
    "dump_trace",
    "generate",
    "parse_size_mix",
]

MIXES: Final = ("telco", "ml", "batch")
DEFAULT_SIZE_MIX: Final[Mapping[str, str]] = {
    "telco": "1:4,2:4,4:2",
    "ml": "1:6,2:3,4:1",
    "batch": "1:3,2:3,4:2,8:1",
}
DEFAULT_LIFETIME: Final[Mapping[str, str]] = {
    "telco": "exp:600",
    "ml": "exp:1800",
    "batch": "exp:300",
}
DEFAULT_CONFIGS: Final = (
    "best-effort",
    "single-numa-node",
    "single-numa-node+prefer-most-allocated-numa-node",
)
VF_RESOURCE: Final = "intel.com/sriov_vf"
GPU_RESOURCE: Final = "nvidia.com/gpu"
VFS_PER_NUMA: Final = 8
GPUS_PER_NUMA: Final = 2
GIB: Final = 1 << 30


@dataclass(frozen=True, slots=True)
class Lifetime:
    """A lifetime distribution: ``none``, ``exp:MEAN``, ``fixed:SECONDS``, ``uniform:LOW-HIGH``."""

    kind: str
    a: float = 0.0
    b: float = 0.0

    @classmethod
    def parse(cls, text: str) -> Lifetime:
        """Parse the ``--lifetime`` syntax; ``InputError`` on anything else.

        Every number is checked like a trace's lifetimes (finite, at most ``MAX_SECONDS``),
        so the generator never writes a lifetime ``simulate`` refuses.
        """
        kind, _, rest = text.partition(":")
        shown = repr(text[:60] + "...") if len(text) > 60 else repr(text)
        try:
            if kind == "none" and not rest:
                return cls("none")
            if kind in ("exp", "fixed"):
                value = check_seconds(_float(rest))
                if value > 0:
                    return cls(kind, value)
            if kind == "uniform":
                # LOW-HIGH, where a number may carry a signed exponent (1e-3-2): split at the
                # dash that leaves a number on both sides.
                for low, high in _splits(rest):
                    a, b = check_seconds(low), check_seconds(high)
                    if a <= b:
                        return cls(kind, a, b)
        except LimitError as err:
            raise InputError("--lifetime", f"{shown}: {err.reason}") from None
        raise InputError(
            "--lifetime",
            f"{shown}: expected none, exp:MEAN, fixed:SECONDS or uniform:LOW-HIGH "
            "(seconds; MEAN and SECONDS > 0, LOW <= HIGH)",
        )

    def sample(self, rng: random.Random) -> float | None:
        """One lifetime in seconds (``None`` for ``none``: the pod never ends)."""
        if self.kind == "none":
            return None
        if self.kind == "fixed":
            return self.a
        if self.kind == "exp":
            return rng.expovariate(1.0 / self.a)
        return rng.uniform(self.a, self.b)


def parse_size_mix(text: str) -> tuple[tuple[int, float], ...]:
    """``SIZE:WEIGHT,...`` (e.g. ``1:4,2:4,4:2``): sizes with relative weights.

    SIZE is a whole number in ``1..MAX_POD_SIZE``, WEIGHT a finite number in
    ``(0, MAX_WEIGHT]``; at most ``MAX_SIZE_MIX`` entries.
    """
    items = text.split(",")
    if len(items) > MAX_SIZE_MIX:
        raise InputError(
            "--size-mix", f"{len(items)} entries: over the limit of {MAX_SIZE_MIX} sizes"
        )
    out: list[tuple[int, float]] = []
    for item in items:
        size, _, weight = item.partition(":")
        shown = repr(item[:40] + "...") if len(item) > 40 else repr(item)
        number = _int(size)
        share = _float(weight or "1")
        if number is None or not 0 < number <= MAX_POD_SIZE:
            raise InputError(
                "--size-mix", f"{shown}: SIZE must be a whole number from 1 to {MAX_POD_SIZE}"
            )
        if not (math.isfinite(share) and 0 < share <= MAX_WEIGHT):
            raise InputError(
                "--size-mix", f"{shown}: WEIGHT must be a number above 0, at most {MAX_WEIGHT:g}"
            )
        out.append((number, share))
    return tuple(out)


def _splits(text: str) -> list[tuple[float, float]]:
    pairs = []
    for index, char in enumerate(text):
        if char == "-" and 0 < index < len(text) - 1:
            low, high = _float(text[:index]), _float(text[index + 1 :])
            if not (math.isnan(low) or math.isnan(high)):
                pairs.append((low, high))
    return pairs[:1]


def _float(text: str) -> float:
    # NaN for anything that is not a number: every caller refuses NaN with its own message.
    try:
        return float(text)
    except ValueError:
        return math.nan


def _int(text: str) -> int | None:
    stripped = text.strip()
    return int(stripped) if re.fullmatch(r"[0-9]{1,12}", stripped) else None


def check_arrival_rate(rate: float) -> float:
    """``--arrival-rate``: a finite number of arrivals per second above 0."""
    if not (math.isfinite(rate) and rate > 0):
        raise InputError("--arrival-rate", f"expected a finite number above 0, got {rate!r}")
    return rate


def generate(
    mix: str,
    *,
    seed: int,
    pods: int,
    machine_spec: str,
    machine: Machine,
    arrival_rate: float = 1.0,
    lifetime: Lifetime | None = None,
    size_mix: Sequence[tuple[int, float]] | None = None,
) -> dict[str, Any]:
    """A trace document of ``pods`` arrivals of ``mix`` on one node built from ``machine``."""
    if mix not in MIXES:
        raise InputError("--mix", f"unknown mix {mix!r} (expected {', '.join(MIXES)})")
    try:
        check_count(pods, MAX_EVENTS, "pods (events) per trace", minimum=0)
    except LimitError as err:
        raise InputError("--pods", err.reason) from None
    check_arrival_rate(arrival_rate)
    rng = random.Random(seed)
    sizes = tuple(size_mix) if size_mix else parse_size_mix(DEFAULT_SIZE_MIX[mix])
    life = lifetime if lifetime is not None else Lifetime.parse(DEFAULT_LIFETIME[mix])
    node: dict[str, Any] = {"name": "node", "machine": machine_spec}
    shapes = _shapes(mix, sizes, machine, node)
    weights = [w for _, w in shapes]
    templates = {name: manifest for (name, manifest), _ in shapes}
    names = [name for (name, _), _ in shapes]
    events: list[dict[str, Any]] = []
    t = 0.0
    for index in range(pods):
        t += rng.expovariate(arrival_rate)
        template = rng.choices(names, weights)[0]
        event: dict[str, Any] = {
            "t": _checked(round(t, 3), "--arrival-rate", f"arrival {index}'s time"),
            "pod": {"template": template, "name": f"{template}-{index}"},
        }
        span = life.sample(rng)
        if span is not None:
            event["lifetime"] = _checked(
                round(span, 3), "--lifetime", f"arrival {index}'s lifetime"
            )
        events.append(event)
    return {
        "kind": "Trace",
        "name": f"{mix}-seed{seed}",
        "seed": seed,
        "nodes": [node],
        "configs": list(DEFAULT_CONFIGS),
        "templates": templates,
        "events": events,
    }


def _checked(seconds: float, option: str, what: str) -> float:
    # The trace reader's own check, so what is written here is never refused there.
    try:
        return check_seconds(seconds)
    except LimitError as err:
        raise InputError(option, f"{what}: {err.reason}") from None


def dump_trace(document: Mapping[str, Any]) -> str:
    """The trace as YAML text with sorted keys (byte-stable for equal documents)."""
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return yaml.dump(
        dict(document), Dumper=dumper, sort_keys=True, default_flow_style=None, width=100
    )


Shape = tuple[tuple[str, dict[str, Any]], float]


def _pod(
    name: str, limits: Mapping[str, str], requests: Mapping[str, str] | None = None
) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    if limits:
        resources["limits"] = dict(limits)
    if requests:
        resources["requests"] = dict(requests)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "main", "resources": resources}]},
    }


def _shapes(
    mix: str, sizes: Sequence[tuple[int, float]], machine: Machine, node: dict[str, Any]
) -> list[Shape]:
    numa_ids = machine.numa_ids or (0,)
    if mix == "telco":
        node["devices"] = {
            VF_RESOURCE: [
                {"id": f"vf{n}-{i}", "numa": n} for n in numa_ids for i in range(VFS_PER_NUMA)
            ]
        }
        pages = {p.resource_name for n in machine.numa_nodes for p in n.hugepages if p.total}
        hugepages = (
            {"hugepages-1Gi": "1Gi"}
            if "hugepages-1Gi" in pages
            else {"hugepages-2Mi": "256Mi"}
            if "hugepages-2Mi" in pages
            else {}
        )
        return [
            (
                _named(
                    f"telco-{cpus}cpu",
                    {"cpu": str(cpus), "memory": f"{cpus}Gi", **hugepages, VF_RESOURCE: "1"},
                ),
                weight,
            )
            for cpus, weight in sizes
        ]
    if mix == "ml":
        if GPU_RESOURCE not in devices_from_machine(machine):
            node["devices"] = {
                GPU_RESOURCE: [
                    {"id": f"gpu{n}-{i}", "numa": n} for n in numa_ids for i in range(GPUS_PER_NUMA)
                ]
            }
        return [
            (
                _named(
                    f"ml-{gpus}gpu",
                    {"cpu": str(4 * gpus), "memory": f"{8 * gpus}Gi", GPU_RESOURCE: str(gpus)},
                ),
                weight,
            )
            for gpus, weight in sizes
        ]
    shapes: list[Shape] = []
    best_effort = 0.0
    for cpus, weight in sizes:
        memory = f"{2 * cpus}Gi"
        shapes.append(
            (_named(f"batch-g{cpus}", {"cpu": str(cpus), "memory": memory}), weight * 0.5)
        )
        half = f"{cpus * 500}m"
        shapes.append(
            (
                (
                    f"batch-b{cpus}",
                    _pod(f"batch-b{cpus}", {"cpu": str(cpus)}, {"cpu": half, "memory": memory}),
                ),
                weight * 0.3,
            )
        )
        best_effort += weight * 0.2
    shapes.append((("batch-be", _pod("batch-be", {})), best_effort))
    return shapes


def _named(name: str, limits: Mapping[str, str]) -> tuple[str, dict[str, Any]]:
    return name, _pod(name, limits)
