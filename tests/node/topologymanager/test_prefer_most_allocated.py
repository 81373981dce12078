"""``prefer-most-allocated-numa-node``: the tie rule, the single-numa-node merge, validation and
the explanation."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from numaplane.api.pod import Container, Pod
from numaplane.node.errors import ConfigurationError
from numaplane.node.topologymanager.bitmask import BitMask
from numaplane.node.topologymanager.hint import ProviderHints, TopologyHint
from numaplane.node.topologymanager.manager import TopologyManager
from numaplane.node.topologymanager.numa_info import NUMAInfo
from numaplane.node.topologymanager.numa_utilization import (
    FixedUtilization,
    Scores,
    TieBreakOutcome,
    break_tie,
    signal_verdict,
)
from numaplane.node.topologymanager.policy import MergeResult, merge_filtered
from numaplane.node.topologymanager.policy_options import (
    PolicyOptionError,
    PolicyOptions,
    parse_policy_options,
)
from numaplane.node.topologymanager.policy_single_numa_node import (
    SingleNumaNodePolicy,
    UtilizationTieBreakingPolicy,
)
from numaplane.testing.exhaustive import HintMerger
from tests.node.topologymanager.strategies import providers

OPTION = "prefer-most-allocated-numa-node"
ALPHA = {"TopologyManagerPolicyAlphaOptions": True}
FOUR = [(n, None) for n in range(4)]
INFO4 = NUMAInfo.new(FOUR, prefer_closest=False)
ON = PolicyOptions(prefer_most_allocated_numa_node=True)


def _scores(*values: int | Fraction) -> Scores:
    return {node: Fraction(v) for node, v in enumerate(values)}


# -- the rule ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class RuleCase:
    """Tied candidates, the merge's default, the two signals and the expected outcome."""

    name: str
    candidates: tuple[int, ...]
    default: int
    cpu: Scores | None
    memory: Scores | None
    outcome: TieBreakOutcome
    chosen: int


RULE_CASES = (
    RuleCase("no signal at all", (0, 1), 0, None, None, TieBreakOutcome.NEITHER, 0),
    RuleCase("both flat", (0, 1), 0, _scores(10, 10), _scores(5, 5), TieBreakOutcome.NEITHER, 0),
    RuleCase("cpu flat, memory off", (0, 1), 0, _scores(0, 0), None, TieBreakOutcome.NEITHER, 0),
    RuleCase("cpu only", (0, 1), 0, _scores(10, 40), _scores(5, 5), TieBreakOutcome.CPU, 1),
    RuleCase("cpu only, memory off", (0, 1), 0, _scores(0, 1), None, TieBreakOutcome.CPU, 1),
    RuleCase("memory only", (0, 1), 0, _scores(7, 7), _scores(1, 90), TieBreakOutcome.MEMORY, 1),
    RuleCase("memory only, cpu off", (0, 1), 0, None, _scores(0, 2), TieBreakOutcome.MEMORY, 1),
    RuleCase("agree", (0, 1), 0, _scores(10, 40), _scores(1, 90), TieBreakOutcome.AGREE, 1),
    RuleCase(
        "agree on default", (0, 1), 0, _scores(50, 0), _scores(9, 1), TieBreakOutcome.AGREE, 0
    ),
    RuleCase(
        "disagree -> default",
        (0, 1),
        0,
        _scores(10, 40),
        _scores(90, 1),
        TieBreakOutcome.DISAGREE,
        0,
    ),
    RuleCase(
        "three, shared cpu max does not decide",
        (0, 1, 2),
        0,
        _scores(50, 50, 10),
        _scores(0, 0, 0),
        TieBreakOutcome.NEITHER,
        0,
    ),
    RuleCase(
        "three, shared cpu max, memory decides outside it",
        (0, 1, 2),
        0,
        _scores(50, 50, 10),
        _scores(0, 0, 3),
        TieBreakOutcome.MEMORY,
        2,
    ),
    RuleCase(
        "three, unique cpu max",
        (0, 1, 2),
        0,
        _scores(10, 60, 50),
        _scores(4, 4, 4),
        TieBreakOutcome.CPU,
        1,
    ),
    RuleCase(
        "only tied candidates count",
        (1, 3),
        1,
        _scores(100, 10, 100, 20),
        None,
        TieBreakOutcome.CPU,
        3,
    ),
    RuleCase(
        "a node missing from the map scores 0",
        (0, 2),
        0,
        {0: Fraction(0)},
        {2: Fraction(1, 1000)},
        TieBreakOutcome.MEMORY,
        2,
    ),
    RuleCase(
        "exact: a third beats 33 percent",
        (0, 1),
        0,
        _scores(33, Fraction(100, 3)),
        None,
        TieBreakOutcome.CPU,
        1,
    ),
    RuleCase(
        "exact: a third equals 100/3",
        (0, 1),
        0,
        _scores(Fraction(1, 3) * 100, Fraction(100, 3)),
        None,
        TieBreakOutcome.NEITHER,
        0,
    ),
)


