"""``ControllerExpectations`` and the finalizer-removal expectations."""

from __future__ import annotations

from numaplane.controllers.job.expectations import (
    EXPECTATIONS_TIMEOUT_S,
    ControllerExpectations,
    FinalizerExpectations,
)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_creations_block_until_all_observed() -> None:
    clock = Clock()
    exp = ControllerExpectations(clock)
    assert exp.satisfied("ns/j")  # no record: nothing pending
    exp.expect_creations("ns/j", 2)
    assert not exp.satisfied("ns/j")
    exp.creation_observed("ns/j")
    assert not exp.satisfied("ns/j")
    exp.creation_observed("ns/j")
    assert exp.satisfied("ns/j")
    assert exp.satisfied("ns/other")


def test_deletions_and_the_timeout_of_a_lost_event() -> None:
    clock = Clock()
    exp = ControllerExpectations(clock)
    exp.expect_deletions("ns/j", 1)
    assert not exp.satisfied("ns/j")
    clock.now = EXPECTATIONS_TIMEOUT_S
    assert not exp.satisfied("ns/j")
    clock.now = EXPECTATIONS_TIMEOUT_S + 1
    assert exp.satisfied("ns/j")
    exp.delete("ns/j")
    exp.deletion_observed("ns/j")  # no record: nothing to lower
    assert exp.satisfied("ns/j")


def test_a_new_expectation_replaces_the_old_one() -> None:
    exp = ControllerExpectations(Clock())
    exp.expect_creations("ns/j", 5)
    exp.expect_deletions("ns/j", 1)
    exp.deletion_observed("ns/j")
    assert exp.satisfied("ns/j")


def test_finalizer_expectations() -> None:
    exp = FinalizerExpectations()
    exp.expect_removed("ns/j", ["a", "b"])
    assert exp.expected("ns/j") == {"a", "b"}
    exp.removal_observed("ns/j", "a")
    snapshot = exp.expected("ns/j")
    exp.removal_observed("ns/j", "b")
    assert snapshot == {"b"}  # a snapshot, not a view
    assert exp.expected("ns/j") == frozenset()
    exp.expect_removed("ns/j", ["c"])
    exp.delete("ns/j")
    assert exp.expected("ns/j") == frozenset()
