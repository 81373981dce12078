"""Topology Manager policy options (``topologyManagerPolicyOptions``) and their feature gates.

Each option has a maturity level. Alpha options need the ``TopologyManagerPolicyAlphaOptions``
gate (default off), beta options the ``TopologyManagerPolicyBetaOptions`` gate (default on), GA
options nothing. Error strings are upstream's (``policy_options.go``), in their newest spelling
(lower-case "topology manager policy ...-level options not enabled").

``prefer-most-allocated-numa-node`` is numaplane's (KEP-6007, not merged upstream): alpha, and
only valid with the ``single-numa-node`` policy. It is parsed and validated here; the
tie-break it enables lives in ``numa_utilization`` and ``policy_single_numa_node``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from numaplane.api.featuregates import FeatureGates
from numaplane.gofmt import go_atoi, go_parse_bool, go_quote
from numaplane.node.errors import ConfigurationError

PREFER_CLOSEST_NUMA_NODES: Final = "prefer-closest-numa-nodes"
MAX_ALLOWABLE_NUMA_NODES: Final = "max-allowable-numa-nodes"
PREFER_MOST_ALLOCATED_NUMA_NODE: Final = "prefer-most-allocated-numa-node"

DEFAULT_MAX_ALLOWABLE_NUMA_NODES: Final = 8

ALPHA_OPTIONS_GATE: Final = "TopologyManagerPolicyAlphaOptions"
BETA_OPTIONS_GATE: Final = "TopologyManagerPolicyBetaOptions"

#: Upstream defaults: alpha gates start off, beta gates start on.
FEATURE_GATE_DEFAULTS: Final[Mapping[str, bool]] = {
    ALPHA_OPTIONS_GATE: False,
    BETA_OPTIONS_GATE: True,
}

_SINGLE_NUMA_NODE: Final = "single-numa-node"


class Maturity(StrEnum):
    """How far an option has graduated upstream."""

    ALPHA = "alpha"
    BETA = "beta"
    GA = "ga"


#: prefer-closest-numa-nodes went GA in v1.32, max-allowable-numa-nodes in v1.35.
OPTION_MATURITY: Final[Mapping[str, Maturity]] = {
    PREFER_CLOSEST_NUMA_NODES: Maturity.GA,
    MAX_ALLOWABLE_NUMA_NODES: Maturity.GA,
    PREFER_MOST_ALLOCATED_NUMA_NODE: Maturity.ALPHA,
}


class PolicyOptionError(ConfigurationError):
    """A policy option is unknown, not enabled by its gate, or has a bad value."""


@dataclass(frozen=True, slots=True)
class PolicyOptions:
    """Parsed Topology Manager policy options (upstream ``PolicyOptions``)."""

    prefer_closest_numa: bool = False
    max_allowable_numa_nodes: int = DEFAULT_MAX_ALLOWABLE_NUMA_NODES
    prefer_most_allocated_numa_node: bool = False

    def validate_for_policy(self, policy_name: str) -> None:
        """Reject options that do not apply to ``policy_name``."""
        if self.prefer_most_allocated_numa_node and policy_name != _SINGLE_NUMA_NODE:
            raise PolicyOptionError(
                f"option {go_quote(PREFER_MOST_ALLOCATED_NUMA_NODE)} is only valid with the "
                f"{go_quote(_SINGLE_NUMA_NODE)} policy, not {go_quote(policy_name)}"
            )


Gates = FeatureGates | Mapping[str, bool] | None
"""Feature gates: a parsed ``FeatureGates``, a plain override map, or ``None`` (defaults)."""


def gate_enabled(feature_gates: Gates, gate: str) -> bool:
    """The gate's value, or its upstream default when not set."""
    if isinstance(feature_gates, FeatureGates):
        return feature_gates.enabled(gate)
    if feature_gates is not None and gate in feature_gates:
        return bool(feature_gates[gate])
    return FEATURE_GATE_DEFAULTS.get(gate, False)


def check_policy_option_available(
    option: str,
    feature_gates: Gates = None,
    maturity: Mapping[str, Maturity] = OPTION_MATURITY,
) -> None:
    """Upstream ``CheckPolicyOptionAvailable``: known, and allowed by the feature gates."""
    level = maturity.get(option)
    if level is None:
        raise PolicyOptionError(f"unknown Topology Manager Policy option: {go_quote(option)}")
    if level is Maturity.ALPHA and not gate_enabled(feature_gates, ALPHA_OPTIONS_GATE):
        raise PolicyOptionError(
            "topology manager policy alpha-level options not enabled, "
            f"but option {go_quote(option)} provided"
        )
    if level is Maturity.BETA and not gate_enabled(feature_gates, BETA_OPTIONS_GATE):
        raise PolicyOptionError(
            "topology manager policy beta-level options not enabled, "
            f"but option {go_quote(option)} provided"
        )


def parse_policy_options(
    options: Mapping[str, str] | None,
    feature_gates: Gates = None,
) -> PolicyOptions:
    """Upstream ``NewPolicyOptions``: validate each option, then parse its value."""
    prefer_closest = False
    max_nodes = DEFAULT_MAX_ALLOWABLE_NUMA_NODES
    most_allocated = False
    for name, value in (options or {}).items():
        check_policy_option_available(name, feature_gates)
        if name == PREFER_CLOSEST_NUMA_NODES:
            prefer_closest = _bool_option(name, value)
        elif name == MAX_ALLOWABLE_NUMA_NODES:
            try:
                parsed = go_atoi(value)
            except ValueError as exc:
                raise PolicyOptionError(
                    f"unable to convert policy option to integer {go_quote(name)}: {exc}"
                ) from exc
            if parsed < DEFAULT_MAX_ALLOWABLE_NUMA_NODES:
                raise PolicyOptionError(
                    f"the minimum value of {go_quote(name)} should not be less than "
                    f"{DEFAULT_MAX_ALLOWABLE_NUMA_NODES}"
                )
            # Upstream only logs a warning above the default: merges grow exponentially.
            max_nodes = parsed
        elif name == PREFER_MOST_ALLOCATED_NUMA_NODE:
            most_allocated = _bool_option(name, value)
        else:  # pragma: no cover - every known option is handled above
            raise PolicyOptionError(
                f"unsupported topologymanager option: {go_quote(name)} ({value})"
            )
    return PolicyOptions(prefer_closest, max_nodes, most_allocated)


def _bool_option(name: str, value: str) -> bool:
    try:
        return go_parse_bool(value)
    except ValueError as exc:
        raise PolicyOptionError(f"bad value for option {go_quote(name)}: {exc}") from exc
