"""Feature gates: upstream defaults, unknown and locked gates, AllAlpha/AllBeta."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pytest

from numaplane.api.featuregates import KNOWN_FEATURE_GATES, FeatureGateError, FeatureGates, Stage


@dataclass(frozen=True)
class DefaultCase:
    name: str
    gate: str
    enabled: bool


DEFAULT_CASES = [
    DefaultCase("cpu alpha options", "CPUManagerPolicyAlphaOptions", False),
    DefaultCase("cpu beta options", "CPUManagerPolicyBetaOptions", True),
    DefaultCase("cpu options", "CPUManagerPolicyOptions", True),
    DefaultCase("topology alpha options", "TopologyManagerPolicyAlphaOptions", False),
    DefaultCase("topology beta options", "TopologyManagerPolicyBetaOptions", True),
    DefaultCase("topology options", "TopologyManagerPolicyOptions", True),
    DefaultCase("memory manager", "MemoryManager", True),
]


@pytest.mark.parametrize("case", DEFAULT_CASES, ids=lambda c: c.name)
def test_defaults_are_upstreams(case: DefaultCase) -> None:
    assert FeatureGates().enabled(case.gate) is case.enabled


@dataclass(frozen=True)
class SetCase:
    name: str
    gates: Mapping[str, bool]
    gate: str
    enabled: bool


SET_CASES = [
    SetCase(
        "alpha on",
        {"TopologyManagerPolicyAlphaOptions": True},
        "TopologyManagerPolicyAlphaOptions",
        True,
    ),
    SetCase(
        "beta off", {"CPUManagerPolicyBetaOptions": False}, "CPUManagerPolicyBetaOptions", False
    ),
    SetCase("locked to its default", {"MemoryManager": True}, "MemoryManager", True),
    SetCase("all alpha", {"AllAlpha": True}, "CPUManagerPolicyAlphaOptions", True),
    SetCase("all alpha leaves beta", {"AllAlpha": True}, "CPUManagerPolicyBetaOptions", True),
    SetCase(
        "explicit beats all alpha",
        {"AllAlpha": True, "CPUManagerPolicyAlphaOptions": False},
        "CPUManagerPolicyAlphaOptions",
        False,
    ),
    SetCase("all beta off", {"AllBeta": False}, "TopologyManagerPolicyBetaOptions", False),
    SetCase("all beta leaves ga", {"AllBeta": False}, "TopologyManagerPolicyOptions", True),
]


@pytest.mark.parametrize("case", SET_CASES, ids=lambda c: c.name)
def test_setting_gates(case: SetCase) -> None:
    assert FeatureGates.from_map(case.gates).enabled(case.gate) is case.enabled


@dataclass(frozen=True)
class ErrorCase:
    name: str
    gates: Mapping[str, bool]
    message: str


ERROR_CASES = [
    ErrorCase("unknown", {"Foo": True}, "unrecognized feature gate: Foo"),
    ErrorCase("removed", {"TopologyManager": True}, "unrecognized feature gate: TopologyManager"),
    ErrorCase(
        "locked",
        {"CPUManagerPolicyOptions": False},
        "cannot set feature gate CPUManagerPolicyOptions to false, feature is locked to true",
    ),
]


@pytest.mark.parametrize("case", ERROR_CASES, ids=lambda c: c.name)
def test_bad_gates_fail_with_upstreams_words(case: ErrorCase) -> None:
    with pytest.raises(FeatureGateError) as caught:
        FeatureGates.from_map(case.gates)
    assert str(caught.value) == case.message


def test_unknown_gates_have_no_answer() -> None:
    with pytest.raises(KeyError):
        FeatureGates().enabled("Foo")


def test_locked_gates_are_on_and_not_pre_release() -> None:
    for name, spec in KNOWN_FEATURE_GATES.items():
        if spec.locked:
            assert spec.stage is Stage.GA, name


def test_gates_compare_by_their_settings() -> None:
    assert FeatureGates.from_map({"MemoryQoS": True}) == FeatureGates.from_map({"MemoryQoS": True})
    assert FeatureGates.from_map({"MemoryQoS": True}) != FeatureGates()
    assert len({FeatureGates(), FeatureGates.from_map({})}) == 1
