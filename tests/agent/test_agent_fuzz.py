"""Fuzzing the agent's inputs: its state files and the options of ``numaplane agent`` and
``numaplane pods``. The only outcomes allowed are success, or a deliberate error that is one
line naming the input (exit status 2 from the CLI); never a traceback.

State files are fuzzed in process (an ``Agent`` opening a state directory, not started: no
process is adopted or stopped). The CLI runs in process too: the agent's state directory is
locked by the test, so that a start every option let through ends in the lock's refusal.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from numaplane.agent.agent import Agent, AgentOptions
from numaplane.agent.lock import lock_state_dir
from numaplane.cli.main import main
from numaplane.errors import NumaplaneError
from numaplane.topology.discover import load_machine
from tests.agent.agent_fixtures import (
    SMALL_MACHINE,
    MemoryDriver,
    kubelet_config,
    pod_manifest,
    wait_for,
    write_config,
    write_pod,
)

#: The state files the agent reads, besides the kubelet checkpoints.
AGENT_FILES = (
    "numaplane_pods.json",
    "numaplane_processes.json",
    "numaplane_rejections.json",
    "numaplane_admissions.json",
)

FUZZ = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _options(state: Path, manifests: Path) -> AgentOptions:
    return AgentOptions(
        machine=load_machine(SMALL_MACHINE),
        config=kubelet_config(),
        manifest_dir=manifests,
        state_dir=state,
        device_plugins=False,
    )


@pytest.fixture(scope="module")
def baseline() -> Iterator[Path]:
    """A state directory of an agent that admitted a finished pod and a refused one."""
    with tempfile.TemporaryDirectory(prefix="np-fuzz-") as tmp:
        root = Path(tmp)
        manifests, state = root / "pods", root / "state"
        manifests.mkdir()
        agent = Agent(_options(state, manifests), driver=MemoryDriver())
        agent.start()
        write_pod(manifests, pod_manifest("done", ("true",), cpu="1", restart_policy="Never"))
        write_pod(manifests, pod_manifest("wide", cpu="3"))
        agent.sync()

        def finished() -> bool:
            status = agent.statuses()
            return bool(status) and all(
                s is not None and s.phase == "Succeeded" for s in status.values()
            )

        wait_for("the pod to finish", finished)
        agent.close()
        for name in AGENT_FILES:
            assert (state / name).is_file(), name
        yield root


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "pods",
                    "processes",
                    "restartCounts",
                    "rejections",
                    "admissions",
                    "podUID",
                    "container",
                    "pid",
                    "startTime",
                    "restartCount",
                    "admission",
                    "containers",
                    "name",
                    "numa_affinity",
                    "numa",
                    "preferred",
                    "metadata",
                    "spec",
                    "uid",
                ]
            )
            | st.text(max_size=5),
            children,
            max_size=4,
        )
    ),
    max_leaves=12,
)


def _mutate(doc: Any, path: list[int], value: Any) -> Any:
    """``doc`` with the node that ``path`` picks (indices into each level) replaced."""
    if not path or not isinstance(doc, (dict, list)) or not doc:
        return value
    if isinstance(doc, list):
        index = path[0] % len(doc)
        return [_mutate(v, path[1:], value) if i == index else v for i, v in enumerate(doc)]
    key = sorted(doc)[path[0] % len(doc)]
    return {k: _mutate(v, path[1:], value) if k == key else v for k, v in doc.items()}


@st.composite
def state_file(draw: st.DrawFn, baseline: Path) -> tuple[str, bytes]:
    """One agent state file's name and a content: a valid one mutated, any JSON, or bytes."""
    name = draw(st.sampled_from(AGENT_FILES))
    kind = draw(st.sampled_from(["mutated", "json", "bytes"]))
    if kind == "bytes":
        return name, draw(st.binary(max_size=64))
    if kind == "json":
        return name, json.dumps(draw(JSON)).encode()
    doc = json.loads((baseline / "state" / name).read_text())
    path = draw(st.lists(st.integers(0, 50), max_size=6))
    return name, json.dumps(_mutate(doc, path, draw(JSON))).encode()


