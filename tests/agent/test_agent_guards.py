"""What the agent refuses before it runs anything: a machine this host lacks, a state directory
another agent holds, state files of the wrong shape. Each is one ``error:`` line naming the
input, exit status 2; and a start failure the agent cannot prevent shows its cause in /pods."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from numaplane.agent.affinity import AffinityDriver
from numaplane.agent.agent import Agent, AgentOptions
from numaplane.agent.host import HostMismatchError, check_machine_is_host, host_online_cpus
from numaplane.agent.lock import LOCK_FILE, StateDirLockedError
from numaplane.agent.process import StartError, spawn
from numaplane.agent.startup import AgentStateError
from numaplane.agent.views import pods_view
from numaplane.cpuset import CPUSet
from numaplane.node.statedir import StateDirError, locked
from numaplane.topology.discover import load_machine
from tests.agent.agent_fixtures import (
    AgentFactory,
    get_text,
    kubelet_config,
    pod_manifest,
    pod_named,
    wait_for,
    write_config,
    write_pod,
)


def state_dir_of(state: Path) -> Path:
    """``state``, created: the directory lock needs the directory to exist."""
    state.mkdir(parents=True, exist_ok=True)
    return state


def _online() -> CPUSet:
    found = host_online_cpus()
    assert found is not None, "this host does not list its online CPUs"
    return found


def _shape(cpus: int) -> str:
    return f"sockets=1,numa-per-socket=1,cores-per-numa={cpus},threads-per-core=1"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _agent_args(tmp_path: Path, *extra: str, machine: str | None = None) -> list[str]:
    """``numaplane agent`` on ``tmp_path``'s directories, pinning with sched_setaffinity only
    (an empty ``--cgroup-root``), on this host's own shape unless told otherwise."""
    manifests = tmp_path / "pods"
    manifests.mkdir(exist_ok=True)
    (tmp_path / "no-cgroups").mkdir(exist_ok=True)
    config = write_config(tmp_path / "kubelet.yaml")
    return [
        sys.executable,
        "-m",
        "numaplane.cli.main",
        "agent",
        "--config",
        str(config),
        "--pod-manifest-path",
        str(manifests),
        "--state-dir",
        str(tmp_path / "state"),
        "--machine",
        machine or "/",
        "--cgroup-root",
        str(tmp_path / "no-cgroups"),
        *extra,
    ]


def _run(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, timeout=120, check=False)


def _error_lines(stderr: str) -> list[str]:
    """The lines of stderr that are not the affinity fallback's warning."""
    return [line for line in stderr.strip().splitlines() if not line.startswith("warning:")]


# -- the machine must be this host ----------------------------------------------------------


@dataclass(frozen=True)
class HostCase:
    """A machine's CPU count against the host's online CPUs; the CPUs it lacks, if any."""

    name: str
    cpus: int
    online: str | None
    missing: str | None


HOST_CASES = [
    HostCase("same CPUs", 4, "0-3", None),
    HostCase("host has more", 2, "0-7", None),
    HostCase("host has fewer", 8, "0-1", "2-7"),
    HostCase("a hole in the host's online CPUs", 4, "0-1,3", "2"),
    HostCase("unknown online CPUs pass", 64, None, None),
]


@pytest.mark.parametrize("case", HOST_CASES, ids=[c.name for c in HOST_CASES])
def test_machine_must_be_this_host(case: HostCase) -> None:
    machine = load_machine(_shape(case.cpus))
    online = None if case.online is None else CPUSet.parse(case.online)
    if case.missing is None:
        check_machine_is_host(machine, online)
        return
    with pytest.raises(HostMismatchError) as caught:
        check_machine_is_host(machine, online)
    message = str(caught.value)
    assert message.startswith("--machine synthetic:")
    assert f"CPUs {case.missing} of this machine are not online" in message
    assert "\n" not in message


def test_agent_refuses_a_machine_bigger_than_this_host(tmp_path: Path) -> None:
    online = _online()
    result = _run(_agent_args(tmp_path, "--once", machine=_shape(max(online) + 3)))
    assert result.returncode == 2, result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("error: --machine synthetic:")
    missing = CPUSet(range(max(online) + 1, max(online) + 3))
    assert f"CPUs {missing} of this machine are not online" in line
    # Refused before anything was touched: no state directory was made.
    assert not (tmp_path / "state").exists()


def test_a_start_failure_shows_its_cause_in_the_pod(tmp_path: Path) -> None:
    """A pod pinned to a CPU the host lacks (the check is the CLI's; a driver handed in is
    trusted) fails to start: /pods says why, not only the container log."""
    online = _online()
    manifests = tmp_path / "pods"
    manifests.mkdir()
    size = max(online) + 3
    options = AgentOptions(
        machine=load_machine(_shape(size)),
        # Every host CPU reserved: exclusive CPUs come from those the host lacks.
        config=kubelet_config(reservedSystemCPUs=f"0-{max(online)}"),
        manifest_dir=manifests,
        state_dir=tmp_path / "state",
        device_plugins=False,
    )
    agent = Agent(options, driver=AffinityDriver())
    agent.start()
    try:
        write_pod(manifests, pod_manifest("pinned", cpu="1"))
        agent.sync()

        def cause() -> str | None:
            pod = pod_named(pods_view(agent), "pinned")
            return None if pod is None else pod["containers"][0]["message"]

        message = wait_for("the start failure", cause)
        assert "cannot confine the process" in message
        assert "cannot pin" in message
        assert "preexec_fn" not in message
    finally:
        agent.stop_all_pods()
        agent.close()


