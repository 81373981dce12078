"""Driver for ``hint_merger.json``: ``maxOfMinAffinityCounts``, ``compare``, single-NUMA filter."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from numaplane.node.topologymanager.policy import max_of_min_affinity_counts
from numaplane.node.topologymanager.policy_options import parse_policy_options
from numaplane.node.topologymanager.policy_single_numa_node import filter_single_numa_hints
from numaplane.testing.exhaustive import HintMerger
from tests.conformance.drivers import VectorContext
from tests.conformance.drivers.merge_policies import (
    hint_json,
    hint_lists_of,
    hint_of,
    numa_info_of,
)


def run(vector: Mapping[str, Any], ctx: VectorContext) -> None:
    """Check one merge-internals vector."""
    inp, expected, name = vector["input"], vector["expected"], vector["name"]
    op = inp["op"]
    if op == "maxOfMinAffinityCounts":
        got: Any = max_of_min_affinity_counts(hint_lists_of(inp["filtered_hints"]))
    elif op == "filterSingleNumaHints":
        filtered = filter_single_numa_hints(hint_lists_of(inp["filtered_hints"]))
        got = [[hint_json(h) for h in hs] for hs in filtered]
    elif op == "HintMerger.compare":
        merger = HintMerger(
            numa_info_of(inp.get("numa_info")),
            [],
            inp["policy"],
            parse_policy_options(inp.get("policy_options")),
            best_non_preferred_affinity_count=inp["best_non_preferred_affinity_count"],
        )
        current = None if inp["current"] is None else hint_of(inp["current"])
        candidate = hint_of(inp["candidate"])
        best = merger.compare(current, candidate)
        if best is candidate:
            got = "candidate"
        elif best is current:
            got = "current"
        else:  # pragma: no cover - compare returns one of its arguments
            raise AssertionError(f"{name}: compare returned a third hint {best}")
    else:
        raise AssertionError(f"unknown hint merger op {op!r}")
    assert got == expected["result"], f"{name}: {got!r}, want {expected['result']!r}"
