"""Fingerprint every admission decision of a fixed set of replays, to prove a speed-up changed none.

    python bench/decisions.py                             # fingerprint, print one digest
    python bench/decisions.py --save /tmp/before.json     # before a change
    python bench/decisions.py --check /tmp/before.json    # after it: exit 1 on any difference

Each case replays a generated trace (telco, ml or batch mix; lifetimes, so pods come and go)
under one configuration and hashes, per arrival, the whole admission as ``numaplane admit -o
json --explain`` renders it: verdict, reason and message, every container's CPUs, memory blocks
and devices, and the explanation (every provider's hints and the merged hint). ``--check``
names the first differing case and arrival. A bare run prints, after one line per case, one
``key=value`` line: how many cases and admissions were fingerprinted and a digest of them all
(equal digests mean equal decisions everywhere).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from numaplane.node.admission import Admission
from numaplane.sim import engine
from numaplane.sim.configs import resolve_compare
from numaplane.sim.generate import Lifetime, generate
from numaplane.sim.trace import trace_from_dict
from numaplane.topology.discover import load_machine

TOPOLOGIES = Path(__file__).resolve().parents[2] / "shared" / "topologies" / "linux"
EIGHT_NUMA = str(TOPOLOGIES / "16amd64-8n2c.tar.bz2")
SIXTY_FOUR_NUMA = str(TOPOLOGIES / "256ia64-64n2s2c.tar.bz2")
FOUR_NUMA = (
    "sockets=2,numa-per-socket=2,cores-per-numa=8,threads-per-core=2,memory-per-numa=64Gi,"
    "hugepages-1Gi-per-numa=16"
)

# (mix, machine, pods, configurations)
CASES: tuple[tuple[str, str, int, tuple[str, ...]], ...] = (
    (
        "telco",
        FOUR_NUMA,
        1500,
        (
            "single-numa-node",
            "single-numa-node+prefer-most-allocated-numa-node",
            "single-numa-node/pod",
            "restricted",
            "best-effort",
            "best-effort+prefer-closest-numa-nodes",
            "none",
            "restricted+cpu:full-pcpus-only",
            "best-effort+cpu:distribute-cpus-across-numa",
            "restricted+cpu:align-by-socket",
        ),
    ),
    ("ml", "dual-socket-gpu", 600, ("single-numa-node", "restricted/pod", "best-effort")),
    (
        "batch",
        EIGHT_NUMA,
        800,
        ("single-numa-node", "best-effort/pod", "restricted+cpu:distribute-cpus-across-cores"),
    ),
    ("telco", "dual-socket-multi-numa", 800, ("best-effort", "single-numa-node")),
    (
        "telco",
        SIXTY_FOUR_NUMA,
        400,
        (
            "single-numa-node+max-allowable-numa-nodes=64",
            "best-effort+max-allowable-numa-nodes=64",
            "restricted/pod+max-allowable-numa-nodes=64",
        ),
    ),
)


@contextmanager
def recording(sink: Callable[[Admission], None]) -> Iterator[None]:
    """Hand every admission the simulator makes to ``sink``."""
    original = engine._Run._admit

    def admit(self: engine._Run, index: int, pod: Any) -> Admission:
        admission = original(self, index, pod)
        sink(admission)
        return admission

    engine._Run._admit = admit  # type: ignore[method-assign]
    try:
        yield
    finally:
        engine._Run._admit = original  # type: ignore[method-assign]


def fingerprints() -> dict[str, list[str]]:
    """Per case name, one short hash per admission, in replay order."""
    out: dict[str, list[str]] = {}
    for mix, machine_spec, pods, configs in CASES:
        machine = load_machine(machine_spec)
        doc = generate(
            mix,
            seed=7,
            pods=pods,
            machine_spec=machine_spec,
            machine=machine,
            arrival_rate=1.0,
            lifetime=Lifetime.parse("exp:30"),
        )
        trace = trace_from_dict(doc, "decisions")
        for config in resolve_compare(configs, trace.configs):
            hashes: list[str] = []

            def sink(admission: Admission, hashes: list[str] = hashes) -> None:
                text = json.dumps(admission.to_json(explain=True), sort_keys=True)
                hashes.append(hashlib.sha256(text.encode()).hexdigest()[:16])

            start = time.perf_counter()
            with recording(sink):
                engine.run_config(trace, config)
            name = f"{mix}@{Path(machine_spec.split(',')[0]).name}:{config.name}"
            out[name] = hashes
            print(f"{name:80s} {len(hashes):5d} admissions {time.perf_counter() - start:6.1f}s")
    return out


def summary_line(current: dict[str, list[str]]) -> str:
    """``cases=<n> admissions=<n> digest=<hex>``: one digest over every case and fingerprint."""
    digest = hashlib.sha256(json.dumps(current, sort_keys=True).encode()).hexdigest()[:16]
    admissions = sum(map(len, current.values()))
    return f"cases={len(current)} admissions={admissions} digest={digest}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--save", type=Path, help="write the fingerprints to this file")
    group.add_argument("--check", type=Path, help="compare with fingerprints saved earlier")
    args = parser.parse_args()
    current = fingerprints()
    if args.save is None and args.check is None:
        print(summary_line(current))
        return 0
    if args.save is not None:
        args.save.write_text(json.dumps(current, indent=1))
        print(f"saved {sum(map(len, current.values()))} fingerprints to {args.save}")
        return 0
    assert args.check is not None
    saved: dict[str, list[str]] = json.loads(args.check.read_text())
    differing = 0
    for name, hashes in saved.items():
        now = current.get(name)
        if now is None:
            print(f"MISSING {name}")
            differing += 1
            continue
        for index, (was, is_) in enumerate(zip(hashes, now, strict=False)):
            if was != is_:
                print(f"DIFFERENT {name}: first at admission {index}")
                differing += 1
                break
        else:
            if len(hashes) != len(now):
                print(f"DIFFERENT {name}: {len(hashes)} admissions before, {len(now)} now")
                differing += 1
    print("identical" if not differing else f"{differing} case(s) differ")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