@pytest.mark.parametrize("case", RULE_CASES, ids=lambda c: c.name)
def test_tie_rule(case: RuleCase) -> None:
    tie = break_tie(case.candidates, case.default, FixedUtilization(case.cpu, case.memory))
    assert (tie.outcome, tie.chosen) == (case.outcome, case.chosen)
    assert tie.candidates == tuple(sorted(case.candidates))
    assert tie.default == case.default
    assert tie.cpu.decides == (tie.cpu.winner is not None)


def test_no_utilization_object_is_no_signal() -> None:
    tie = break_tie((1, 0), 0, None)
    assert tie.outcome is TieBreakOutcome.NEITHER
    assert tie.cpu.scores is None
    assert tie.memory.scores is None


def test_default_must_be_a_candidate() -> None:
    with pytest.raises(ValueError, match="not among the candidates"):
        break_tie((0, 1), 2, None)


def test_signal_verdict_pairs_candidates_in_order() -> None:
    verdict = signal_verdict({2: Fraction(5), 0: Fraction(1)}, [2, 0, 2])
    assert verdict.scores == ((0, Fraction(1)), (2, Fraction(5)))
    assert verdict.winner == 2
    assert verdict.to_json() == {"scores": {"0": "1", "2": "5"}, "winner": 2}


_score_maps = st.dictionaries(
    st.integers(0, 3), st.fractions(min_value=0, max_value=100), max_size=4
)


@given(
    st.sets(st.integers(0, 3), min_size=2),
    st.one_of(st.none(), _score_maps),
    st.one_of(st.none(), _score_maps),
    st.data(),
)
def test_tie_rule_laws(
    candidates: set[int], cpu: Scores | None, memory: Scores | None, data: st.DataObject
) -> None:
    default = min(candidates)
    order = data.draw(st.permutations(sorted(candidates)))
    tie = break_tie(order, default, FixedUtilization(cpu, memory))
    # The chosen node is a candidate; the order the candidates come in does not matter.
    assert tie.chosen in candidates
    assert tie == break_tie(sorted(candidates), default, FixedUtilization(cpu, memory))
    # Swapping the signals swaps the outcome's name but not the choice.
    swapped = break_tie(order, default, FixedUtilization(memory, cpu))
    assert swapped.chosen == tie.chosen
    # A signal that decides names its unique maximum; the result never contradicts both.
    for verdict in (tie.cpu, tie.memory):
        if verdict.winner is not None and verdict.scores is not None:
            top = max(s for _, s in verdict.scores)
            assert [n for n, s in verdict.scores if s == top] == [verdict.winner]
    if tie.outcome in (TieBreakOutcome.NEITHER, TieBreakOutcome.DISAGREE):
        assert tie.chosen == default


# -- the single-numa-node merge ---------------------------------------------------------------


def _single(*nodes: int) -> list[TopologyHint]:
    return [TopologyHint(BitMask(n), True) for n in nodes]


@dataclass(frozen=True)
class MergeCase:
    """Providers' answers on four NUMA nodes, the utilization and the expected merge."""

    name: str
    answers: Sequence[ProviderHints]
    cpu: Scores | None
    memory: Scores | None
    want_on: TopologyHint
    want_off: TopologyHint
    tie: TieBreakOutcome | None
    admit: bool = True


