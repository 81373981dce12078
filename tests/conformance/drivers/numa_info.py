"""Driver for ``numa_info.json``: ``NewNUMAInfo``, ``CalculateAverageFor``, ``Closest``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from numaplane.node.errors import ConfigurationError
from numaplane.node.topologymanager.bitmask import BitMask
from numaplane.node.topologymanager.numa_info import NUMAInfo, calculate_average_for
from numaplane.node.topologymanager.policy_options import parse_policy_options
from tests.conformance.drivers import VectorContext


def _distances(data: Mapping[str, Any]) -> dict[int, tuple[int, ...] | None]:
    return {int(k): None if v is None else tuple(v) for k, v in data.items()}


def run(vector: Mapping[str, Any], ctx: VectorContext) -> None:
    """Check one NUMA-info vector."""
    inp, expected, name = vector["input"], vector["expected"], vector["name"]
    op = inp["op"]
    if op == "NewNUMAInfo":
        options = parse_policy_options(inp.get("policy_options"))
        nodes = [(n["id"], n["distances"]) for n in inp["cadvisor_nodes"]]
        want_error = expected.get("error_contains")
        built: NUMAInfo | None = None
        error: str | None = None
        try:
            built = NUMAInfo.new(nodes, prefer_closest=options.prefer_closest_numa)
        except ConfigurationError as err:
            error = str(err)
        if want_error is not None:
            assert error is not None, f"{name}: no error, want {want_error!r}"
            assert want_error in error, f"{name}: error {error!r}, want {want_error!r}"
            return
        assert built is not None, f"{name}: unexpected error {error}"
        info = built
        assert list(info.nodes) == expected["nodes"], f"{name}: nodes {info.nodes}"
        got = {str(k): None if v is None else list(v) for k, v in info.distances.items()}
        assert got == expected["distances"], f"{name}: distances {got}"
    elif op == "CalculateAverageFor":
        avg = calculate_average_for(_distances(inp["distances"]), BitMask.from_bits(inp["mask"]))
        assert avg == expected["result"], f"{name}: average {avg!r}, want {expected['result']!r}"
    elif op == "Closest":
        info = NUMAInfo(tuple(int(k) for k in inp["distances"]), _distances(inp["distances"]))
        current, candidate = BitMask.from_bits(inp["current"]), BitMask.from_bits(inp["candidate"])
        # Upstream's argument order is recorded in ``call`` (normally m1=candidate, m2=current).
        if str(inp.get("call", "")).startswith("Closest(m1=current"):
            best = info.closest(current, candidate)
        else:
            best = info.closest(candidate, current)
        which = "current" if best == current else "candidate"
        assert which == expected["result"], f"{name}: {which}, want {expected['result']}"
    else:
        raise AssertionError(f"unknown NUMA info op {op!r}")
