"""Fuzzing the simulator's inputs through the CLI, in-process: traces and command-line numbers.

The only outcomes allowed are success, or exit status 2 with ONE ``error:`` line naming the
input (the trace file or the option); any other exception is a traceback a user would see and
fails the test as it is. Every case also runs under a memory ceiling (``tracemalloc``) and a
hang watchdog. The watchdog is not a timing assertion: its limit is far above any case's run
time, and it only turns a hang into a failure instead of a stuck suite.

Examples are derandomized (the same cases every run) and few: the suite must stay fast on a
2-core machine.

Over 400 lines: the fuzzed surfaces share one harness (watchdog, memory ceiling, outcome check).
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import math
import signal
import tempfile
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from numaplane.cli.main import main
from numaplane.sim.limits import MAX_EVENTS

MEMORY_LIMIT = 256 << 20
"""Peak Python allocations of one case (the largest valid cases here need a few MiB)."""
WATCHDOG_S = 120
"""Far above any case: only a hang reaches it."""


def _fuzz(examples: int) -> settings:
    return settings(
        max_examples=examples,
        derandomize=True,
        database=None,
        deadline=None,  # no timing assertions: the watchdog catches hangs
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


class HangError(Exception):
    """A case ran past the watchdog."""


@contextlib.contextmanager
def _bounded() -> Iterator[None]:
    def _alarm(signum: int, frame: FrameType | None) -> None:
        raise HangError(f"a case ran over {WATCHDOG_S}s")

    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(WATCHDOG_S)
    tracemalloc.start()
    try:
        yield
        _, peak = tracemalloc.get_traced_memory()
        assert peak < MEMORY_LIMIT, f"peak {peak >> 20} MiB"
    finally:
        tracemalloc.stop()
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with _bounded(), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(list(argv))
        except SystemExit as exit_:
            code = int(exit_.code or 0)
    return code, out.getvalue(), err.getvalue()


def _refuse_constant(name: str) -> None:
    raise AssertionError(f"{name} in the results JSON")


def _check(code: int, out: str, err: str, *names: str) -> None:
    """Success, or exit 2 with one ``error:`` line naming one of ``names``."""
    event(f"exit {code}")  # --hypothesis-show-statistics: how often each outcome is reached
    if code == 0:
        if out.startswith("{"):
            json.loads(out, parse_constant=_refuse_constant)  # strict JSON: no NaN/Infinity
        return
    assert code == 2, err
    assert out == ""
    assert err.startswith("error: "), err
    assert err.count("\n") == 1, err
    assert err.endswith("\n"), err
    assert any(f"error: {name}" in err for name in names), err


# -- traces ---------------------------------------------------------------------------------

MACHINE = "sockets=2,cores-per-numa=2,memory-per-numa=4Gi"
POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p"},
    "spec": {
        "containers": [
            {"name": "c", "resources": {"limits": {"cpu": "1", "memory": "1Gi", "x.io/d": "1"}}}
        ]
    },
}
VALID: dict[str, Any] = {
    "kind": "Trace",
    "name": "fuzz",
    "seed": 3,
    "nodes": [
        {
            "name": "w",
            "machine": MACHINE,
            "count": 2,
            "devices": {"x.io/d": [{"id": "d0", "numa": 0}, {"id": "d1", "numa": [0, 1]}]},
        }
    ],
    "configs": [
        "single-numa-node",
        {"name": "tuned", "config": {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0"}},
    ],
    "templates": {"small": POD},
    "events": [
        {"t": 0, "pod": {"template": "small", "name": "a"}, "lifetime": 5},
        {"t": 1, "pod": POD},
        {"t": 2, "type": "end", "pod": "p"},
        {"t": 3, "type": "device-health", "node": "w-0", "resource": "x.io/d", "device": "d0"},
        {"t": 4, "pod": {"template": "small", "name": "b"}},
    ],
}
KEYS = [
    "kind",
    "name",
    "seed",
    "nodes",
    "configs",
    "baseConfig",
    "templates",
    "events",
    "machine",
    "count",
    "devices",
    "deviceRules",
    "id",
    "numa",
    "healthy",
    "t",
    "type",
    "pod",
    "lifetime",
    "node",
    "resource",
    "device",
    "template",
    "namespace",
    "config",
    "path",
    "shorthand",
    "apiVersion",
    "metadata",
    "spec",
    "containers",
    "resources",
    "limits",
    "requests",
    "cpu",
]
STRINGS = (
    "",
    "x",
    "1",
    "-1",
    "1e400",
    "1e18",
    "nan",
    "[bold]x[/bold]",
    "$a$",
    "x.io/d",
    "w-0",
    "small",
    "single-numa-node",
    "best-effort+prefer-most-allocated-numa-node",
    "sockets=1",
    MACHINE,
    "Trace",
    "end",
    "device-health",
)
SPECIAL: tuple[Any, ...] = (
    None,
    True,
    False,
    0,
    1,
    -1,
    2,
    1000,
    1001,
    10**8,
    2**63,
    2**200,
    0.5,
    1e-300,
    1e300,
    math.inf,
    -math.inf,
    math.nan,
    [],
    {},
    [1, 2],
    {"a": 1},
    *STRINGS,
)
scalars = st.one_of(
    st.sampled_from(SPECIAL),
    st.integers(),
    st.floats(),
    st.text(max_size=12),
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=24,
)


@contextlib.contextmanager
def _scratch() -> Iterator[Path]:
    # Not pytest's tmp_path: a function-scoped fixture is shared by every hypothesis example.
    with tempfile.TemporaryDirectory(prefix="numaplane-fuzz-") as directory:
        yield Path(directory)


def _write(directory: Path, doc: object, jsonl: bool) -> Path:
    if jsonl and isinstance(doc, dict):
        header = {k: v for k, v in doc.items() if k != "events"}
        events = doc.get("events")
        lines = [header, *(events if isinstance(events, list) else [events])]
        path = directory / "t.jsonl"
        path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    else:
        path = directory / "t.yaml"
        path.write_text(yaml.safe_dump(doc))
    return path


def _simulate(path: Path, *extra: str) -> None:
    code, out, err = _cli("simulate", str(path), "-o", "json", "--deterministic", *extra)
    _check(code, out, err, str(path), "--")


@_fuzz(30)
@given(
    doc=st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=6), values), jsonl=st.booleans()
)
def test_random_documents(doc: dict[str, Any], jsonl: bool) -> None:
    with _scratch() as directory:
        _simulate(_write(directory, doc, jsonl))


@_fuzz(20)
@given(text=st.text(max_size=200))
def test_random_text(text: str) -> None:
    with _scratch() as directory:
        path = directory / "t.yaml"
        path.write_text(text)
        _simulate(path)


def _places(value: object, here: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield here
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _places(inner, (*here, key))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield from _places(inner, (*here, index))


def _mutate(doc: dict[str, Any], place: tuple[Any, ...], action: str, value: object) -> None:
    if not place:
        return
    parent: Any = doc
    for step in place[:-1]:
        parent = parent[step]
    last = place[-1]
    if action == "delete":
        del parent[last]
    elif action == "add key" and isinstance(parent[last], dict):
        parent[last][str(value)[:12]] = value
    elif action == "duplicate" and isinstance(parent, list):
        parent.append(copy.deepcopy(parent[last]))
    else:
        parent[last] = value


ARRIVALS = VALID | {"events": [e for e in VALID["events"][1:] if e.get("type") is None]}
"""An arrival-only variant, so ``--optimum`` builds its CP-SAT model from the mutations."""


@_fuzz(80)
@given(data=st.data(), jsonl=st.booleans(), optimum=st.booleans())
def test_mutated_valid_traces(data: st.DataObject, jsonl: bool, optimum: bool) -> None:
    doc = copy.deepcopy(ARRIVALS if optimum else VALID)
    for _ in range(data.draw(st.integers(1, 3), label="mutations")):
        places = list(_places(doc))
        place = data.draw(st.sampled_from(places), label="place")
        action = data.draw(st.sampled_from(("set", "set", "delete", "add key", "duplicate")))
        _mutate(doc, place, action, data.draw(values, label="value"))
    with _scratch() as directory:
        _simulate(_write(directory, doc, jsonl), *(("--optimum",) if optimum else ()))


def test_the_valid_trace_replays() -> None:
    # The mutations start from a trace that works, so they probe the edges, not one error.
    with _scratch() as directory:
        code, out, err = _cli("simulate", str(_write(directory, VALID, False)), "-o", "json")
    assert (code, err) == (0, "")
    assert [r["admitted"] for r in json.loads(out)["runs"]] == [3, 3]


# -- command-line numbers ---------------------------------------------------------------------

valid_numbers = st.one_of(
    st.floats(min_value=1e-3, max_value=1e4).map(repr), st.integers(1, 100).map(str)
)
numbers = st.one_of(
    valid_numbers,
    valid_numbers,
    valid_numbers,
    st.floats().map(repr),
    st.floats(min_value=1e-12, max_value=1e6).map(repr),
    st.integers(-5, 100).map(str),
    st.sampled_from(("nan", "inf", "-inf", "1e400", "1e-400", "0", "-0", "", " ", "1_0", "0x10")),
    st.text(max_size=8),
)
lifetimes = st.one_of(
    st.just("none"),
    st.builds("exp:{}".format, numbers),
    st.builds("fixed:{}".format, numbers),
    st.builds("uniform:{}-{}".format, numbers, numbers),
    st.text(max_size=12),
)
size_mixes = st.one_of(
    st.lists(st.builds("{}:{}".format, numbers, numbers), min_size=1, max_size=4).map(",".join),
    st.lists(
        st.builds("{}:{}".format, st.integers(1, 9), st.floats(1e-3, 1e3)), min_size=1, max_size=4
    ).map(",".join),
    st.text(max_size=12),
)
pods = st.one_of(
    st.integers(0, 20).map(str),
    st.integers(0, 20).map(str),
    st.integers(0, 20).map(str),
    st.integers(min_value=MAX_EVENTS + 1).map(str),
    st.integers(max_value=-1).map(str),
    numbers,
)


@_fuzz(60)
@given(
    mix=st.sampled_from(("telco", "ml", "batch")),
    seed=st.one_of(
        st.integers(0, 1000).map(str),
        st.integers(0, 1000).map(str),
        st.integers(-(2**64), 2**64).map(str),
        st.text(max_size=6),
    ),
    n=pods,
    rate=st.one_of(st.none(), st.none(), numbers),
    lifetime=st.one_of(st.none(), st.none(), lifetimes),
    sizes=st.one_of(st.none(), st.none(), size_mixes),
)
def test_generate_numbers(
    mix: str, seed: str, n: str, rate: str | None, lifetime: str | None, sizes: str | None
) -> None:
    with _scratch() as directory:
        path = directory / "t.yaml"
        argv = ["trace", "generate", "--mix", mix, "--seed", seed, "--pods", n, "-m", MACHINE]
        for option, value in (
            ("--arrival-rate", rate),
            ("--lifetime", lifetime),
            ("--size-mix", sizes),
        ):
            if value is not None:
                argv.append(f"{option}={value}")
        code, out, err = _cli(*argv, "-o", str(path))
        _check(code, out, err, "--")
        if code == 0:
            # What the generator writes, simulate replays: no trace it refuses.
            code, out, err = _cli("simulate", str(path), "-o", "json", "--deterministic")
            assert (code, err) == (0, ""), err


KEP = str(Path(__file__).resolve().parents[2] / "examples" / "traces" / "kep6007.yaml")
shorthands = st.builds(
    "{}{}{}".format,
    st.sampled_from(("none", "best-effort", "restricted", "single-numa-node", "x", "")),
    st.sampled_from(("", "/pod", "/container", "/x")),
    st.lists(
        st.sampled_from(
            (
                "+prefer-most-allocated-numa-node",
                "+prefer-closest-numa-nodes",
                "+max-allowable-numa-nodes=8",
                "+max-allowable-numa-nodes=nan",
                "+cpu:full-pcpus-only",
                "+cpu:nope",
                "+",
                "+x=[bold]y[/bold]",
            )
        ),
        max_size=2,
    ).map("".join),
)


@_fuzz(20)
@given(
    compare=st.lists(shorthands, max_size=3),
    limit=st.one_of(
        st.none(), numbers.filter(lambda text: not _solvable_but_long(text)), st.just("1e-9")
    ),
    optimum=st.booleans(),
    selection=st.sampled_from(("first-fit", "numa-aware", "x")),
)
def test_simulate_options(
    compare: list[str], limit: str | None, optimum: bool, selection: str
) -> None:
    argv = ["simulate", KEP, "-o", "json", "--deterministic", f"--node-selection={selection}"]
    argv += [f"--compare={value}" for value in compare]
    if limit is not None:
        argv.append(f"--optimum-time-limit={limit}")
    if optimum:
        argv.append("--optimum")
    code, out, err = _cli(*argv)
    if code == 0 and optimum and err:
        assert all(line.startswith("note: ") for line in err.splitlines()), err
        err = ""
    elif code == 2:
        _check(code, out, err, "--", KEP)
        return
    assert code == 0, err
    _check(code, out, err)


def _solvable_but_long(text: str) -> bool:
    # The KEP trace solves in milliseconds, whatever the limit; still keep limits small so a
    # regression in the solver cannot make a case wait for a drawn limit of hours.
    try:
        value = float(text)
    except ValueError:
        return False
    return math.isfinite(value) and value > 60