MERGE_CASES = (
    MergeCase(
        "neither decides: lowest node",
        [{"cpu": _single(0, 1, 2, 3)}],
        _scores(0, 0, 0, 0),
        None,
        TopologyHint(BitMask(0), True),
        TopologyHint(BitMask(0), True),
        TieBreakOutcome.NEITHER,
    ),
    MergeCase(
        "cpu decides among the nodes both resources allow",
        [{"cpu": _single(0, 1, 2)}, {"memory": _single(1, 2, 3)}],
        _scores(0, 10, 20, 99),
        _scores(0, 0, 0, 0),
        TopologyHint(BitMask(2), True),
        TopologyHint(BitMask(1), True),
        TieBreakOutcome.CPU,
    ),
    MergeCase(
        "memory decides",
        [{"cpu": _single(0, 3)}],
        None,
        _scores(5, 5, 5, 6),
        TopologyHint(BitMask(3), True),
        TopologyHint(BitMask(0), True),
        TieBreakOutcome.MEMORY,
    ),
    MergeCase(
        "both agree",
        [{"cpu": _single(0, 1)}, {"memory": _single(0, 1)}],
        _scores(1, 2, 0, 0),
        _scores(3, 4, 0, 0),
        TopologyHint(BitMask(1), True),
        TopologyHint(BitMask(0), True),
        TieBreakOutcome.AGREE,
    ),
    MergeCase(
        "both decide, disagree: default",
        [{"cpu": _single(1, 2)}],
        _scores(0, 2, 1, 0),
        _scores(0, 1, 2, 0),
        TopologyHint(BitMask(1), True),
        TopologyHint(BitMask(1), True),
        TieBreakOutcome.DISAGREE,
    ),
    MergeCase(
        "an any hint leaves the other resource's nodes tied",
        [{"cpu": _single(2, 3)}, {"memory": None}, None],
        _scores(0, 0, 0, 1),
        None,
        TopologyHint(BitMask(3), True),
        TopologyHint(BitMask(2), True),
        TieBreakOutcome.CPU,
    ),
    MergeCase(
        "one candidate: no tie, the signal is not asked",
        [{"cpu": _single(0, 1)}, {"memory": _single(1)}],
        _scores(100, 0, 0, 0),
        None,
        TopologyHint(BitMask(1), True),
        TopologyHint(BitMask(1), True),
        None,
    ),
    MergeCase(
        "multi-node and non-preferred hints never tie",
        [
            {
                "cpu": [
                    TopologyHint(BitMask(0, 1), True),
                    TopologyHint(BitMask(2), False),
                    TopologyHint(BitMask(3), True),
                ]
            }
        ],
        _scores(90, 90, 90, 0),
        None,
        TopologyHint(BitMask(3), True),
        TopologyHint(BitMask(3), True),
        None,
    ),
    MergeCase(
        "no single node fits: rejected either way",
        [{"cpu": _single(0)}, {"memory": _single(1)}],
        _scores(0, 50, 0, 0),
        None,
        TopologyHint(None, False),
        TopologyHint(None, False),
        None,
        admit=False,
    ),
    MergeCase(
        "no preference: any",
        [None, {"cpu": None}],
        _scores(0, 50, 0, 0),
        None,
        TopologyHint(None, True),
        TopologyHint(None, True),
        None,
    ),
)


@pytest.mark.parametrize("case", MERGE_CASES, ids=lambda c: c.name)
def test_single_numa_merge(case: MergeCase) -> None:
    utilization = FixedUtilization(case.cpu, case.memory)
    on = SingleNumaNodePolicy(INFO4, ON)
    merged = on.merge_explained(case.answers, utilization)
    assert (merged.hint, merged.admit) == (case.want_on, case.admit)
    tie = merged.tie_break
    assert (None if tie is None else tie.outcome) == case.tie
    off = SingleNumaNodePolicy(INFO4)
    assert off.merge(case.answers) == MergeResult(case.want_off, case.admit)
    # With the option off the utilization is never consulted.
    assert off.merge_explained(case.answers, utilization) == MergeResult(case.want_off, case.admit)


def test_plain_merge_with_the_option_but_no_utilization_keeps_the_default() -> None:
    policy = SingleNumaNodePolicy(INFO4, ON)
    merged = policy.merge([{"cpu": _single(2, 3)}])
    assert (merged.hint, merged.admit) == (TopologyHint(BitMask(2), True), True)


def test_hint_merger_reports_distinct_preferred_single_node_candidates() -> None:
    hints = [
        [TopologyHint(BitMask(2), True), TopologyHint(BitMask(0), True), TopologyHint(None, True)],
        [
            TopologyHint(BitMask(0), True),
            TopologyHint(BitMask(0, 2), True),
            TopologyHint(None, True),
        ],
    ]
    merger = HintMerger(INFO4, hints, "best-effort", PolicyOptions())
    best, tied = merger.merge_with_single_numa_ties()
    assert best == merger.merge() == TopologyHint(BitMask(0), True)
    # {2}&{0,2} is {2} but not preferred (masks differ); {2}&any is preferred.
    assert tied == (0, 2)
    merged = merge_filtered(INFO4, hints, "best-effort", PolicyOptions(), with_ties=True)
    assert (merged.hint, merged.single_node_ties) == (best, tied)


