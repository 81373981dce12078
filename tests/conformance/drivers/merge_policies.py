"""Driver for ``merge_policies.json``: ``Merge``, ``canAdmitPodResult`` and ``Name`` of each policy.

Also the shared decoders other Topology Manager drivers use (hints, provider answers, NUMA info,
policies), so every driver reads the vectors' conventions the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from numaplane.node.topologymanager.bitmask import BitMask
from numaplane.node.topologymanager.hint import ProviderHints, TopologyHint
from numaplane.node.topologymanager.manager import build_policy
from numaplane.node.topologymanager.numa_info import NUMAInfo
from numaplane.node.topologymanager.policy import Policy
from numaplane.node.topologymanager.policy_options import parse_policy_options
from tests.conformance.drivers import VectorContext


def hint_of(data: Mapping[str, Any]) -> TopologyHint:
    """``{"numa": [...] | null, "preferred": b}``; ``[]`` is an empty mask, ``null`` is nil."""
    numa = data["numa"]
    return TopologyHint(None if numa is None else BitMask.from_bits(numa), bool(data["preferred"]))


def hint_json(hint: TopologyHint | None) -> dict[str, Any] | None:
    """A hint in the vectors' shape."""
    return None if hint is None else hint.to_json()


def hint_lists_of(data: Any) -> list[list[TopologyHint]]:
    """A list of hint lists (filtered hints)."""
    return [[hint_of(h) for h in hs] for hs in data]


def provider_hints_of(data: Mapping[str, Any] | None) -> ProviderHints:
    """One provider's answer, keeping ``None`` map / ``None`` list / ``[]`` apart."""
    if data is None:
        return None
    return {
        resource: None if hs is None else [hint_of(h) for h in hs] for resource, hs in data.items()
    }


def numa_info_of(data: Mapping[str, Any] | None) -> NUMAInfo:
    """``{"nodes": [...], "distances": {id: row | null}}`` as given (no option filtering)."""
    if data is None:
        return NUMAInfo(())
    distances = {int(k): None if v is None else tuple(v) for k, v in data["distances"].items()}
    return NUMAInfo(tuple(data["nodes"]), distances)


def policy_of(inp: Mapping[str, Any]) -> Policy:
    """The vector's policy over its NUMA info and options."""
    options = parse_policy_options(inp.get("policy_options"))
    return build_policy(inp["policy"], numa_info_of(inp.get("numa_info")), options)


def run(vector: Mapping[str, Any], ctx: VectorContext) -> None:
    """Check one vector; ``input.op`` absent means ``Merge`` (the file's main table)."""
    inp, expected, name = vector["input"], vector["expected"], vector["name"]
    policy = policy_of(inp)
    op = inp.get("op", "Merge")
    if op == "canAdmitPodResult":
        got = policy.can_admit(hint_of(inp["hint"]))
        assert got == expected["admit"], f"{name}: admit {got}, want {expected['admit']}"
        return
    if op == "Name":
        assert policy.name == expected["name"], f"{name}: name {policy.name!r}"
        return
    assert op == "Merge", f"unknown Topology Manager policy op {op!r}"
    providers = [provider_hints_of(p) for p in inp["providers_hints"]]
    merged = policy.merge(providers)
    hint, admit = merged.hint, merged.admit
    assert hint_json(hint) == expected["hint"], f"{name}: hint {hint}, want {expected['hint']}"
    want_admit = expected.get("admit", vector.get("derived", {}).get("admit"))
    if want_admit is not None:
        assert admit == want_admit, f"{name}: admit {admit}, want {want_admit}"
