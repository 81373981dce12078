"""ClusterStore: semantics of each write, durability across reopen, read-your-writes, list_at,
watch from any resourceVersion, compaction and 410, slow-watcher termination."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest

from numaplane.apiserver import storagedb
from numaplane.apiserver.errors import StatusError
from numaplane.apiserver.storage import EXPIRED_LIST, ClusterStore, ObjectKey, WatchEvent

T = TypeVar("T")

pytestmark = pytest.mark.timeout(120)


def run(path: Path, body: Callable[[ClusterStore], Awaitable[T]], **options: Any) -> T:
    """Open the store at ``path``, run ``body`` with it, close it."""

    async def main() -> T:
        store = await ClusterStore.open(path, **options)
        try:
            return await body(store)
        finally:
            await store.close()

    return asyncio.run(main())


def cm(name: str, namespace: str = "ns", **data: str) -> dict[str, Any]:
    """A small ConfigMap."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
        "data": dict(data),
    }


def key(name: str, namespace: str = "ns", resource: str = "configmaps") -> ObjectKey:
    return ObjectKey(resource, namespace, name)


async def drain(watcher: Any, count: int) -> list[WatchEvent]:
    """Exactly ``count`` events, then check that nothing else is pending."""
    events = [await watcher.next() for _ in range(count)]
    assert all(e is not None for e in events)
    assert await watcher.next(0) is None
    return events


# ----- the semantics of each write -----


@dataclass(frozen=True)
class WriteCase:
    name: str
    op: str  # create | update | delete
    exists: bool
    expect_rv: str  # "none" | "current" | "stale"
    code: int  # 0 when the write succeeds
    message: str = ""


WRITE_CASES = [
    WriteCase("create new", "create", False, "none", 0),
    WriteCase("create existing", "create", True, "none", 409, 'configmaps "a" already exists'),
    WriteCase("update unconditional", "update", True, "none", 0),
    WriteCase("update at current rv", "update", True, "current", 0),
    WriteCase(
        "update at stale rv",
        "update",
        True,
        "stale",
        409,
        'Operation cannot be fulfilled on configmaps "a": the object has been modified; '
        "please apply your changes to the latest version and try again",
    ),
    WriteCase("update absent", "update", False, "none", 404, 'configmaps "a" not found'),
    WriteCase("delete unconditional", "delete", True, "none", 0),
    WriteCase("delete at current rv", "delete", True, "current", 0),
    WriteCase("delete at stale rv", "delete", True, "stale", 409, ""),
    WriteCase("delete absent", "delete", False, "none", 404, 'configmaps "a" not found'),
]


@pytest.mark.parametrize("case", WRITE_CASES, ids=[c.name for c in WRITE_CASES])
def test_write_semantics(tmp_path: Path, case: WriteCase) -> None:
    async def body(store: ClusterStore) -> None:
        await store.create(key("other"), cm("other"))
        current = 0
        if case.exists:
            current = int(
                (await store.create(key("a"), cm("a", v="1")))["metadata"]["resourceVersion"]
            )
            await store.create(key("later"), cm("later"))
        expect = {"none": None, "current": current, "stale": current - 1}[case.expect_rv]
        before = store.current_rv()

        async def write() -> dict[str, Any]:
            if case.op == "create":
                return await store.create(key("a"), cm("a", v="2"))
            if case.op == "update":
                return await store.update(key("a"), cm("a", v="2"), expect)
            return await store.delete(key("a"), expect)

        if case.code:
            with pytest.raises(StatusError) as refused:
                await write()
            assert refused.value.code == case.code
            if case.message:
                assert refused.value.message == case.message
            assert store.current_rv() == before  # a refused write takes no resourceVersion
            return
        result = await write()
        assert result["metadata"]["resourceVersion"] == str(before + 1)
        assert store.current_rv() == before + 1
        stored = store.get(key("a"))
        if case.op == "delete":
            assert stored is None
            assert result["data"] == {"v": "1"}  # the last state, at the deletion's rv
        else:
            assert stored == result
            assert stored is not None
            assert stored["data"] == {"v": "2"}

    run(tmp_path / "db", body)