@given(providers, _score_maps, _score_maps)
def test_option_only_moves_between_tied_single_nodes(
    answers: list[ProviderHints], cpu: Scores, memory: Scores
) -> None:
    on, off = SingleNumaNodePolicy(INFO4, ON), SingleNumaNodePolicy(INFO4)
    merged = on.merge_explained(answers, FixedUtilization(cpu, memory))
    hint, tie = merged.hint, merged.tie_break
    default = off.merge(answers)
    default_hint = default.hint
    assert merged.admit == default.admit
    if tie is None:
        assert hint == default_hint
    else:
        assert default_hint == TopologyHint(BitMask(tie.default), True)
        assert hint == TopologyHint(BitMask(tie.chosen), True)
        assert len(tie.candidates) > 1


# -- validation -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ValidationCase:
    """Constructor arguments and the expected error substring (``None`` = accepted)."""

    name: str
    policy: str
    options: Mapping[str, str]
    gates: Mapping[str, bool] = field(default_factory=dict)
    error: str | None = None


VALIDATION_CASES = (
    ValidationCase("single-numa-node with the gate", "single-numa-node", {OPTION: "true"}, ALPHA),
    ValidationCase(
        "gate off",
        "single-numa-node",
        {OPTION: "true"},
        {},
        'alpha-level options not enabled, but option "prefer-most-allocated-numa-node" provided',
    ),
    ValidationCase(
        "best-effort",
        "best-effort",
        {OPTION: "true"},
        ALPHA,
        'is only valid with the "single-numa-node" policy, not "best-effort"',
    ),
    ValidationCase(
        "restricted",
        "restricted",
        {OPTION: "true"},
        ALPHA,
        'is only valid with the "single-numa-node" policy, not "restricted"',
    ),
    ValidationCase("bad value", "single-numa-node", {OPTION: "yes"}, ALPHA, "strconv.ParseBool"),
    ValidationCase(
        "false is accepted anywhere the gate allows", "best-effort", {OPTION: "0"}, ALPHA
    ),
)


@pytest.mark.parametrize("case", VALIDATION_CASES, ids=lambda c: c.name)
def test_validation(case: ValidationCase) -> None:
    if case.error is None:
        TopologyManager(FOUR, case.policy, "container", case.options, case.gates)
        return
    with pytest.raises(ConfigurationError, match=_escaped(case.error)):
        TopologyManager(FOUR, case.policy, "container", case.options, case.gates)


def _escaped(text: str) -> str:
    import re

    return re.escape(text)


def test_gate_off_is_a_policy_option_error() -> None:
    with pytest.raises(PolicyOptionError):
        parse_policy_options({OPTION: "true"}, {})


def test_the_manager_installs_the_tie_breaking_policy_only_with_the_option() -> None:
    on = TopologyManager(FOUR, "single-numa-node", "container", {OPTION: "true"}, ALPHA)
    assert isinstance(on.policy, UtilizationTieBreakingPolicy)
    assert on.policy_name == "single-numa-node"
    off = TopologyManager(FOUR, "single-numa-node", "container", {OPTION: "false"}, ALPHA)
    assert isinstance(off.policy, SingleNumaNodePolicy)


# -- through the manager: explanation ---------------------------------------------------------


@dataclass
class Fixed:
    """A provider that answers fixed hints and allocates nothing."""

    hints: ProviderHints

    def get_topology_hints(self, pod: Pod, container: Container) -> ProviderHints:
        """Same answer for every container."""
        return self.hints

    def get_pod_topology_hints(self, pod: Pod) -> ProviderHints:
        """Same answer for the pod."""
        return self.hints

    def allocate(self, pod: Pod, container: Container) -> None:
        """Nothing to allocate."""


def _manager(scope: str, option: bool, utilization: FixedUtilization | None) -> TopologyManager:
    options = {OPTION: "true"} if option else {}
    tm = TopologyManager(FOUR, "single-numa-node", scope, options, ALPHA, utilization=utilization)
    tm.add_hint_provider(Fixed({"cpu": _single(0, 1, 3)}), "cpu")
    return tm


POD = Pod.of("uid", containers=[Container.of("a"), Container.of("b")])


