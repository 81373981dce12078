"""The simulator's results: per configuration run, the measures of ``docs/traces.md``.

``Results.to_json()`` is the document ``numaplane simulate --output json`` prints and the report
and bound read. Its shape is fixed::

    {"trace": str, "seed": int | null,
     "nodes": [{"name": str, "machine": str, "numa": int, "cpus": int}],
     "runs": [{"config": str, "admitted": int, "rejected": int,
               "rejected_by_reason": {reason: int},
               "timeline": [{"t": float, "admitted_pods": int, "exclusive_cpus": int,
                             "memory_bytes": int}],
               "numa_utilization": {"<node>/<numa id>": {"cpu": float, "memory": float}},
               "stranded_cpus": int, "alignment": float,
               "optimum": int | null, "optimum_ratio": float | null,
               "optimum_bound": int | null, "optimum_best": int | null,
               "optimum_note": str | null,
               "timing": {"admission_p50_ms": float, "admission_p99_ms": float} | null}]}

``optimum`` is set only when the solver proved it; ``optimum_bound`` (a proven upper bound) and
``optimum_best`` (the most pods of a placement it found, null if none) are set whenever it ran,
and ``optimum_note`` says why a search ended unproven.

Everything but ``timing`` is a function of the inputs alone; ``to_json(deterministic=True)``
sets ``timing`` to null so two runs give byte-identical documents.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

__all__ = ["NodeInfo", "NumaUse", "Results", "RunResult", "TimelinePoint", "Timing"]

_DIGITS = 6


def _round(value: float) -> float:
    return round(value, _DIGITS)


@dataclass(frozen=True, slots=True)
class NodeInfo:
    """A simulated node: its name, the ``--machine`` value it was built from, its size."""

    name: str
    machine: str
    numa: int
    cpus: int

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {"name": self.name, "machine": self.machine, "numa": self.numa, "cpus": self.cpus}


@dataclass(frozen=True, slots=True)
class TimelinePoint:
    """The cluster after every event at virtual time ``t`` (seconds)."""

    t: float
    admitted_pods: int
    exclusive_cpus: int
    memory_bytes: int

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {
            "t": _round(self.t),
            "admitted_pods": self.admitted_pods,
            "exclusive_cpus": self.exclusive_cpus,
            "memory_bytes": self.memory_bytes,
        }


@dataclass(frozen=True, slots=True)
class NumaUse:
    """Share (0..1) of a NUMA node's allocatable exclusive CPUs and Static-manager memory used."""

    cpu: float
    memory: float

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {"cpu": _round(self.cpu), "memory": _round(self.memory)}


@dataclass(frozen=True, slots=True)
class Timing:
    """Wall-clock time of the kubelet admission calls, per pod decision (milliseconds)."""

    admission_p50_ms: float
    admission_p99_ms: float

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {
            "admission_p50_ms": round(self.admission_p50_ms, 4),
            "admission_p99_ms": round(self.admission_p99_ms, 4),
        }


@dataclass(frozen=True)
class RunResult:
    """The measures of one configuration's replay (see ``docs/traces.md`` for definitions)."""

    config: str
    admitted: int
    rejected: int
    rejected_by_reason: Mapping[str, int]
    timeline: tuple[TimelinePoint, ...]
    numa_utilization: Mapping[str, NumaUse]
    stranded_cpus: int
    alignment: float
    optimum: int | None = None
    timing: Timing | None = None
    optimum_bound: int | None = None
    optimum_best: int | None = None
    optimum_note: str | None = None

    @property
    def optimum_ratio(self) -> float | None:
        """Admitted pods over the proven optimum; ``None`` without one (or when it is 0)."""
        if self.optimum is None or self.optimum <= 0:
            return None
        return self.admitted / self.optimum

    @property
    def optimum_ratio_at_least(self) -> float | None:
        """Admitted pods over the proven bound: a floor of the true ratio when unproven."""
        if self.optimum_bound is None or self.optimum_bound <= 0:
            return None
        return self.admitted / self.optimum_bound

    def with_optimum(
        self, *, proven: bool, best: int | None, bound: int, note: str = ""
    ) -> RunResult:
        """This result with the solver's answer: the optimum only when ``proven``.

        ``best`` is the most pods of a placement the solver found (``None``: none found),
        ``bound`` its proven upper bound.
        """
        return replace(
            self,
            optimum=best if proven else None,
            optimum_bound=bound,
            optimum_best=best,
            optimum_note=None if proven else note or "not proven optimal",
        )

    def to_json(self, *, deterministic: bool = False) -> dict[str, Any]:
        """JSON-ready dict; ``deterministic`` leaves out the wall-clock ``timing``."""
        ratio = self.optimum_ratio
        return {
            "config": self.config,
            "admitted": self.admitted,
            "rejected": self.rejected,
            "rejected_by_reason": dict(sorted(self.rejected_by_reason.items())),
            "timeline": [p.to_json() for p in self.timeline],
            "numa_utilization": {k: v.to_json() for k, v in self.numa_utilization.items()},
            "stranded_cpus": self.stranded_cpus,
            "alignment": _round(self.alignment),
            "optimum": self.optimum,
            "optimum_ratio": None if ratio is None else _round(ratio),
            "optimum_bound": self.optimum_bound,
            "optimum_best": self.optimum_best,
            "optimum_note": self.optimum_note,
            "timing": None if deterministic or self.timing is None else self.timing.to_json(),
        }


@dataclass(frozen=True)
class Results:
    """Every run of one trace."""

    trace: str
    seed: int | None
    nodes: tuple[NodeInfo, ...]
    runs: tuple[RunResult, ...]

    def to_json(self, *, deterministic: bool = False) -> dict[str, Any]:
        """The results document (see the module doc)."""
        return {
            "trace": self.trace,
            "seed": self.seed,
            "nodes": [n.to_json() for n in self.nodes],
            "runs": [r.to_json(deterministic=deterministic) for r in self.runs],
        }

    def dumps(self, *, deterministic: bool = False) -> str:
        """The results document as indented JSON text (stable key order)."""
        return json.dumps(self.to_json(deterministic=deterministic), indent=2)