def test_spawn_reports_why_the_child_could_not_be_confined(tmp_path: Path) -> None:
    def join() -> None:
        raise OSError(22, "no such CPU here")

    with pytest.raises(StartError) as caught:
        spawn(["true"], {"PATH": os.defpath}, None, tmp_path / "c.log", join)
    assert str(caught.value) == "cannot confine the process: [Errno 22] no such CPU here"
    assert "no such CPU here" in (tmp_path / "c.log").read_text()


# -- one agent per state directory ----------------------------------------------------------


def test_a_second_agent_on_the_state_dir_is_refused_until_the_first_closes(
    dirs: tuple[Path, Path], make_agent: AgentFactory
) -> None:
    _, state = dirs
    first = make_agent()
    with pytest.raises(StateDirLockedError) as caught:
        make_agent()
    message = str(caught.value)
    assert message.startswith(f"{state / LOCK_FILE}: another agent (pid {os.getpid()}) holds")
    assert "\n" not in message
    first.close()
    make_agent().close()


def test_the_agent_and_admit_release_exclude_each_other(
    dirs: tuple[Path, Path], make_agent: AgentFactory
) -> None:
    _, state = dirs
    with (
        locked(state_dir_of(state)),
        pytest.raises(StateDirLockedError, match="admit or release"),
    ):
        make_agent()
    agent = make_agent()
    try:
        with (
            pytest.raises(StateDirError, match="in use by another numaplane process"),
            locked(state),
        ):
            pass
    finally:
        agent.close()
    with locked(state):
        pass


def test_a_refused_start_leaves_the_lock_free(
    dirs: tuple[Path, Path], make_agent: AgentFactory
) -> None:
    _, state = dirs
    state.mkdir()
    (state / "numaplane_processes.json").write_text('{"processes": 1}')
    with pytest.raises(AgentStateError, match=r"numaplane_processes\.json"):
        make_agent()
    (state / "numaplane_processes.json").unlink()
    make_agent().close()


def test_two_agent_processes_and_a_sigkilled_one(tmp_path: Path) -> None:
    port = _free_port()
    args = _agent_args(tmp_path, "--listen", f"127.0.0.1:{port}", "--poll-interval", "0.1")
    first = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for("the first agent", lambda: get_text(port, "/healthz") == "ok", timeout=60)
        second = _run(_agent_args(tmp_path, "--listen", "127.0.0.1:0", "--once"))
        assert second.returncode == 2, second.stderr
        (line,) = _error_lines(second.stderr)
        lock = tmp_path / "state" / LOCK_FILE
        assert line.startswith(f"error: {lock}: another agent (pid {first.pid}) holds")
        # SIGKILL leaves the lock file behind, but the kernel dropped the lock.
        first.send_signal(signal.SIGKILL)
        first.wait(30)
        assert lock.exists()
        third = _run(_agent_args(tmp_path, "--listen", "127.0.0.1:0", "--once"))
        assert third.returncode == 0, third.stderr
    finally:
        if first.poll() is None:
            first.kill()
            first.wait(30)


# -- state files of the wrong shape ---------------------------------------------------------


@dataclass(frozen=True)
class StateFileCase:
    """A state file's content and whether the agent still starts (with a warning)."""

    name: str
    file: str
    content: str
    starts: bool = False


STATE_FILE_CASES = [
    StateFileCase("pods of numbers", "numaplane_pods.json", '{"pods": [1, 2]}'),
    StateFileCase("pods not a list", "numaplane_pods.json", '{"pods": {"a": 1}}'),
    StateFileCase("pods a list", "numaplane_pods.json", "[1]"),
    StateFileCase("processes of numbers", "numaplane_processes.json", '{"processes": [1]}'),
    StateFileCase(
        "a process record naming init",
        "numaplane_processes.json",
        '{"processes": [{"podUID": "a", "container": "b", "pid": 1, "startTime": 0}]}',
    ),
    StateFileCase(
        "restart counts negative",
        "numaplane_processes.json",
        '{"processes": [], "restartCounts": [{"podUID": "a", "container": "b", '
        '"restartCount": -1}]}',
    ),
    StateFileCase("admissions of numbers", "numaplane_admissions.json", '{"admissions": [1]}'),
    StateFileCase(
        "an affinity on a NUMA node the machine lacks",
        "numaplane_admissions.json",
        '{"admissions": [{"podUID": "a", "admission": {"containers": [{"name": "m", '
        '"numa_affinity": {"numa": [7], "preferred": true}}]}}]}',
    ),
    StateFileCase("deeply nested", "numaplane_admissions.json", "[" * 100_000),
    # Forgotten refusals cost one admission attempt each: a warning, not a refusal.
    StateFileCase(
        "rejections of numbers", "numaplane_rejections.json", '{"rejections": [1]}', starts=True
    ),
]


@pytest.mark.parametrize("case", STATE_FILE_CASES, ids=[c.name for c in STATE_FILE_CASES])
def test_state_file_of_the_wrong_shape_is_one_line_naming_it(
    tmp_path: Path, case: StateFileCase
) -> None:
    state = tmp_path / "state"
    state.mkdir()
    (state / case.file).write_text(case.content)
    result = _run(_agent_args(tmp_path, "--listen", "127.0.0.1:0", "--once"))
    assert "Traceback" not in result.stderr
    if case.starts:
        assert result.returncode == 0, result.stderr
        warned = [line for line in result.stderr.splitlines() if case.file in line]
        assert len(warned) == 1, result.stderr
        return
    assert result.returncode == 2, result.stderr
    (line,) = _error_lines(result.stderr)
    assert line.startswith(f"error: {state / case.file}: "), line
    assert (state / case.file).read_text() == case.content  # refused, not rewritten