@pytest.mark.parametrize("scope", ["container", "pod"])
def test_explanation_records_the_tie_break(scope: str) -> None:
    tm = _manager(scope, True, FixedUtilization(_scores(0, 0, 0, 30), _scores(0, 0, 0, 0)))
    result = tm.admit(POD)
    assert result.admitted
    assert tm.get_affinity("uid", "a") == TopologyHint(BitMask(3), True)
    for decision in result.explanation.decisions:
        assert decision.tie_break is not None
        assert decision.tie_break.outcome is TieBreakOutcome.CPU
    data = json.loads(json.dumps(result.to_json()))
    first = data["explanation"]["decisions"][0]
    assert first["tie_break"] == {
        "candidates": [0, 1, 3],
        "default": 0,
        "chosen": 3,
        "decided_by": "cpu",
        "cpu": {"scores": {"0": "0", "1": "0", "3": "30"}, "winner": 3},
        "memory": {"scores": {"0": "0", "1": "0", "3": "0"}, "winner": None},
    }
    text = result.explanation.render_text()
    assert "tie among NUMA nodes [0, 1, 3] -> 3: CPU utilization decides" in text
    assert "cpu 0: 0%, 1: 0%, 3: 30%; memory 0: 0%" in text


def test_render_shows_fractions_to_two_decimals() -> None:
    tie = break_tie((0, 1), 0, FixedUtilization(_scores(Fraction(250, 3), Fraction(2, 3)), None))
    assert "cpu 0: ~83.33%, 1: ~0.67%; memory unavailable" in tie.render_text()
    assert "CPU utilization decides" in tie.render_text()
    assert tie.to_json()["cpu"]["scores"] == {"0": "250/3", "1": "2/3"}


def test_explanation_without_the_option_has_no_tie_break_key() -> None:
    tm = _manager("container", False, FixedUtilization(_scores(0, 0, 0, 30)))
    result = tm.admit(POD)
    assert tm.get_affinity("uid", "a") == TopologyHint(BitMask(0), True)
    for decision in json.loads(json.dumps(result.to_json()))["explanation"]["decisions"]:
        assert "tie_break" not in decision
        assert set(decision) == {
            "target",
            "containers",
            "providers",
            "merged",
            "admit",
            "why",
            "failed_provider",
            "error",
        }


def test_set_utilization_takes_effect_for_later_admissions() -> None:
    tm = _manager("container", True, None)
    first = tm.admit(Pod.of("p1", containers=[Container.of("a")]))
    assert first.explanation.decisions[0].merged == TopologyHint(BitMask(0), True)
    tie = first.explanation.decisions[0].tie_break
    assert tie is not None
    assert tie.outcome is TieBreakOutcome.NEITHER
    tm.set_utilization(FixedUtilization(None, _scores(0, 1, 0, 0)))
    second = tm.admit(Pod.of("p2", containers=[Container.of("a")]))
    assert second.explanation.decisions[0].merged == TopologyHint(BitMask(1), True)


def test_set_utilization_without_the_option_is_a_no_op() -> None:
    tm = _manager("container", False, None)
    tm.set_utilization(FixedUtilization(_scores(0, 0, 0, 30)))
    tm.admit(POD)
    assert tm.get_affinity("uid", "b") == TopologyHint(BitMask(0), True)


def test_rejected_merge_keeps_its_none_entry() -> None:
    tm = TopologyManager(FOUR, "single-numa-node", "container", {OPTION: "true"}, ALPHA)
    tm.add_hint_provider(Fixed({"cpu": []}), "cpu")
    result = tm.admit(POD)
    assert not result.admitted
    assert [d.tie_break for d in result.explanation.decisions] == [None]
    assert (
        "tie_break" not in json.loads(json.dumps(result.to_json()))["explanation"]["decisions"][0]
    )


def test_each_merge_returns_its_own_tie_break() -> None:
    tm = _manager("container", True, FixedUtilization(_scores(0, 0, 0, 30)))
    first = tm.admit(POD).explanation.decisions[0].tie_break
    assert first is not None
    # A merge without a tie returns none, whatever the merge before it returned.
    tm.set_utilization(None)
    assert tm.policy.merge([None]).tie_break is None


def test_the_wrapper_exposes_the_wrapped_policy() -> None:
    tm = TopologyManager(FOUR, "single-numa-node", "pod", {OPTION: "true"}, ALPHA)
    policy = tm.policy
    assert isinstance(policy, UtilizationTieBreakingPolicy)
    assert policy.options.prefer_most_allocated_numa_node
    assert policy.numa_info.nodes == (0, 1, 2, 3)
    assert policy.can_admit(TopologyHint(None, True))
    assert not policy.can_admit(TopologyHint(BitMask(0), False))
