"""Utilization-aware tie-breaking for ``prefer-most-allocated-numa-node`` (seed KEP-6007).

With ``single-numa-node`` and this option on, when the merge ends with two or more *tied*
candidates -- distinct preferred merged hints that each name exactly one NUMA node -- the node
that is already most allocated wins, so that workloads pack onto fewer nodes and whole nodes
stay free for large pods. Without the option the merge picks the narrowest mask, which for
single nodes is the lowest-numbered one (the "default").

Signals. Two per-node scores, each a percentage of what the node can give:

- **CPU**: exclusive CPUs assigned on the node x 100 / the node's allocatable CPUs; reserved CPUs
  are left out of both. Unavailable (``None``) under the CPU manager's ``none`` policy.
- **memory**: regular memory (``memory``, not hugepages) reserved for containers on the node
  x 100 / the node's allocatable memory (system reservations of that node already left out).
  Unavailable (``None``) unless the memory manager runs the ``Static`` policy.

A node missing from a signal's map, or with nothing allocatable, scores 0.

Arithmetic is exact: scores are ``fractions.Fraction`` values compared as rationals, never
floats and never truncated to integers, so 1/3 of a node (``100/3``) and 33% (``33``) differ.

When a signal decides. Among the tied candidates a signal *decides* iff its scores have a
**unique maximum**; that node is the signal's winner. A signal that is unavailable, or whose
highest score is shared by two or more candidates, does not decide -- even when other scores
differ (``{0: 5, 1: 5, 2: 3}`` does not decide: it cannot say which of 0 and 1 to take). With
two candidates this is exactly "the two scores differ". Then:

========================  ======================================  =========================
CPU decides               memory decides                          result (``TieBreakOutcome``)
========================  ======================================  =========================
no                        no                                      default (``NEITHER``)
yes                       no                                      CPU's winner (``CPU``)
no                        yes                                     memory's winner (``MEMORY``)
yes                       yes, same winner                        that node (``AGREE``)
yes                       yes, another winner                     default (``DISAGREE``)
========================  ======================================  =========================

The rule is applied once to the whole tied set, not pairwise along the merge's fold: pairwise,
"disagree -> default" is not transitive and the result would depend on the walk order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from fractions import Fraction
from typing import Any, Protocol

Scores = Mapping[int, Fraction]
"""NUMA node id -> utilization in percent, exact."""


class NUMAUtilization(Protocol):
    """Per-NUMA-node utilization, read at merge time (before the pod being admitted allocates)."""

    def cpu_scores(self) -> Scores | None:
        """Exclusive-CPU utilization per node, or ``None`` when the CPU signal is unavailable."""
        ...

    def memory_scores(self) -> Scores | None:
        """Memory utilization per node, or ``None`` when the memory signal is unavailable."""
        ...


@dataclass(frozen=True, slots=True)
class FixedUtilization:
    """A ``NUMAUtilization`` holding fixed scores (simulations, tests, explanations)."""

    cpu: Scores | None = None
    memory: Scores | None = None

    def cpu_scores(self) -> Scores | None:
        """The fixed CPU scores."""
        return self.cpu

    def memory_scores(self) -> Scores | None:
        """The fixed memory scores."""
        return self.memory


class TieBreakOutcome(StrEnum):
    """Which signal settled a tie (see the module docstring's table)."""

    NEITHER = "neither"
    CPU = "cpu"
    MEMORY = "memory"
    AGREE = "agree"
    DISAGREE = "disagree"


@dataclass(frozen=True, slots=True)
class SignalVerdict:
    """One signal over the tied candidates.

    ``scores`` pairs each candidate (ascending) with its score, or is ``None`` when the signal
    is unavailable; ``winner`` is the unique-maximum node, ``None`` when the signal does not
    decide.
    """

    scores: tuple[tuple[int, Fraction], ...] | None
    winner: int | None

    @property
    def decides(self) -> bool:
        """Whether the signal has a unique maximum among the candidates."""
        return self.winner is not None

    def to_json(self) -> dict[str, Any]:
        """``{"scores": null | {node: "p/q"}, "winner": null | node}`` (exact fractions)."""
        scores = None if self.scores is None else {str(n): str(s) for n, s in self.scores}
        return {"scores": scores, "winner": self.winner}


def signal_verdict(scores: Scores | None, candidates: Iterable[int]) -> SignalVerdict:
    """The verdict of one signal over ``candidates`` (a node missing from ``scores`` is 0)."""
    if scores is None:
        return SignalVerdict(None, None)
    pairs = tuple((node, Fraction(scores.get(node, 0))) for node in sorted(set(candidates)))
    if not pairs:
        return SignalVerdict(pairs, None)
    top = max(score for _, score in pairs)
    leaders = [node for node, score in pairs if score == top]
    return SignalVerdict(pairs, leaders[0] if len(leaders) == 1 else None)


@dataclass(frozen=True, slots=True)
class TieBreak:
    """How a tie among preferred single-NUMA hints was settled.

    ``default`` is the node the merge picks without the option (the lowest candidate);
    ``chosen`` the node used.
    """

    candidates: tuple[int, ...]
    default: int
    chosen: int
    cpu: SignalVerdict
    memory: SignalVerdict
    outcome: TieBreakOutcome

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict; scores are exact fractions written as ``"p/q"`` or ``"p"``."""
        return {
            "candidates": list(self.candidates),
            "default": self.default,
            "chosen": self.chosen,
            "decided_by": str(self.outcome),
            "cpu": self.cpu.to_json(),
            "memory": self.memory.to_json(),
        }

    def render_text(self) -> str:
        """One line for people (percentages shown to two decimals; JSON keeps them exact)."""
        return (
            f"tie among NUMA nodes {list(self.candidates)} -> {self.chosen}: "
            f"{_OUTCOME_TEXT[self.outcome]} (default {self.default}; "
            f"cpu {_render_scores(self.cpu)}; memory {_render_scores(self.memory)})"
        )


_OUTCOME_TEXT = {
    TieBreakOutcome.NEITHER: "neither signal decides, default kept",
    TieBreakOutcome.CPU: "CPU utilization decides",
    TieBreakOutcome.MEMORY: "memory utilization decides",
    TieBreakOutcome.AGREE: "CPU and memory utilization agree",
    TieBreakOutcome.DISAGREE: "CPU and memory utilization disagree, default kept",
}


def _render_scores(verdict: SignalVerdict) -> str:
    if verdict.scores is None:
        return "unavailable"
    return ", ".join(f"{n}: {_render_percent(s)}" for n, s in verdict.scores)


def _render_percent(value: Fraction) -> str:
    # Integer arithmetic on hundredths (round half to even), for display only.
    if value.denominator == 1:
        return f"{value.numerator}%"
    hundredths = round(value * 100)
    sign = "-" if hundredths < 0 else ""
    whole, frac = divmod(abs(hundredths), 100)
    return f"~{sign}{whole}.{frac:02d}%"


def break_tie(
    candidates: Iterable[int], default: int, utilization: NUMAUtilization | None
) -> TieBreak:
    """Settle a tie among single-NUMA candidates by the rule of the module docstring.

    ``default`` must be one of ``candidates``; ``utilization`` ``None`` means no signal at all.
    """
    tied = tuple(sorted(set(candidates)))
    if default not in tied:
        raise ValueError(f"default node {default} is not among the candidates {list(tied)}")
    cpu = signal_verdict(None if utilization is None else utilization.cpu_scores(), tied)
    memory = signal_verdict(None if utilization is None else utilization.memory_scores(), tied)
    cpu_winner, memory_winner = cpu.winner, memory.winner
    if cpu_winner is not None and memory_winner is not None:
        if cpu_winner == memory_winner:
            outcome, chosen = TieBreakOutcome.AGREE, cpu_winner
        else:
            outcome, chosen = TieBreakOutcome.DISAGREE, default
    elif cpu_winner is not None:
        outcome, chosen = TieBreakOutcome.CPU, cpu_winner
    elif memory_winner is not None:
        outcome, chosen = TieBreakOutcome.MEMORY, memory_winner
    else:
        outcome, chosen = TieBreakOutcome.NEITHER, default
    return TieBreak(tied, default, chosen, cpu, memory, outcome)