def test_write_copies_its_input_and_get_latest_sees_writes_in_flight(tmp_path: Path) -> None:
    async def body(store: ClusterStore) -> None:
        given = cm("a", v="1")
        task = asyncio.ensure_future(store.create(key("a"), given))
        await asyncio.sleep(0)  # the write is accepted, its commit not yet applied
        assert store.get(key("a")) is None
        latest = store.get_latest(key("a"))
        assert latest is not None
        assert latest["metadata"]["resourceVersion"] == "1"
        with pytest.raises(StatusError) as refused:
            await store.create(key("a"), cm("a"))
        assert refused.value.reason == "AlreadyExists"
        created = await task
        assert "resourceVersion" not in given["metadata"]
        assert store.get(key("a")) is created

    run(tmp_path / "db", body)


def test_list_is_sorted_and_filtered_by_namespace(tmp_path: Path) -> None:
    names = [("b", "x"), ("a", "y"), ("b", "a"), ("ab", "z"), ("a", "b")]

    async def body(store: ClusterStore) -> None:
        for namespace, name in names:
            await store.create(key(name, namespace), cm(name, namespace))
        await store.create(key("p", "a", "pods"), cm("p", "a"))
        items, rv = store.list("configmaps")
        assert rv == store.current_rv() == 6
        listed = [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in items]
        assert listed == sorted(names)
        in_a = [o["metadata"]["name"] for o in store.list("configmaps", "a")[0]]
        assert in_a == ["b", "y"]
        assert store.list("configmaps", "c") == ([], 6)
        assert store.list("secrets") == ([], 6)

    run(tmp_path / "db", body)


# ----- durability -----


def test_state_and_resource_versions_survive_reopen(tmp_path: Path) -> None:
    path = tmp_path / "db"

    async def write(store: ClusterStore) -> dict[str, Any]:
        await asyncio.gather(
            *(store.create(key(f"c{i}"), cm(f"c{i}", i=str(i))) for i in range(50))
        )
        await store.update(key("c1"), cm("c1", i="one"), None)
        await store.delete(key("c2"), None)
        items, rv = store.list("configmaps")
        return {"items": items, "rv": rv}

    before = run(path, write)
    assert before["rv"] == 52

    async def reread(store: ClusterStore) -> None:
        assert store.list("configmaps") == (before["items"], 52)
        assert store.current_rv() == 52
        created = await store.create(key("new"), cm("new"))
        assert created["metadata"]["resourceVersion"] == "53"

    run(path, reread)
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)


# ----- watch -----


def test_watch_without_rv_starts_with_the_current_state(tmp_path: Path) -> None:
    async def body(store: ClusterStore) -> None:
        await store.create(key("b"), cm("b"))
        await store.create(key("a"), cm("a"))
        await store.create(key("a", "other"), cm("a", "other"))
        watcher = store.watch("configmaps", "ns", None)
        await store.update(key("b"), cm("b", v="2"), None)
        await store.delete(key("a", "other"), None)
        events = await drain(watcher, 3)
        assert [(e.type, e.key.name, e.resource_version) for e in events] == [
            ("ADDED", "a", 2),
            ("ADDED", "b", 1),
            ("MODIFIED", "b", 4),
        ]
        assert events[2].prev_object is not None
        assert events[2].prev_object["data"] == {}
        watcher.close()
        assert await watcher.next() is None

    run(tmp_path / "db", body)


@dataclass(frozen=True)
class Filter:
    resource: str | None
    namespace: str | None

    def matches(self, event: WatchEvent) -> bool:
        return (self.resource is None or event.key.resource == self.resource) and (
            self.namespace is None or event.key.namespace == self.namespace
        )


FILTERS = [
    Filter(None, None),
    Filter("configmaps", None),
    Filter("configmaps", "ns1"),
    Filter("secrets", None),
    Filter("secrets", "ns0"),
]

WRITES = 10_000
WATCHERS = 50


