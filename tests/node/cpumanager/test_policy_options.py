"""Static policy options: maturity gates, parsing, incompatible pairs, machine checks."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from numaplane.node.cpumanager.policy_options import (
    OPTION_MATURITY,
    FeatureGates,
    Maturity,
    StaticPolicyOptions,
)
from numaplane.node.errors import ConfigurationError
from tests.node.cpumanager.topos import DUAL_SOCKET_HT, grid


def test_maturities_match_upstream() -> None:
    assert OPTION_MATURITY == {
        "full-pcpus-only": Maturity.STABLE,
        "distribute-cpus-across-numa": Maturity.BETA,
        "align-by-socket": Maturity.ALPHA,
        "distribute-cpus-across-cores": Maturity.ALPHA,
        "strict-cpu-reservation": Maturity.BETA,
        "prefer-align-cpus-by-uncorecache": Maturity.BETA,
    }


@dataclass(frozen=True)
class ParseCase:
    name: str
    options: dict[str, str]
    gates: FeatureGates
    error: str | None
    enabled: tuple[str, ...] = ()


DEFAULT = FeatureGates()
ALL = FeatureGates.all_enabled()

PARSE_CASES = [
    ParseCase(
        "stable needs no gate",
        {"full-pcpus-only": "true"},
        FeatureGates(False, False),
        None,
        ("full-pcpus-only",),
    ),
    ParseCase(
        "beta on by default",
        {"strict-cpu-reservation": "1"},
        DEFAULT,
        None,
        ("strict-cpu-reservation",),
    ),
    ParseCase(
        "beta gate off",
        {"distribute-cpus-across-numa": "true"},
        FeatureGates(True, False),
        "CPU Manager Policy Beta-level Options not enabled, "
        'but option "distribute-cpus-across-numa" provided',
    ),
    ParseCase(
        "alpha off by default",
        {"align-by-socket": "true"},
        DEFAULT,
        'CPU Manager Policy Alpha-level Options not enabled, but option "align-by-socket" provided',
    ),
    ParseCase("alpha gate on", {"align-by-socket": "True"}, ALL, None, ("align-by-socket",)),
    ParseCase("false value leaves option off", {"full-pcpus-only": "false"}, DEFAULT, None),
    ParseCase(
        "unknown option", {"bogus": "true"}, ALL, 'unknown CPU Manager Policy option: "bogus"'
    ),
    ParseCase(
        "bad boolean",
        {"full-pcpus-only": "enabled!"},
        ALL,
        'bad value for option "full-pcpus-only": '
        'strconv.ParseBool: parsing "enabled!": invalid syntax',
    ),
    ParseCase(
        "full-pcpus-only with spread",
        {"full-pcpus-only": "true", "distribute-cpus-across-cores": "true"},
        ALL,
        "static policy options full-pcpus-only and distribute-cpus-across-cores "
        "can not be used at the same time",
    ),
    ParseCase(
        "numa distribution with spread",
        {"distribute-cpus-across-numa": "true", "distribute-cpus-across-cores": "true"},
        ALL,
        "static policy options distribute-cpus-across-numa and distribute-cpus-across-cores "
        "can not be used at the same time",
    ),
    ParseCase(
        "uncore with spread",
        {"prefer-align-cpus-by-uncorecache": "true", "distribute-cpus-across-cores": "true"},
        ALL,
        "static policy options prefer-align-cpus-by-uncorecache and distribute-cpus-across-cores "
        "can not be used at the same time",
    ),
    ParseCase(
        "uncore with numa distribution",
        {"prefer-align-cpus-by-uncorecache": "true", "distribute-cpus-across-numa": "true"},
        ALL,
        "static policy options prefer-align-cpus-by-uncorecache and distribute-cpus-across-numa "
        "can not be used at the same time",
    ),
    ParseCase(
        "incompatible pair with one side false is fine",
        {"full-pcpus-only": "true", "distribute-cpus-across-cores": "false"},
        ALL,
        None,
        ("full-pcpus-only",),
    ),
]


@pytest.mark.parametrize("case", PARSE_CASES, ids=lambda c: c.name)
def test_parse(case: ParseCase) -> None:
    if case.error is not None:
        with pytest.raises(ConfigurationError) as info:
            StaticPolicyOptions.parse(case.options, case.gates)
        assert str(info.value) == case.error
        return
    assert StaticPolicyOptions.parse(case.options, case.gates).enabled() == case.enabled


def test_align_by_socket_rejected_with_single_numa_node() -> None:
    opts = StaticPolicyOptions(align_by_socket=True)
    with pytest.raises(ConfigurationError, match="single-numa-node policy is incompatible"):
        opts.validate(DUAL_SOCKET_HT, "single-numa-node")
    opts.validate(DUAL_SOCKET_HT, "restricted")


def test_align_by_socket_rejected_with_more_sockets_than_numa_nodes() -> None:
    topo = grid(2, 1, 2, 1)
    topo = type(topo)(topo.num_cpus, 2, topo.num_cores, topo.details, num_numa_nodes=1)
    with pytest.raises(ConfigurationError, match="number of sockets are more than number of NUMA"):
        StaticPolicyOptions(align_by_socket=True).validate(topo, "none")
    StaticPolicyOptions().validate(topo, "single-numa-node")
