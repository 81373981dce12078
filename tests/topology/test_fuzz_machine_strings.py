"""Fuzzing ``--machine`` strings: a machine, or one line naming the input; never more.

Synthetic shapes are drawn from the real keys with values that are sensible, absurd (a million
sockets, 5000-digit numbers), malformed (signs, Unicode digits, sizes with odd suffixes) or
contradictory; presets and random text are mixed in. In-process, every outcome is a ``Machine``
or a ``MachineInputError`` whose one line starts with the input. The limit checks come before
anything is built (traced allocations stay small however large the shape), and a handful of
cases run through the CLI in a child process with its address space capped.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from numaplane.topology.discover import load_machine
from numaplane.topology.errors import MachineInputError
from numaplane.topology.model import Machine
from numaplane.topology.presets import PRESETS
from numaplane.topology.synthetic import MAX_CPUS

REPO = Path(__file__).resolve().parents[2]

_COUNT_KEYS = (
    "sockets",
    "numa-per-socket",
    "sockets-per-numa",
    "cores-per-numa",
    "cores-per-socket",
    "threads-per-core",
    "cores-per-uncore",
    "hugepages-2Mi-per-numa",
    "hugepages-1Gi-per-numa",
    "gpus-per-numa",
    "memory-only-numa",
)

_numbers = st.one_of(
    st.integers(0, 8).map(str),
    st.integers(0, 10**12).map(str),
    st.sampled_from(["1000000", "99999999", "100000000", "65536", "4096", "9" * 30]),
    st.just("9" * 5000),
    st.sampled_from(["-1", "+2", "1.5", "0x10", "²", "٣", "1e3", "", " 4 ", "4 4"]),
)
_sizes = st.one_of(
    st.tuples(
        st.integers(0, 10**20), st.sampled_from(["", "Ki", "Mi", "Gi", "Ti", "Pi", "k", "M"])
    ).map(lambda t: f"{t[0]}{t[1]}"),
    st.sampled_from(["lots", "1Ei", "-1Gi", "1.5Gi", "Gi"]),
)
_cpu_lists = st.one_of(
    st.lists(st.integers(0, 40), max_size=4).map(lambda ids: ",".join(map(str, ids))),
    st.sampled_from(["0-999999999", "5-1", "0-3,,4", "a", "65535", "0-" + "9" * 40]),
)


def _item(key: str, value: str) -> str:
    return f"{key}={value}"


_items = st.one_of(
    st.builds(_item, st.sampled_from(_COUNT_KEYS), _numbers),
    st.builds(_item, st.just("memory-per-numa"), _sizes),
    st.builds(_item, st.just("offline"), _cpu_lists),
    st.builds(
        _item, st.just("numbering"), st.sampled_from(["linear", "interleaved", "adjacent", "x"])
    ),
    st.builds(_item, st.text(max_size=8), st.text(max_size=8)),
)
_shapes = st.lists(_items, min_size=1, max_size=7).map(",".join)
_specs = st.one_of(
    _shapes,
    st.sampled_from(sorted(PRESETS)),
    # Random text: never a path that exists, and never empty (that names this host).
    st.text(min_size=1, max_size=40).filter(lambda t: t.strip() and not os.path.exists(t.strip())),
)


def _outcome(spec: str) -> Machine | MachineInputError:
    try:
        return load_machine(spec)
    except MachineInputError as error:
        return error


def _check_outcome(spec: str) -> None:
    outcome = _outcome(spec)
    if isinstance(outcome, Machine):
        assert len(outcome.cpus) <= MAX_CPUS
        assert outcome.online_cpus
        return
    message = str(outcome)
    assert "\n" not in message
    assert outcome.source.strip(), message
    # The line names the input: the text given, or (for a shape) its canonical form.
    assert message.startswith((spec.strip() + ": ", outcome.source + ": ")), message


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(spec=_specs)
@example(spec="sockets=1000000")
@example(spec="memory-only-numa=99999999")
@example(spec="cores-per-numa=100000000")
@example(spec="cores-per-socket=4,cores-per-numa=3,numa-per-socket=2")
@example(spec="memory-per-numa=" + "9" * 5000)
@example(spec="offline=0-999999999")
@example(spec="~=\x00")
def test_machine_strings_give_a_machine_or_one_line(spec: str) -> None:
    _check_outcome(spec)


@pytest.mark.parametrize(
    "spec",
    [
        "sockets=1000000",
        "memory-only-numa=99999999",
        "cores-per-numa=100000000",
        "sockets=65536,threads-per-core=65536",
        "gpus-per-numa=99999999",
        "offline=0-999999999",
        "sockets=1024,numa-per-socket=1024,cores-per-numa=1024,memory-only-numa=1000000",
    ],
)
def test_absurd_shapes_fail_before_building(spec: str) -> None:
    """The limit is checked on the counts: almost nothing is allocated before the error."""
    tracemalloc.start()
    try:
        with pytest.raises(MachineInputError, match="limit"):
            load_machine(spec)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, f"{peak} bytes allocated before the limit was reported"


def _cap_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (512 << 20, 512 << 20))


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("sockets=1000000", "4000000 CPUs exceed the limit of 65536"),
        ("memory-only-numa=99999999", "NUMA nodes exceed the limit of 1024"),
        ("cores-per-numa=100000000", "CPUs exceed the limit of 65536"),
        (
            "cores-per-socket=4,cores-per-numa=3,numa-per-socket=2",
            "cores-per-socket=4 conflicts with cores-per-numa=3 x numa-per-socket=2",
        ),
    ],
)
def test_cli_refuses_in_one_line_within_bounded_memory(spec: str, words: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "numaplane.cli.main", "machine", "show", "-m", spec],
        env={**os.environ, "PYTHONPATH": str(REPO / "src")},
        capture_output=True,
        text=True,
        preexec_fn=_cap_memory,
        timeout=120,
        check=False,
    )
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert spec in lines[0]
    assert words in lines[0]
