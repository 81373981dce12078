"""The supervisor behind ``numaplane up`` with real child processes: a dead child is reported in
one line and restarted, an input error (status 2) stops it, children stop in two waves (the
first started last), a child that ignores SIGTERM is killed after the grace period, and children
die with a supervisor that is SIGKILLed. Also ``numaplane up``'s command lines."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from numaplane.cli.supervisor import Component, Supervisor
from numaplane.cli.up import UpOptions, components, split_nodes

pytestmark = pytest.mark.timeout(120)

SLEEP = (sys.executable, "-c", "import time; time.sleep(600)")


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _until(condition: object, bound_s: float = 30.0) -> None:
    """Poll ``condition`` until true; fail after ``bound_s`` (a bound, not a timing claim)."""
    deadline = time.monotonic() + bound_s
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "condition never held"
        time.sleep(0.05)


def test_a_dead_child_is_reported_in_one_line_and_restarted(tmp_path: Path) -> None:
    said: list[str] = []
    supervisor = Supervisor(tmp_path / "logs", say=said.append)
    script = "import sys; print('out of cheese'); sys.exit(3)"
    flaky = supervisor.start(Component("flaky", (sys.executable, "-c", script)))
    try:
        assert flaky.process is not None
        flaky.process.wait()

        def restarted() -> bool:
            assert supervisor.check() is None
            return flaky.restarts == 1

        _until(restarted)
        assert said[0] == (
            f"flaky exited with status 3: out of cheese; restarting in 1s (log: "
            f"{tmp_path / 'logs' / 'flaky.log'})"
        )
        assert (tmp_path / "logs" / "flaky.log").read_text().count("out of cheese") >= 1
    finally:
        supervisor.stop_all()


def test_an_input_error_stops_instead_of_restarting(tmp_path: Path) -> None:
    said: list[str] = []
    supervisor = Supervisor(tmp_path / "logs", say=said.append)
    script = "import sys; print('error: -c: nope.yaml: no such file'); sys.exit(2)"
    child = supervisor.start(Component("agent", (sys.executable, "-c", script)))
    try:
        assert child.process is not None
        child.process.wait()
        assert supervisor.check() is child
        assert said == [
            f"agent exited with status 2: error: -c: nope.yaml: no such file (log: "
            f"{tmp_path / 'logs' / 'agent.log'})"
        ]
    finally:
        supervisor.stop_all()


def test_stop_all_stops_the_first_child_last_and_kills_the_stubborn(tmp_path: Path) -> None:
    order = tmp_path / "order"
    # Each child appends its name to ``order`` when it gets SIGTERM; "stubborn" ignores it.
    script = textwrap.dedent(
        """
        import signal, sys, time
        name = sys.argv[1]
        def term(*_):
            with open(sys.argv[2], "a") as f:
                f.write(name + "\\n")
            if name != "stubborn":
                sys.exit(0)
        signal.signal(signal.SIGTERM, term)
        print("ready", flush=True)
        while True:
            time.sleep(0.05)
        """
    )
    supervisor = Supervisor(tmp_path / "logs", say=lambda _: None, grace_s=1.0)
    names = ("apiserver", "controllers", "stubborn")
    children = [
        supervisor.start(Component(n, (sys.executable, "-c", script, n, str(order)))) for n in names
    ]
    _until(lambda: all("ready" in (tmp_path / "logs" / f"{n}.log").read_text() for n in names))
    supervisor.stop_all()
    lines = order.read_text().split()
    assert sorted(lines[:2]) == ["controllers", "stubborn"]
    assert lines[2:] == ["apiserver"]
    stubborn = children[2].process
    assert stubborn is not None
    assert stubborn.returncode == -signal.SIGKILL
    assert supervisor.children == []


def test_children_die_with_a_killed_supervisor(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    script = textwrap.dedent(
        f"""
        import time
        from pathlib import Path
        from numaplane.cli.supervisor import Component, Supervisor
        s = Supervisor(Path({str(tmp_path / "logs")!r}), say=print)
        child = s.start(Component("sleeper", {SLEEP!r}))
        Path({str(pid_file)!r}).write_text(str(child.process.pid))
        time.sleep(600)
        """
    )
    parent = subprocess.Popen([sys.executable, "-c", script], env=dict(os.environ))
    try:
        _until(lambda: pid_file.exists() and pid_file.read_text() != "")
        child_pid = int(pid_file.read_text())
        assert _alive(child_pid)
        parent.kill()
        parent.wait()
        _until(lambda: not _alive(child_pid))
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()


@dataclass(frozen=True)
class SplitCase:
    """Simulated nodes spread over agents."""

    name: str
    total: int
    machines: int
    expected: list[int]


SPLITS = (
    SplitCase("even", 9, 3, [3, 3, 3]),
    SplitCase("remainder to the first", 10, 3, [4, 3, 3]),
    SplitCase("fewer nodes than machines", 2, 3, [1, 1, 0]),
    SplitCase("one machine", 100, 1, [100]),
)


@pytest.mark.parametrize("case", SPLITS, ids=[c.name for c in SPLITS])
def test_split_nodes(case: SplitCase) -> None:
    assert split_nodes(case.total, case.machines) == case.expected


def test_components_of_a_simulated_cluster(tmp_path: Path) -> None:
    options = UpOptions(
        data_dir=tmp_path,
        kubelet_config=tmp_path / "k.yaml",
        node="none",
        simulated_nodes=5,
        machines=("dual-socket-ht", "dual-socket-multi-numa"),
        numa_filter=False,
    )
    found = {c.name: c.argv[3:] for c in components(options)}
    kubeconfig = str(tmp_path / "admin.kubeconfig")
    assert found == {
        "controllers": ("controllers", "--kubeconfig", kubeconfig, "--no-numa-filter"),
        "kueue": ("kueue", "--kubeconfig", kubeconfig),
        "sim0": (
            "agent", "--simulate", "--kubeconfig", kubeconfig, "--machine", "dual-socket-ht",
            "--nodes", "3", "--node-name", "sim0", "-c", str(tmp_path / "k.yaml"),
            "--state-dir", str(tmp_path / "sim0"),
        ),
        "sim1": (
            "agent", "--simulate", "--kubeconfig", kubeconfig, "--machine",
            "dual-socket-multi-numa", "--nodes", "2", "--node-name", "sim1", "-c",
            str(tmp_path / "k.yaml"), "--state-dir", str(tmp_path / "sim1"),
        ),
    }  # fmt: skip


def test_components_of_a_host_cluster(tmp_path: Path) -> None:
    options = UpOptions(data_dir=tmp_path, node="host", node_name="box")
    found = {c.name: c.argv[3:] for c in components(options)}
    assert found["agent"] == (
        "agent", "--kubeconfig", str(tmp_path / "admin.kubeconfig"), "--node-name", "box",
        "--state-dir", str(tmp_path / "agent"), "--listen", "127.0.0.1:0",
    )  # fmt: skip
    assert set(found) == {"controllers", "kueue", "agent"}
