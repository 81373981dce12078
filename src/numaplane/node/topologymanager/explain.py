"""Why the Topology Manager decided what it did: a record per merge, for people and tools.

Each ``Decision`` covers one merge: one container (container scope), the whole pod (pod scope)
or one container's plain allocation (``none`` policy, no merge). It keeps every provider's hints
per resource exactly as given (``None`` map, ``None`` list and ``[]`` stay apart), the merged
hint, the admit verdict and, when allocation failed, which provider failed and how. With
``prefer-most-allocated-numa-node``, a merge that broke a tie among single-NUMA candidates also
carries the ``TieBreak`` (scores and deciding signal); its JSON key ``tie_break`` appears only
then, so explanations without a tie-break are unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from numaplane.node.topologymanager.hint import ProviderHints, TopologyHint
from numaplane.node.topologymanager.hint_sets import StructuredHints, hint_set_of
from numaplane.node.topologymanager.numa_utilization import TieBreak

ResourceHints = tuple[tuple[str, StructuredHints | None], ...]
"""A provider's answer, frozen: ``(resource, hints | None)`` pairs in the provider's order.

On machines with more than ``hint_sets.SUMMARY_NODE_LIMIT`` NUMA nodes a rule-based hint list
is kept as its rule and summarised (narrowest hints) instead of listed; a listed answer is
always listed as given.
"""


def freeze_provider_hints(hints: ProviderHints) -> ResourceHints | None:
    """A provider's answer as an immutable value (``None`` stays ``None``)."""
    if hints is None:
        return None
    # A rule stays a rule (it is immutable): it is listed, or summarised on large machines,
    # only when the explanation is rendered, so admissions nobody reads stay cheap.
    return tuple(
        [(resource, None if hs is None else hint_set_of(hs)) for resource, hs in hints.items()]
    )


def _hints_json(hints: StructuredHints | None) -> Any:
    if hints is None:
        return None
    if hints.is_large():
        return hints.summary_json()
    return [h.to_json() for h in hints]


@dataclass(frozen=True, slots=True)
class ProviderRecord:
    """What one hint provider answered."""

    provider: str
    hints: ResourceHints | None

    def to_json(self) -> dict[str, Any]:
        """``{"provider", "hints": null | {resource: null | [hint, ...]}}``."""
        hints: dict[str, Any] | None = None
        if self.hints is not None:
            hints = {resource: _hints_json(hs) for resource, hs in self.hints}
        return {"provider": self.provider, "hints": hints}


@dataclass(frozen=True, slots=True)
class Decision:
    """One merge (or, under the ``none`` policy, one plain allocation) and its outcome.

    ``target`` is the container name, or ``"pod"`` for a pod-scope merge; ``containers`` lists
    the containers whose hint was stored from it. ``merged`` is ``None`` when nothing was merged.
    ``tie_break`` is set when prefer-most-allocated-numa-node settled a tie in this merge.
    """

    target: str
    containers: tuple[str, ...]
    providers: tuple[ProviderRecord, ...]
    merged: TopologyHint | None
    admit: bool
    why: str
    failed_provider: str | None = None
    error: str | None = None
    tie_break: TieBreak | None = None

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (``tie_break`` only when a tie was broken)."""
        doc: dict[str, Any] = {
            "target": self.target,
            "containers": list(self.containers),
            "providers": [p.to_json() for p in self.providers],
            "merged": None if self.merged is None else self.merged.to_json(),
            "admit": self.admit,
            "why": self.why,
            "failed_provider": self.failed_provider,
            "error": self.error,
        }
        if self.tie_break is not None:
            doc["tie_break"] = self.tie_break.to_json()
        return doc


@dataclass(frozen=True, slots=True)
class Explanation:
    """Every decision of one admission, in the order they were taken."""

    policy: str
    scope: str
    decisions: tuple[Decision, ...]

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "policy": self.policy,
            "scope": self.scope,
            "decisions": [d.to_json() for d in self.decisions],
        }

    def render_text(self) -> str:
        """A short report for people, one block per decision."""
        lines = [f"topology manager: policy {self.policy}, scope {self.scope}"]
        for d in self.decisions:
            verdict = "admit" if d.admit else "reject"
            merged = "no merge" if d.merged is None else f"merged {d.merged}"
            lines.append(f"  {d.target}: {merged} -> {verdict} ({d.why})")
            for record in d.providers:
                lines.append(f"    {record.provider} manager: {_render_hints(record.hints)}")
            if d.tie_break is not None:
                lines.append(f"    {d.tie_break.render_text()}")
            if d.error is not None:
                lines.append(f"    allocate failed in {d.failed_provider}: {d.error}")
        return "\n".join(lines)


def _render_hints(hints: ResourceHints | None) -> str:
    if not hints:
        return "no preference (no hints)"
    parts = []
    for resource, hs in hints:
        if hs is None:
            parts.append(f"{resource}: no preference")
        elif not hs:
            parts.append(f"{resource}: no possible placement")
        elif hs.is_large():
            parts.append(f"{resource}: {hs.summary()}")
        else:
            parts.append(f"{resource}: " + " ".join(str(h) for h in hs))
    return "; ".join(parts)


def provider_records(
    names: Sequence[str], answers: Sequence[ProviderHints]
) -> tuple[ProviderRecord, ...]:
    """Pair provider names with their answers."""
    return tuple(
        [ProviderRecord(n, freeze_provider_hints(a)) for n, a in zip(names, answers, strict=True)]
    )


def merge_reason(policy: str, hint: TopologyHint, admit: bool) -> str:
    """Why a merged hint was admitted or rejected, in a sentence."""
    if policy == "none":
        return "policy none admits without aligning"
    if policy == "best-effort":
        return "best-effort admits any merged hint"
    if admit:
        return f"merged hint is preferred, as {policy} requires"
    if policy == "single-numa-node":
        return "no preferred placement on a single NUMA node satisfies every resource"
    return f"merged hint is not preferred; {policy} requires a preferred hint"
