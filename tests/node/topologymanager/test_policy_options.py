"""Policy option parsing, feature gates and upstream error strings."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pytest

from numaplane.api.featuregates import FeatureGates
from numaplane.gofmt import go_atoi, go_parse_bool
from numaplane.node.topologymanager.policy_options import (
    PolicyOptionError,
    PolicyOptions,
    parse_policy_options,
)


@dataclass(frozen=True)
class OptionCase:
    """Options and gates in, parsed options or an error substring out."""

    name: str
    options: Mapping[str, str]
    gates: Mapping[str, bool] = field(default_factory=dict)
    want: PolicyOptions | None = None
    error: str | None = None


CASES = (
    OptionCase("defaults", {}, want=PolicyOptions()),
    OptionCase(
        "prefer closest and max 8",
        {"prefer-closest-numa-nodes": "true", "max-allowable-numa-nodes": "8"},
        want=PolicyOptions(prefer_closest_numa=True),
    ),
    OptionCase(
        "GA options need no gate",
        {"prefer-closest-numa-nodes": "1"},
        gates={"TopologyManagerPolicyBetaOptions": False},
        want=PolicyOptions(prefer_closest_numa=True),
    ),
    OptionCase(
        "max 12 accepted", {"max-allowable-numa-nodes": "12"}, want=PolicyOptions(False, 12)
    ),
    OptionCase(
        "max below 8",
        {"max-allowable-numa-nodes": "7"},
        error='the minimum value of "max-allowable-numa-nodes" should not be less than 8',
    ),
    OptionCase(
        "max not an int",
        {"max-allowable-numa-nodes": "can't parse to int"},
        error='unable to convert policy option to integer "max-allowable-numa-nodes": '
        'strconv.Atoi: parsing "can\'t parse to int": invalid syntax',
    ),
    OptionCase(
        "bad bool",
        {"prefer-closest-numa-nodes": "not a boolean"},
        error='bad value for option "prefer-closest-numa-nodes": '
        'strconv.ParseBool: parsing "not a boolean": invalid syntax',
    ),
    OptionCase(
        "unknown option",
        {"unknown-option": "true"},
        error='unknown Topology Manager Policy option: "unknown-option"',
    ),
    OptionCase(
        "alpha option needs its gate",
        {"prefer-most-allocated-numa-node": "true"},
        error="topology manager policy alpha-level options not enabled, "
        'but option "prefer-most-allocated-numa-node" provided',
    ),
    OptionCase(
        "alpha option with its gate",
        {"prefer-most-allocated-numa-node": "true"},
        gates={"TopologyManagerPolicyAlphaOptions": True},
        want=PolicyOptions(prefer_most_allocated_numa_node=True),
    ),
)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_parse_policy_options(case: OptionCase) -> None:
    """Parsed values, or upstream's error text."""
    if case.error is not None:
        with pytest.raises(PolicyOptionError) as info:
            parse_policy_options(case.options, case.gates)
        assert case.error in str(info.value)
    else:
        assert parse_policy_options(case.options, case.gates) == case.want


def test_feature_gates_object_is_honoured() -> None:
    """A parsed ``FeatureGates`` works like a plain map."""
    gates = FeatureGates.from_map({"TopologyManagerPolicyAlphaOptions": True})
    opts = parse_policy_options({"prefer-most-allocated-numa-node": "t"}, gates)
    assert opts.prefer_most_allocated_numa_node


def test_prefer_most_allocated_only_with_single_numa_node() -> None:
    """The alpha option is refused for any other policy."""
    opts = PolicyOptions(prefer_most_allocated_numa_node=True)
    opts.validate_for_policy("single-numa-node")
    with pytest.raises(PolicyOptionError, match="single-numa-node"):
        opts.validate_for_policy("best-effort")


@pytest.mark.parametrize(
    ("text", "value"),
    [("1", True), ("t", True), ("TRUE", True), ("True", True), ("0", False), ("F", False)],
)
def test_go_bool_accepts_what_go_accepts(text: str, value: bool) -> None:
    """``strconv.ParseBool``'s spellings."""
    assert go_parse_bool(text) is value


@pytest.mark.parametrize("text", ["yes", "tRUE", "", " true"])
def test_go_bool_rejects_others(text: str) -> None:
    """Anything else is invalid syntax."""
    with pytest.raises(ValueError, match="invalid syntax"):
        go_parse_bool(text)


def test_go_int_sign_and_range() -> None:
    """``strconv.Atoi``: optional sign, decimal digits, 64-bit range."""
    assert go_atoi("+12") == 12
    assert go_atoi("-3") == -3
    with pytest.raises(ValueError, match="invalid syntax"):
        go_atoi("1_000")
    with pytest.raises(ValueError, match="value out of range"):
        go_atoi("9223372036854775808")
