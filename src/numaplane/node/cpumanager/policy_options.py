"""Options of the static CPU policy (``cpuManagerPolicyOptions``): upstream ``policy_options.go``.

Each option has a maturity; alpha and beta options are only accepted when their feature gate
(``CPUManagerPolicyAlphaOptions``, off by default; ``CPUManagerPolicyBetaOptions``, on by
default) is enabled, stable ones always. Maturities follow upstream v1.34/v1.35.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from enum import StrEnum
from typing import Final, Protocol

from numaplane.gofmt import go_parse_bool
from numaplane.node.cpumanager.topology import CPUTopology
from numaplane.node.errors import ConfigurationError

FULL_PCPUS_ONLY: Final = "full-pcpus-only"
DISTRIBUTE_CPUS_ACROSS_NUMA: Final = "distribute-cpus-across-numa"
ALIGN_BY_SOCKET: Final = "align-by-socket"
DISTRIBUTE_CPUS_ACROSS_CORES: Final = "distribute-cpus-across-cores"
STRICT_CPU_RESERVATION: Final = "strict-cpu-reservation"
PREFER_ALIGN_CPUS_BY_UNCORECACHE: Final = "prefer-align-cpus-by-uncorecache"

SINGLE_NUMA_NODE_POLICY: Final = "single-numa-node"


class Maturity(StrEnum):
    """How far an option has graduated upstream."""

    ALPHA = "alpha"
    BETA = "beta"
    STABLE = "stable"


OPTION_MATURITY: Final[Mapping[str, Maturity]] = {
    FULL_PCPUS_ONLY: Maturity.STABLE,
    DISTRIBUTE_CPUS_ACROSS_NUMA: Maturity.BETA,
    ALIGN_BY_SOCKET: Maturity.ALPHA,
    DISTRIBUTE_CPUS_ACROSS_CORES: Maturity.ALPHA,
    STRICT_CPU_RESERVATION: Maturity.BETA,
    PREFER_ALIGN_CPUS_BY_UNCORECACHE: Maturity.BETA,
}

# Pairs rejected together, in the order upstream checks them.
INCOMPATIBLE_PAIRS: Final[tuple[tuple[str, str], ...]] = (
    (FULL_PCPUS_ONLY, DISTRIBUTE_CPUS_ACROSS_CORES),
    (DISTRIBUTE_CPUS_ACROSS_NUMA, DISTRIBUTE_CPUS_ACROSS_CORES),
    (PREFER_ALIGN_CPUS_BY_UNCORECACHE, DISTRIBUTE_CPUS_ACROSS_CORES),
    (PREFER_ALIGN_CPUS_BY_UNCORECACHE, DISTRIBUTE_CPUS_ACROSS_NUMA),
)


ALPHA_GATE: Final = "CPUManagerPolicyAlphaOptions"
BETA_GATE: Final = "CPUManagerPolicyBetaOptions"


class GateReader(Protocol):
    """Reads feature gates by name; ``numaplane.api.featuregates.FeatureGates`` is one."""

    def enabled(self, name: str) -> bool:
        """Whether gate ``name`` is on."""
        ...


@dataclass(frozen=True, slots=True)
class FeatureGates:
    """Just the two kubelet feature gates that unlock non-stable CPU policy options (for tests
    and callers without a kubelet configuration; any ``GateReader`` will do)."""

    cpu_manager_policy_alpha_options: bool = False
    cpu_manager_policy_beta_options: bool = True

    @classmethod
    def all_enabled(cls) -> FeatureGates:
        """Both gates on (what upstream unit tests run with)."""
        return cls(True, True)

    def enabled(self, name: str) -> bool:
        """``GateReader``: the two gates by their kubelet names (others are off)."""
        if name == ALPHA_GATE:
            return self.cpu_manager_policy_alpha_options
        if name == BETA_GATE:
            return self.cpu_manager_policy_beta_options
        return False


def check_policy_option_available(option: str, gates: GateReader) -> None:
    """Raise ``ConfigurationError`` unless ``option`` is known and its gate is on."""
    maturity = OPTION_MATURITY.get(option)
    if maturity is None:
        raise ConfigurationError(f'unknown CPU Manager Policy option: "{option}"')
    if maturity is Maturity.ALPHA and not gates.enabled(ALPHA_GATE):
        raise ConfigurationError(
            f'CPU Manager Policy Alpha-level Options not enabled, but option "{option}" provided'
        )
    if maturity is Maturity.BETA and not gates.enabled(BETA_GATE):
        raise ConfigurationError(
            f'CPU Manager Policy Beta-level Options not enabled, but option "{option}" provided'
        )


# Option name -> field of StaticPolicyOptions.
_FIELD_OF: Final[Mapping[str, str]] = {
    FULL_PCPUS_ONLY: "full_physical_cpus_only",
    DISTRIBUTE_CPUS_ACROSS_NUMA: "distribute_cpus_across_numa",
    ALIGN_BY_SOCKET: "align_by_socket",
    DISTRIBUTE_CPUS_ACROSS_CORES: "distribute_cpus_across_cores",
    STRICT_CPU_RESERVATION: "strict_cpu_reservation",
    PREFER_ALIGN_CPUS_BY_UNCORECACHE: "prefer_align_by_uncore_cache",
}


@dataclass(frozen=True, slots=True)
class StaticPolicyOptions:
    """The parsed options (upstream ``StaticPolicyOptions``); all off by default."""

    full_physical_cpus_only: bool = False
    distribute_cpus_across_numa: bool = False
    align_by_socket: bool = False
    distribute_cpus_across_cores: bool = False
    strict_cpu_reservation: bool = False
    prefer_align_by_uncore_cache: bool = False

    @classmethod
    def parse(
        cls, options: Mapping[str, str] | None, gates: GateReader | None = None
    ) -> StaticPolicyOptions:
        """Upstream ``NewStaticPolicyOptions``: check, parse and cross-check every option.

        Options are checked in name order (upstream's map order is random). Raises
        ``ConfigurationError`` with upstream's messages.
        """
        gates = gates or FeatureGates()
        values: dict[str, bool] = {}
        for name, value in sorted((options or {}).items()):
            check_policy_option_available(name, gates)
            try:
                values[_FIELD_OF[name]] = go_parse_bool(value)
            except ValueError as err:
                raise ConfigurationError(f'bad value for option "{name}": {err}') from None
        opts = cls(**values)
        for first, second in INCOMPATIBLE_PAIRS:
            if opts.is_set(first) and opts.is_set(second):
                raise ConfigurationError(
                    f"static policy options {first} and {second} can not be used at the same time"
                )
        return opts

    def is_set(self, option: str) -> bool:
        """Whether the option called ``option`` (its configuration name) is on."""
        return bool(getattr(self, _FIELD_OF[option]))

    def enabled(self) -> tuple[str, ...]:
        """The configuration names of the options that are on, in declaration order."""
        by_field = {f: o for o, f in _FIELD_OF.items()}
        return tuple(by_field[f.name] for f in fields(self) if getattr(self, f.name))

    def validate(self, topology: CPUTopology, topology_manager_policy: str) -> None:
        """Upstream ``ValidateStaticPolicyOptions``: options that the machine or TM rule out."""
        if not self.align_by_socket:
            return
        if topology_manager_policy == SINGLE_NUMA_NODE_POLICY:
            raise ConfigurationError(
                f"Topolgy manager {SINGLE_NUMA_NODE_POLICY} policy is incompatible with "
                f"CPUManager {ALIGN_BY_SOCKET} policy option"
            )
        if topology.num_sockets > topology.num_numa_nodes:
            raise ConfigurationError(
                "Align by socket is not compatible with hardware where number of sockets are "
                "more than number of NUMA"
            )
