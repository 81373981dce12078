"""SIGKILL at random moments during concurrent writes: every acknowledged write survives,
resourceVersions stay monotonic, the database stays intact.

A child process writes through :class:`ClusterStore` (creates, updates and deletes from 16
concurrent writers, with compaction running every 20 ms) and prints each write once it is
acknowledged; the test kills it at a random moment, reopens the store and checks every printed
write against it, then starts the next child on the same database.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from numaplane.apiserver.storage import ClusterStore, ObjectKey

KILLS = 20

CHILD = r"""
import asyncio, sys
from pathlib import Path
from numaplane.apiserver.storage import ClusterStore, ObjectKey

async def main(path, round_):
    store = await ClusterStore.open(Path(path), compact_interval_s=0.02, keep_revisions=30)
    print("ready", store.current_rv(), flush=True)

    async def writer(w):
        counter = ObjectKey("configmaps", "ns", f"counter-{w}")
        i = 0
        while True:
            i += 1
            k = ObjectKey("configmaps", "ns", f"r{round_}-w{w}-{i}")
            obj = await store.create(k, {"metadata": {"name": k.name, "namespace": "ns"}})
            print("C", k.name, obj["metadata"]["resourceVersion"], flush=True)
            if i % 3 == 0:
                obj = await store.delete(k, None)
                print("D", k.name, obj["metadata"]["resourceVersion"], flush=True)
            body = {"metadata": {"name": counter.name, "namespace": "ns"},
                    "data": {"round": str(round_), "i": str(i)}}
            if store.get_latest(counter) is None:
                obj = await store.create(counter, body)
            else:
                obj = await store.update(counter, body, None)
            print("U", counter.name, round_, i, obj["metadata"]["resourceVersion"], flush=True)

    await asyncio.gather(*(writer(w) for w in range(16)))

asyncio.run(main(sys.argv[1], int(sys.argv[2])))
"""


@dataclass
class Acknowledged:
    """What the children printed as acknowledged, over all rounds."""

    created: dict[str, int] = field(default_factory=dict)
    deleted: set[str] = field(default_factory=set)
    counters: dict[str, tuple[int, int]] = field(default_factory=dict)
    max_rv: int = 0


def run_child(path: Path, round_: int, rng: random.Random) -> list[str]:
    """Start a writer child, kill it with SIGKILL at a random moment, return its complete
    output lines."""
    env = dict(os.environ)
    src = str(Path(__file__).resolve().parents[2] / "src")
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path), str(round_)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert child.stdout is not None
    lines: list[str] = []
    ready = threading.Event()

    def read() -> None:
        assert child.stdout is not None
        for line in child.stdout:
            if line.endswith("\n"):  # a line cut by the kill was never fully acknowledged
                lines.append(line)
            ready.set()
        ready.set()

    reader = threading.Thread(target=read)
    reader.start()
    try:
        ready.wait(60)
        time.sleep(rng.uniform(0.0, 0.25))
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
        reader.join()
        child.stdout.close()
    assert lines, "the writer child printed nothing"
    assert lines[0].startswith("ready"), lines[:3]
    return lines[1:]


def check(path: Path, acked: Acknowledged) -> None:
    async def body() -> None:
        store = await ClusterStore.open(path)
        try:
            assert store.current_rv() >= acked.max_rv
            items, _ = store.list("configmaps", "ns")
            rvs = [int(o["metadata"]["resourceVersion"]) for o in items]
            assert max(rvs, default=0) <= store.current_rv()
            for name, rv in acked.created.items():
                stored = store.get(ObjectKey("configmaps", "ns", name))
                if name in acked.deleted:
                    assert stored is None, name
                elif int(name.rsplit("-", 1)[1]) % 3 == 0 and stored is None:
                    pass  # its deletion was in flight at the kill: it may have become durable
                else:
                    assert stored is not None, name
                    assert stored["metadata"]["resourceVersion"] == str(rv)
            for name, (round_, i) in acked.counters.items():
                stored = store.get(ObjectKey("configmaps", "ns", name))
                assert stored is not None, name
                assert (int(stored["data"]["round"]), int(stored["data"]["i"])) >= (round_, i)
        finally:
            await store.close()

    asyncio.run(body())
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_sigkill_loses_no_acknowledged_write(tmp_path: Path) -> None:
    path = tmp_path / "db"
    rng = random.Random(13)
    acked = Acknowledged()
    total = 0
    for round_ in range(KILLS):
        previous_max = acked.max_rv
        for line in run_child(path, round_, rng):
            kind, name, *rest = line.split()
            rv = int(rest[-1])
            # Every write of this round comes after every write acknowledged before the kill.
            assert rv > previous_max, line
            acked.max_rv = max(acked.max_rv, rv)
            total += 1
            if kind == "C":
                acked.created[name] = rv
            elif kind == "D":
                acked.deleted.add(name)
            else:
                acked.counters[name] = (int(rest[0]), int(rest[1]))
        check(path, acked)
    assert total > KILLS  # the kills landed while writes were flowing