async def mixed_writes(store: ClusterStore, count: int, seed: int) -> None:
    """``count`` creates, updates and deletes from 32 concurrent writers, in two resources and
    three namespaces."""
    import random

    rng = random.Random(seed)
    done = 0

    async def writer() -> None:
        nonlocal done
        while done < count:
            done += 1
            resource = rng.choice(("configmaps", "secrets"))
            k = ObjectKey(resource, f"ns{rng.randrange(3)}", f"o{rng.randrange(200)}")
            current = store.get_latest(k)
            if current is None:
                await store.create(k, cm(k.name, k.namespace))
            elif rng.random() < 0.2:
                await store.delete(k, None)
            else:
                await store.update(k, cm(k.name, k.namespace, n=str(done)), None)

    await asyncio.gather(*(writer() for _ in range(32)))


def test_watchers_see_every_event_in_order_and_resume_from_any_rv(tmp_path: Path) -> None:
    path = tmp_path / "db"
    import random

    rng = random.Random(7)

    async def body(store: ClusterStore) -> list[WatchEvent]:
        filters = [FILTERS[i % len(FILTERS)] for i in range(WATCHERS)]
        watchers = [store.watch(f.resource, f.namespace, 0) for f in filters]
        received: list[list[WatchEvent]] = [[] for _ in watchers]

        async def consume(i: int) -> None:
            while (event := await watchers[i].next()) is not None:
                received[i].append(event)

        consumers = [asyncio.ensure_future(consume(i)) for i in range(WATCHERS)]
        await mixed_writes(store, WRITES, seed=1)
        assert store.current_rv() == WRITES
        everything = store.watch(None, None, 0)
        full = await drain(everything, WRITES)
        assert [e.resource_version for e in full] == list(range(1, WRITES + 1))
        # Every consumer has caught up once it has seen the last event of its filter.
        for i, f in enumerate(filters):
            last = max(e.resource_version for e in full if f.matches(e))
            while not received[i] or received[i][-1].resource_version < last:
                await asyncio.sleep(0.001)
            watchers[i].close()
        await asyncio.gather(*consumers)
        for i, f in enumerate(filters):
            assert received[i] == [e for e in full if f.matches(e)], f
        for from_rv in [0, 1, WRITES - 1, WRITES, *rng.sample(range(WRITES), 20)]:
            f = rng.choice(FILTERS)
            resumed = store.watch(f.resource, f.namespace, from_rv)
            expected = [e for e in full if e.resource_version > from_rv and f.matches(e)]
            assert await drain(resumed, len(expected)) == expected
        return full

    full = run(path, body)

    async def after_reopen(store: ClusterStore) -> None:
        for from_rv in [0, *rng.sample(range(WRITES), 5)]:
            resumed = store.watch(None, None, from_rv)
            expected = [e for e in full if e.resource_version > from_rv]
            assert await drain(resumed, len(expected)) == expected

    run(path, after_reopen)


def test_slow_watcher_is_ended(tmp_path: Path) -> None:
    async def body(store: ClusterStore) -> None:
        slow = store.watch("configmaps", None, 0)
        keeping_up = store.watch("configmaps", None, 0)
        for i in range(8):
            await store.create(key(f"c{i}"), cm(f"c{i}"))
            assert await keeping_up.next() is not None
        assert not slow.closed
        for i in range(8, 12):
            await store.create(key(f"c{i}"), cm(f"c{i}"))
            assert await keeping_up.next() is not None
        assert slow.closed
        assert slow.ended_because
        assert await slow.next() is None
        assert not keeping_up.closed

    run(tmp_path / "db", body, watch_lag_limit=10)


# ----- compaction -----


