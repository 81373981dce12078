"""Driver for ``bitmask.json``: upstream ``bitmask_test.go`` cases, dispatched on ``input.op``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from numaplane.node.topologymanager.bitmask import (
    BitMask,
    BitMaskError,
    and_masks,
    bit_mask_subsets,
    or_masks,
)
from tests.conformance.drivers import VectorContext


def _mask(bits: Sequence[int]) -> BitMask:
    return BitMask.from_bits(bits)


def _result(op: str, inp: Mapping[str, Any]) -> dict[str, Any]:
    """What the operation yields, in the vector's ``expected`` vocabulary."""
    if op == "NewEmptyBitMask":
        return {"string": str(BitMask())}
    if op == "NewBitMask":
        try:
            return {"string": str(BitMask(*inp["bits"])), "error": None}
        except BitMaskError as err:
            return {"string": None, "error": str(err)}
    if op in ("Add", "Remove"):
        initial = _mask(inp.get("initial", []))
        try:
            mask = initial.add(*inp["bits"]) if op == "Add" else initial.remove(*inp["bits"])
            error = None
        except BitMaskError as err:
            # Upstream rejects the whole call and leaves the mask as it was.
            mask, error = initial, str(err)
        return {"string": str(mask), "error": error}
    if op in ("And", "Or"):
        masks = [_mask(m) for m in inp["masks"]] if "masks" in inp else None
        if masks is None:
            masks = [_mask(inp["first"]), _mask(inp["second"])]
        fold = and_masks if op == "And" else or_masks
        return {"string": str(fold(masks[0], *masks[1:]))}
    if op == "Clear":
        return {"string": str(BitMask())}
    if op == "Fill":
        return {"string": str(BitMask.fill())}
    if op == "IsEmpty":
        return {"result": _mask(inp["mask"]).is_empty()}
    if op == "IsSet":
        return {"result": _mask(inp["mask"]).is_set(inp["bit"])}
    if op == "AnySet":
        return {"result": _mask(inp["mask"]).any_set(inp["bits"])}
    if op == "Count":
        return {"result": _mask(inp["mask"]).count()}
    if op == "GetBits":
        return {"result": _mask(inp["mask"]).get_bits()}
    if op in ("IsEqual", "IsLessThan", "IsGreaterThan", "IsNarrowerThan"):
        first, second = _mask(inp["first"]), _mask(inp["second"])
        compare = {
            "IsEqual": first.is_equal,
            "IsLessThan": first.is_less_than,
            "IsGreaterThan": first.is_greater_than,
            "IsNarrowerThan": first.is_narrower_than,
        }[op]
        return {"result": compare(second)}
    if op == "String":
        return {"string": str(_mask(inp["mask"]))}
    if op == "IterateBitMasks":
        visited = [m.get_bits() for m in bit_mask_subsets(inp["bits"])]
        return {"count": len(visited), "masks": visited}
    raise AssertionError(f"unknown bitmask op {op!r}")


def run(vector: Mapping[str, Any], ctx: VectorContext) -> None:
    """Check one bitmask vector: every expected field except notes must match."""
    inp = vector["input"]
    got = _result(inp["op"], inp)
    for key, want in vector["expected"].items():
        if key == "note":
            continue
        if key == "error" and "error" not in got:
            assert want is None, f"{vector['name']}: expected error {want!r}, op cannot fail"
            continue
        assert key in got, f"{vector['name']}: driver does not produce {key!r}"
        assert got[key] == want, f"{vector['name']}: {key} = {got[key]!r}, want {want!r}"
