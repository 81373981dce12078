"""WorkQueue: dedup, one worker per key, re-queue at done(), delayed and rate-limited adds,
shutdown draining; the exponential rate limiter's delays (client-go's 5 ms .. 1000 s)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import pytest

from numaplane.kube.workqueue import ExponentialRateLimiter, ShutDown, WorkQueue

pytestmark = pytest.mark.timeout(30)


def test_dedup_and_order() -> None:
    async def body() -> list[str]:
        queue = WorkQueue()
        for key in ("a", "b", "a", "c", "b"):
            queue.add(key)
        assert len(queue) == 3
        return [await queue.get() for _ in range(3)]

    assert asyncio.run(body()) == ["a", "b", "c"]


def test_key_added_while_processing_comes_back_after_done() -> None:
    async def body() -> None:
        queue = WorkQueue()
        queue.add("a")
        key = await queue.get()
        queue.add("a")  # changed while a worker holds it: not handed out twice
        queue.add("a")
        assert len(queue) == 0
        queue.done(key)
        assert len(queue) == 1
        assert await queue.get() == "a"
        queue.done("a")
        assert len(queue) == 0

    asyncio.run(body())


def test_get_waits_for_an_add_and_shutdown_drains_first() -> None:
    async def body() -> None:
        queue = WorkQueue()
        getter = asyncio.ensure_future(queue.get())
        await asyncio.sleep(0)
        assert not getter.done()
        queue.add("x")
        assert await getter == "x"
        queue.add("y")
        queue.shutdown()
        queue.add("z")  # refused after shutdown
        assert await queue.get() == "y"
        with pytest.raises(ShutDown):
            await queue.get()

    asyncio.run(body())


def test_add_after_keeps_the_earlier_time() -> None:
    async def body() -> list[str]:
        queue = WorkQueue()
        queue.add_after("late", 0.2)
        queue.add_after("early", 0.01)
        queue.add_after("late", 0.02)  # moves earlier
        queue.add_after("early", 5.0)  # a later time does not delay it
        queue.add_after("now", 0)
        return [await queue.get() for _ in range(3)]

    order = asyncio.run(body())
    assert order[0] == "now"
    assert sorted(order[1:]) == ["early", "late"]


@dataclass(frozen=True)
class LimiterCase:
    name: str
    failures: int
    delay: float


LIMITER_CASES = [
    LimiterCase("first failure waits the base", 0, 0.005),
    LimiterCase("doubles", 1, 0.010),
    LimiterCase("tenth", 10, 0.005 * 1024),
    LimiterCase("capped at 1000s", 30, 1000.0),
    LimiterCase("capped for very long failures", 500, 1000.0),
]


@pytest.mark.parametrize("case", LIMITER_CASES, ids=lambda c: c.name)
def test_rate_limiter_delays(case: LimiterCase) -> None:
    limiter = ExponentialRateLimiter()
    for _ in range(case.failures):
        limiter.when("k")
    assert limiter.when("k") == pytest.approx(case.delay)
    assert limiter.num_requeues("k") == case.failures + 1
    assert limiter.when("other") == pytest.approx(0.005)
    limiter.forget("k")
    assert limiter.num_requeues("k") == 0
    assert limiter.when("k") == pytest.approx(0.005)


def test_add_rate_limited_counts_and_forget_resets() -> None:
    async def body() -> None:
        queue = WorkQueue()
        queue.add_rate_limited("k")
        queue.add_rate_limited("k")
        assert queue.num_requeues("k") == 2
        assert await queue.get() == "k"
        queue.done("k")
        queue.forget("k")
        assert queue.num_requeues("k") == 0

    asyncio.run(body())