@FUZZ
@given(data=st.data())
def test_state_files_open_or_refuse_in_one_line(baseline: Path, data: st.DataObject) -> None:
    name, content = data.draw(state_file(baseline))
    with tempfile.TemporaryDirectory(prefix="np-fuzz-") as tmp:
        state = Path(tmp) / "state"
        shutil.copytree(baseline / "state", state)
        (state / name).write_bytes(content)
        try:
            agent = Agent(_options(state, baseline / "pods"), driver=MemoryDriver())
        except NumaplaneError as err:
            message = str(err)
            assert "\n" not in message
            # A checkpoint rebuilt from the mutated pods may be the one refused.
            assert str(state) in message, message
            return
        agent.close()


def _run_cli(argv: list[str]) -> tuple[int, str]:
    """``numaplane ARGV`` in process: exit status and stderr."""
    err, out = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            main(argv)
        except SystemExit as exited:
            code = exited.code if isinstance(exited.code, int) else 1
    return code, err.getvalue()


def _assert_one_error_line(code: int, stderr: str) -> None:
    assert "Traceback" not in stderr
    assert code == 2, stderr
    errors = [line for line in stderr.splitlines() if line.lower().startswith("error:")]
    assert len(errors) == 1, stderr
    assert len(errors[0]) > len("error: "), stderr


NUMBER_TEXT = st.one_of(
    st.sampled_from(["nan", "inf", "-inf", "1e400", "0", "-1", "0.05", "1", "3600.5", "", "x"]),
    st.floats().map(str),
)
LISTEN = st.one_of(
    st.text(max_size=20),
    st.builds(
        "{}:{}".format,
        st.sampled_from(["127.0.0.1", "[::1]", "", "256.1.1.1", "a b", "\x00", "[", "é"]),
        st.sampled_from(["0", "1", "65535", "65536", "-1", "99999999999", "", "x"]),
    ),
)


@pytest.fixture(scope="module")
def cli_dirs() -> Iterator[Path]:
    """A manifest directory, a kubelet configuration and a state directory held locked."""
    with tempfile.TemporaryDirectory(prefix="np-fuzz-cli-") as tmp:
        root = Path(tmp)
        (root / "pods").mkdir()
        (root / "state").mkdir()
        write_config(root / "kubelet.yaml")
        (root / "bad.yaml").write_text("cpuManagerPolicy: [\n")
        lock = lock_state_dir(root / "state")
        try:
            yield root
        finally:
            lock.release()


@FUZZ
@given(
    poll=NUMBER_TEXT,
    listen=LISTEN,
    config=st.sampled_from(["kubelet.yaml", "bad.yaml", "missing.yaml", "pods"]),
    manifests=st.sampled_from(["pods", "missing", "kubelet.yaml"]),
    machine=st.sampled_from(["/", SMALL_MACHINE, "nope", "sockets=0", "sockets=x"]),
    extra=st.lists(st.sampled_from(["--reset-state", "--verbose", "--once"]), max_size=2),
)
def test_agent_options_run_or_refuse_in_one_line(
    cli_dirs: Path,
    poll: str,
    listen: str,
    config: str,
    manifests: str,
    machine: str,
    extra: list[str],
) -> None:
    argv = [
        "agent",
        "--config",
        str(cli_dirs / config),
        "--pod-manifest-path",
        str(cli_dirs / manifests),
        "--state-dir",
        str(cli_dirs / "state"),
        "--machine",
        machine,
        "--cgroup-root",
        str(cli_dirs / "no-cgroups"),
        "--poll-interval",
        poll,
        "--listen",
        listen,
        *extra,
    ]
    _assert_one_error_line(*_run_cli(argv))


@FUZZ
@given(listen=LISTEN, output=st.sampled_from(["table", "json", "yaml", ""]))
def test_pods_options_answer_or_refuse_in_one_line(listen: str, output: str) -> None:
    code, stderr = _run_cli(["pods", "--listen", listen, "-o", output])
    # Nothing listens on the ports drawn: every run is refused.
    _assert_one_error_line(code, stderr)