def test_compaction_gives_410_and_keeps_what_is_after_it(tmp_path: Path) -> None:
    path = tmp_path / "db"

    async def body(store: ClusterStore) -> None:
        for i in range(10):
            await store.create(key(f"c{i}"), cm(f"c{i}"))
        for i in range(5):
            await store.update(key(f"c{i}"), cm(f"c{i}", v="2"), None)  # rv 11..15
        await store.delete(key("c9"), None)  # rv 16
        lagging = store.watch("configmaps", None, 3)
        await store.compact(12)
        assert store.compacted_rv() == 12
        with pytest.raises(StatusError) as expired:
            store.watch("configmaps", None, 11)
        assert (expired.value.code, expired.value.reason) == (410, "Expired")
        assert expired.value.message == "too old resource version: 11 (12)"
        with pytest.raises(StatusError) as expired_list:
            store.list_at("configmaps", None, 11)
        assert (expired_list.value.code, expired_list.value.message) == (410, EXPIRED_LIST)
        with pytest.raises(StatusError) as too_large:
            store.list_at("configmaps", None, 17)
        assert too_large.value.code == 504
        assert await lagging.next() is None
        assert lagging.closed  # the events it had not read were compacted
        resumed = store.watch("configmaps", None, 12)
        assert [e.resource_version for e in await drain(resumed, 4)] == [13, 14, 15, 16]
        at_12 = store.list_at("configmaps", None, 12)
        assert [o["metadata"]["resourceVersion"] for o in at_12] == [
            "11",
            "12",
            "3",
            "4",
            "5",
            "6",
            "7",
            "8",
            "9",
            "10",
        ]
        at_15 = store.list_at("configmaps", "ns", 15)
        assert len(at_15) == 10
        assert at_15[9]["metadata"]["name"] == "c9"

    run(path, body)

    async def reopened(store: ClusterStore) -> None:
        assert (store.current_rv(), store.compacted_rv()) == (16, 12)
        assert len(store.list("configmaps")[0]) == 9
        resumed = store.watch("configmaps", None, 12)
        events = await drain(resumed, 4)
        assert [(e.type, e.resource_version) for e in events] == [
            ("MODIFIED", 13),
            ("MODIFIED", 14),
            ("MODIFIED", 15),
            ("DELETED", 16),
        ]
        assert events[3].prev_object is not None
        assert events[3].prev_object["metadata"]["resourceVersion"] == "10"
        assert len(store.list_at("configmaps", None, 12)) == 10

    run(path, reopened)
    with sqlite3.connect(path) as db:
        # At or below the compacted rv only the state at it is left: one row per live object.
        assert db.execute("SELECT count(*) FROM revisions WHERE rv <= 12").fetchone() == (10,)


def test_compaction_runs_on_its_schedule(tmp_path: Path) -> None:
    async def body(store: ClusterStore) -> None:
        for i in range(20):
            await store.create(key(f"c{i}"), cm(f"c{i}"))
        for _ in range(10_000):  # the schedule is 10 ms; bounded wait, not a speed assertion
            if store.compacted_rv() == 15:
                break
            await asyncio.sleep(0.01)
        assert store.compacted_rv() == 15
        with pytest.raises(StatusError):
            store.watch(None, None, 14)

    run(tmp_path / "db", body, compact_interval_s=0.01, keep_revisions=5)


def test_history_in_memory_stays_bounded_between_scheduled_compactions(tmp_path: Path) -> None:
    async def body(store: ClusterStore) -> None:
        for i in range(40):
            await store.create(key(f"c{i}"), cm(f"c{i}"))
        assert store.compacted_rv() > 0
        assert store.current_rv() - store.compacted_rv() <= 2 * 5

    run(tmp_path / "db", body, compact_interval_s=3600, keep_revisions=5)


def test_a_failed_commit_fails_its_writes_and_every_later_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def body(store: ClusterStore) -> None:
        await store.create(key("kept"), cm("kept"))

        def broken(*_: object) -> None:
            raise sqlite3.OperationalError("disk I/O error")

        monkeypatch.setattr(storagedb.Writer, "_commit", broken)
        with pytest.raises(StatusError) as failed:
            await store.create(key("lost"), cm("lost"))
        assert failed.value.code == 500
        assert "disk I/O error" in failed.value.message
        assert store.get_latest(key("lost")) is None
        with pytest.raises(StatusError) as later:
            await store.update(key("kept"), cm("kept", v="2"), None)
        assert later.value.code == 500
        assert store.current_rv() == 1

    run(tmp_path / "db", body)
