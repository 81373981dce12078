"""``bench/multikueue.py``: the same seed makes the same scenario, every manager queue
dispatches to its own clusters, and a tiny run (2 workers, 5 Jobs) admits every Job exactly
once through a worker and requeues the lost worker's Workloads only after
``workerLostTimeout``."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[3]
BENCH = ROOT / "bench" / "multikueue.py"


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_multikueue", BENCH)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


@dataclass(frozen=True)
class Case:
    name: str
    workers: int
    per_config: int
    want_width: int


CASES = [
    Case("three clusters per config", 10, 3, 3),
    Case("fewer workers than the width", 2, 3, 2),
    Case("one cluster per config", 4, 1, 1),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_configs_rotate_over_the_workers(case: Case) -> None:
    bench = _bench()
    scenario = bench.generate(case.workers, 50, case.per_config, seed=7)
    assert len(scenario.configs) == case.workers
    for index, clusters in enumerate(scenario.configs):
        assert len(set(clusters)) == case.want_width
        assert clusters[0] == scenario.workers[index]
    # Every worker serves as many queues as a config is wide (its LocalQueues).
    for worker in scenario.workers:
        assert len(scenario.queues_of(worker)) == case.want_width


def test_the_same_seed_makes_the_same_scenario() -> None:
    bench = _bench()
    first = bench.generate(5, 200, 3, seed=3)
    assert bench.generate(5, 200, 3, seed=3) == first
    assert bench.generate(5, 200, 3, seed=4).jobs != first.jobs


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_a_tiny_run_admits_each_job_once_and_requeues_after_the_timeout() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    argv = [sys.executable, str(BENCH), "--workers", "2", "--jobs", "5"]
    argv += ["--worker-lost-timeout", "2", "--gc-interval", "2", "--quiet-s", "30"]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=170, check=True)
    figures = dict(item.split("=", 1) for item in done.stdout.strip().splitlines()[-1].split())
    assert figures["admitted"] == "5"
    assert figures["duplicates"] == "0"
    assert figures["lost"] == "0"
    # The dispatch's CPU time is read from each process (all three worked).
    for process in ("apiserver", "manager", "workers"):
        assert float(figures[f"cpu_ms_per_dispatch_{process}"]) > 0
    assert figures["duplicates_after"] == "0"
    # Not before workerLostTimeout: a requeue at once would mean the loss was not waited out.
    assert float(figures["lost_worker_first_requeue_s"]) >= 2.0
