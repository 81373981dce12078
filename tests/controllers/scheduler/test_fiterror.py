"""The FailedScheduling message: upstream's FitError shape with the preemption post-filter
message, from a real decision over three nodes and from the histogram alone."""

from __future__ import annotations

import random
from dataclasses import dataclass

import pytest

from numaplane.controllers.scheduler.cache import Cache
from numaplane.controllers.scheduler.fiterror import fit_error_message, histogram
from numaplane.controllers.scheduler.framework import NO_NODES, decide
from numaplane.controllers.scheduler.options import SchedulerOptions
from numaplane.controllers.scheduler.podinfo import pod_info

from .helpers import node_obj, pod_obj


@dataclass(frozen=True)
class MessageCase:
    name: str
    reasons: dict[str, tuple[str, ...]]
    unresolvable: dict[str, bool]
    never: bool
    want: str


MESSAGES = [
    MessageCase(
        "resources only",
        {"a": ("Insufficient cpu",)},
        {"a": False},
        False,
        "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: "
        "1 No preemption victims found for incoming pod..",
    ),
    MessageCase(
        "two reasons on one node count twice",
        {"a": ("Insufficient cpu", "Insufficient memory"), "b": ("Insufficient cpu",)},
        {"a": False, "b": False},
        False,
        "0/2 nodes are available: 1 Insufficient memory, 2 Insufficient cpu. preemption: 0/2 "
        "nodes are available: 2 No preemption victims found for incoming pod..",
    ),
    MessageCase(
        "preemptionPolicy Never",
        {"a": ("node(s) were unschedulable",)},
        {"a": True},
        True,
        "0/1 nodes are available: 1 node(s) were unschedulable. preemption: not eligible due "
        "to preemptionPolicy=Never..",
    ),
]


@pytest.mark.parametrize("case", MESSAGES, ids=[c.name for c in MESSAGES])
def test_message(case: MessageCase) -> None:
    got = fit_error_message(
        len(case.reasons), case.reasons, case.unresolvable, preemption_never=case.never
    )
    assert got == case.want


def test_histogram_sorts_as_strings() -> None:
    # Upstream sorts the "<count> <reason>" strings, so "10 …" comes before "2 …".
    assert histogram(["b"] * 2 + ["a"] * 10) == "10 a, 2 b"


def test_decision_over_three_nodes_has_upstreams_shape() -> None:
    cache = Cache()
    cache.set_node(node_obj("small", cpu="1", labels={"pool": "x"}))
    cache.set_node(node_obj("other-a", cpu="8"))
    cache.set_node(node_obj("other-b", cpu="8"))
    pod = pod_info(pod_obj("p", cpu="2", node_selector={"pool": "x"}))
    decision = decide(cache, SchedulerOptions(), pod, random.Random(1))
    assert decision.node is None
    assert decision.message == (
        "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match Pod's node "
        "affinity/selector. preemption: 0/3 nodes are available: 1 No preemption victims "
        "found for incoming pod, 2 Preemption is not helpful for scheduling.."
    )


def test_no_nodes() -> None:
    decision = decide(Cache(), SchedulerOptions(), pod_info(pod_obj("p")), random.Random(1))
    assert (decision.node, decision.message) == (None, NO_NODES)
