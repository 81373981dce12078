"""PodRuntime with real processes: ordering, sidecars, restarts, start errors, stop, adoption."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from numaplane.agent.affinity import AffinityDriver
from numaplane.agent.cgroupapi import CgroupDriver, ContainerLimits
from numaplane.agent.cgroupfs import FsDriver
from numaplane.agent.environment import container_argv, container_env, expand
from numaplane.agent.errors import AgentError
from numaplane.agent.process import process_alive, process_cpu_seconds, process_start_time
from numaplane.agent.runtime import (
    ContainerSpec,
    ContainerStatus,
    PodRuntime,
    PodStatus,
    ProcessRecord,
)
from numaplane.agent.supervision import Backoff
from numaplane.cpuset import CPUSet
from tests.agent.conftest import host_cpus

POD = "pod-uid-1"
FAST = Backoff(base=0.05, cap=0.2, reset_after=600.0)
WAIT = 30.0  # generous: the machine running the tests may be loaded


def sh(name: str, script: str, *, init: bool = False, sidecar: bool = False) -> ContainerSpec:
    """A container running ``sh -c script``."""
    return ContainerSpec(
        name, ("sh", "-c"), (script,), (), None, init=init or sidecar, restartable=sidecar
    )


def wait_for(what: str, check: Callable[[], bool], timeout: float = WAIT) -> None:
    """Poll ``check`` until it holds; fail naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def container(status: PodStatus, name: str) -> ContainerStatus:
    """The status of ``name`` among init and app containers."""
    return next(c for c in (*status.init_containers, *status.containers) if c.name == name)


Make = Callable[..., PodRuntime]


@pytest.fixture
def make(tmp_path: Path) -> Iterator[Make]:
    """Build runtimes on the affinity driver (or a given one); all are stopped afterwards."""
    built: list[PodRuntime] = []

    def build(
        specs: Sequence[ContainerSpec],
        policy: str = "Never",
        *,
        grace: int = 1,
        driver: CgroupDriver | None = None,
        extra_env: Callable[[str], Mapping[str, str]] = lambda name: {},
        pod_uid: str = POD,
    ) -> PodRuntime:
        cgroups = driver if driver is not None else AffinityDriver()
        for spec in specs:
            if cgroups.cpus_of(pod_uid, spec.name) is None:
                cgroups.ensure_container(pod_uid, spec.name, ContainerLimits(cpus=host_cpus()))
        runtime = PodRuntime(
            pod_uid, specs, policy, grace, cgroups=cgroups, log_dir=tmp_path / "logs",
            extra_env=extra_env, backoff=FAST, poll_interval=0.02,
        )  # fmt: skip
        built.append(runtime)
        return runtime

    yield build
    for runtime in built:
        runtime.stop()


def finished(runtime: PodRuntime) -> bool:
    """Whether the pod reached a final phase."""
    return runtime.status().phase in ("Succeeded", "Failed")


def test_init_containers_run_in_order_before_the_apps(make: Make, tmp_path: Path) -> None:
    log = tmp_path / "order"
    runtime = make(
        [
            sh("first", f"sleep 0.1; echo first >> {log}", init=True),
            sh("second", f"echo second >> {log}", init=True),
            sh("app", f"echo app >> {log}"),
            sh("app2", f"echo app2 >> {log}"),
        ]
    )
    assert runtime.status().phase == "Pending"
    assert container(runtime.status(), "app").reason == "PodInitializing"
    runtime.start()
    wait_for("the pod to finish", lambda: finished(runtime))
    lines = log.read_text().split()
    assert lines[:2] == ["first", "second"]
    assert sorted(lines[2:]) == ["app", "app2"]
    status = runtime.status()
    assert status.phase == "Succeeded"
    assert [(c.name, c.state, c.reason, c.exit_code) for c in status.init_containers] == [
        ("first", "terminated", "Completed", 0),
        ("second", "terminated", "Completed", 0),
    ]
    assert runtime.records() == []


def test_a_sidecar_runs_while_later_init_containers_and_apps_run(
    make: Make, tmp_path: Path
) -> None:
    up, seen = tmp_path / "up", tmp_path / "seen"
    runtime = make(
        [
            # ``$$`` is the kubelet's escape for ``$``: the shell sees ``$$``.
            sh("proxy", f"echo $$$$ > {up}; exec sleep 30", sidecar=True),
            sh("setup", f"test -s {up} && kill -0 $(cat {up}) && touch {seen}", init=True),
            sh("app", "sleep 0.2"),
        ]
    )
    runtime.start()
    wait_for("the app to run", lambda: container(runtime.status(), "app").state == "running")
    proxy = container(runtime.status(), "proxy")
    assert proxy.state == "running"
    assert seen.exists()
    wait_for("the pod to finish", lambda: finished(runtime))
    wait_for("the sidecar to stop", lambda: container(runtime.status(), "proxy").pid is None)
    status = runtime.status()
    assert status.phase == "Succeeded"
    assert container(status, "proxy").state == "terminated"
    assert proxy.pid is not None
    assert not process_alive(proxy.pid, process_start_time(proxy.pid) or -1)


def test_a_sidecar_that_exits_is_restarted_even_under_never(make: Make, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runtime = make(
        [sh("proxy", f"echo x >> {runs}; sleep 0.05", sidecar=True), sh("app", "sleep 30")],
        "Never",
    )
    runtime.start()
    wait_for("two restarts", lambda: container(runtime.status(), "proxy").restart_count >= 2)
    wait_for("three runs", lambda: len(runs.read_text().split()) >= 3)
    assert container(runtime.status(), "app").state == "running"


@dataclass(frozen=True)
class PolicyCase:
    """A container script under a restart policy, and how the pod must end."""

    name: str
    policy: str
    script: str
    phase: str
    restarts: int
    reason: str
    exit_code: int


# Fails on its first two runs, then succeeds (``runs`` counts them).
FLAKY = 'n=$(cat runs 2>/dev/null || echo 0); echo $((n+1)) > runs; [ "$n" -ge 2 ]'

POLICY_CASES = [
    PolicyCase("never, failing", "Never", "exit 3", "Failed", 0, "Error", 3),
    PolicyCase("never, succeeding", "Never", "true", "Succeeded", 0, "Completed", 0),
    PolicyCase("on failure, flaky", "OnFailure", FLAKY, "Succeeded", 2, "Completed", 0),
    PolicyCase("on failure, succeeding", "OnFailure", "true", "Succeeded", 0, "Completed", 0),
    PolicyCase("never, killed", "Never", "kill -9 $$$$", "Failed", 0, "Error", 137),
]


@pytest.mark.parametrize("case", POLICY_CASES, ids=lambda c: c.name)
def test_restart_policy_decides_restarts_and_phase(
    make: Make, tmp_path: Path, case: PolicyCase
) -> None:
    spec = ContainerSpec("app", ("sh", "-c", case.script), (), (), str(tmp_path), False, False)
    runtime = make([spec], case.policy)
    runtime.start()
    wait_for("the pod to finish", lambda: finished(runtime))
    status = runtime.status()
    app = container(status, "app")
    assert (status.phase, app.restart_count, app.reason, app.exit_code, app.state) == (
        case.phase, case.restarts, case.reason, case.exit_code, "terminated",
    )  # fmt: skip


def test_always_restarts_even_after_success_with_growing_back_off(make: Make) -> None:
    runtime = make([sh("app", "true")], "Always")
    runtime.start()
    seen: set[str] = set()

    def restarted_thrice() -> bool:
        app = container(runtime.status(), "app")
        if app.state == "waiting" and app.message:
            seen.add(app.message.split(" restarting")[0])
        return app.restart_count >= 3

    wait_for("three restarts", restarted_thrice)
    assert runtime.status().phase == "Running"
    # 0.05 s doubling: the first back-offs are told apart in the messages.
    assert {"back-off 0.05s", "back-off 0.1s"} <= seen


def test_failing_init_container_under_never_fails_the_pod(make: Make, tmp_path: Path) -> None:
    ran = tmp_path / "ran"
    runtime = make(
        [
            sh("proxy", "exec sleep 30", sidecar=True),
            sh("setup", "exit 2", init=True),
            sh("app", f"touch {ran}"),
        ]
    )
    runtime.start()
    wait_for("the pod to fail", lambda: finished(runtime))
    wait_for("the sidecar to stop", lambda: container(runtime.status(), "proxy").pid is None)
    status = runtime.status()
    assert status.phase == "Failed"
    assert status.message is not None
    assert "setup" in status.message
    assert container(status, "setup").exit_code == 2
    assert container(status, "app").state == "waiting"
    assert not ran.exists()


def test_failing_init_container_is_retried_under_on_failure(make: Make, tmp_path: Path) -> None:
    flaky = ContainerSpec("setup", ("sh", "-c", FLAKY), (), (), str(tmp_path), True, False)
    runtime = make([flaky, sh("app", "true")], "OnFailure")
    runtime.start()
    wait_for("the pod to finish", lambda: finished(runtime))
    status = runtime.status()
    assert status.phase == "Succeeded"
    assert container(status, "setup").restart_count == 2


def test_a_missing_command_is_a_start_error_not_an_exception(make: Make) -> None:
    spec = ContainerSpec("app", ("no-such-command-xyz",), (), (), None, False, False)
    runtime = make([spec], "Never")
    runtime.start()
    wait_for("the pod to fail", lambda: finished(runtime))
    app = container(runtime.status(), "app")
    assert (app.state, app.reason, app.exit_code) == ("terminated", "StartError", 128)
    assert app.message == 'exec: "no-such-command-xyz": executable file not found in $PATH'


def test_a_start_error_backs_off_under_always(make: Make) -> None:
    spec = ContainerSpec("app", ("/no/such/file",), (), (), None, False, False)
    runtime = make([spec], "Always")
    runtime.start()
    wait_for("two retries", lambda: container(runtime.status(), "app").restart_count >= 2)
    app = container(runtime.status(), "app")
    assert app.last_reason == "StartError"
    assert runtime.status().phase == "Running"


def test_a_missing_working_directory_is_a_start_error(make: Make, tmp_path: Path) -> None:
    spec = ContainerSpec("app", ("true",), (), (), str(tmp_path / "nowhere"), False, False)
    runtime = make([spec])
    runtime.start()
    wait_for("the pod to fail", lambda: finished(runtime))
    app = container(runtime.status(), "app")
    assert app.reason == "StartError"
    assert app.message is not None
    assert "nowhere" in app.message


def test_env_working_dir_and_logs(make: Make, tmp_path: Path) -> None:
    workdir = tmp_path / "work"
    workdir.mkdir()
    spec = ContainerSpec(
        "app",
        ("sh", "-c"),
        ('echo "$FOO $DEV"; pwd; echo oops >&2; grep Cpus_allowed_list /proc/self/status',),
        (("FOO", "container"),),
        str(workdir),
        False,
        False,
    )
    runtime = make([spec], extra_env=lambda name: {"FOO": "device", "DEV": f"dev-of-{name}"})
    runtime.start()
    wait_for("the pod to finish", lambda: finished(runtime))
    lines = (tmp_path / "logs" / "app.log").read_text().splitlines()
    assert lines[:3] == ["container dev-of-app", str(workdir), "oops"]
    assert lines[3].split(":")[1].strip() == str(host_cpus())


def test_the_process_is_confined_before_it_execs(make: Make, tmp_path: Path) -> None:
    cpu = CPUSet([max(host_cpus())])
    driver = AffinityDriver()
    driver.ensure_container(POD, "app", ContainerLimits(cpus=cpu))
    spec = sh("app", "grep Cpus_allowed_list /proc/self/status")
    runtime = make([spec], driver=driver)
    runtime.start()
    wait_for("the pod to finish", lambda: finished(runtime))
    line = (tmp_path / "logs" / "app.log").read_text().strip()
    assert line.split(":")[1].strip() == str(cpu)


@pytest.mark.root
def test_a_real_cgroup_holds_the_process_and_its_leftovers_are_killed(
    make: Make, tmp_path: Path, fs_driver: FsDriver
) -> None:
    cpu = CPUSet([max(host_cpus())])
    spec = sh("app", "cat /proc/self/cgroup; grep Cpus_allowed_list /proc/self/status; sleep 30 &")
    fs_driver.ensure_container(POD, "app", ContainerLimits(cpus=cpu))
    runtime = make([spec], driver=fs_driver)
    runtime.start()
    wait_for("the pod to finish", lambda: finished(runtime))
    text = (tmp_path / "logs" / "app.log").read_text()
    assert f"{fs_driver.parent_parts[-1]}/pod{POD}/app" in text
    assert f"Cpus_allowed_list:\t{cpu}" in text
    # The background sleep went with its container: the cgroup can be removed.
    wait_for("an empty cgroup", lambda: fs_driver.pids(POD, "app") == [])
    fs_driver.remove_pod(POD)


def test_graceful_stop_terms_apps_then_sidecars_and_kills_after_the_grace(
    make: Make, tmp_path: Path
) -> None:
    order = tmp_path / "order"
    loop = "while :; do sleep 0.05; done"
    runtime = make(
        [
            sh("proxy", f"trap 'echo proxy >> {order}; exit 0' TERM; {loop}", sidecar=True),
            sh("polite", f"trap 'echo polite >> {order}; exit 0' TERM; {loop}"),
            sh("stubborn", f"trap '' TERM; {loop}"),
        ],
        "Always",
        grace=1,
    )
    runtime.start()
    wait_for(
        "everything to run",
        lambda: all(
            c.state == "running" and c.started_at is not None
            for c in (*runtime.status().containers, *runtime.status().init_containers)
        ),
    )
    time.sleep(0.2)  # let the shells install their traps
    pids = [r.pid for r in runtime.records()]
    began = time.monotonic()
    runtime.stop()
    took = time.monotonic() - began
    assert 1.0 <= took < 4.0
    assert order.read_text().split() == ["polite", "proxy"]
    status = runtime.status()
    assert container(status, "polite").exit_code == 0
    assert container(status, "stubborn").exit_code == 128 + signal.SIGKILL
    assert container(status, "proxy").exit_code == 0
    assert all(c.state == "terminated" for c in (*status.containers, *status.init_containers))
    assert not any(os.path.exists(f"/proc/{pid}") for pid in pids)
    assert runtime.records() == []


def test_adopt_resumes_live_processes_and_reports_dead_ones(make: Make) -> None:
    specs = [sh("keeper", "exec sleep 30"), sh("victim", "exec sleep 30")]
    first = make(specs, "Always")
    first.start()
    wait_for("two processes", lambda: len(first.records()) == 2)
    records = first.records()
    first.detach()  # the agent goes away; its processes stay
    by_name = {r.container: r for r in records}
    os.kill(by_name["victim"].pid, signal.SIGKILL)
    wait_for(
        "the victim to die",
        lambda: not process_alive(by_name["victim"].pid, by_name["victim"].start_time),
    )

    second = make(specs, "Always")
    assert second.adopt(records) == ["victim"]
    keeper = container(second.status(), "keeper")
    assert (keeper.state, keeper.pid, keeper.restart_count) == ("running", records[0].pid, 0)
    wait_for("the victim's restart", lambda: container(second.status(), "victim").pid is not None)
    victim = container(second.status(), "victim")
    assert victim.pid != by_name["victim"].pid
    assert victim.restart_count == 1
    assert {r.container: r.pid for r in second.records()}["keeper"] == by_name["keeper"].pid

    second.stop()
    assert not process_alive(by_name["keeper"].pid, by_name["keeper"].start_time)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(by_name["keeper"].pid, 0)


def test_adopt_sees_an_adopted_process_exit(make: Make) -> None:
    first = make([sh("app", "exec sleep 30")], "Never")
    first.start()
    wait_for("a process", lambda: len(first.records()) == 1)
    first.detach()
    records = first.records()
    second = make([sh("app", "exec sleep 30")], "Never")
    assert second.adopt(records) == []
    os.kill(records[0].pid, signal.SIGTERM)
    wait_for("the pod to fail", lambda: finished(second))
    app = container(second.status(), "app")
    assert (app.reason, app.exit_code) == ("ContainerStatusUnknown", None)


def test_adopt_ignores_a_reused_pid(make: Make) -> None:
    stale = ProcessRecord(POD, "app", os.getpid(), (process_start_time(os.getpid()) or 0) + 1)
    runtime = make([sh("app", "exec sleep 30")], "Never")
    assert runtime.adopt([stale]) == ["app"]
    wait_for("the pod to fail", lambda: finished(runtime))
    assert container(runtime.status(), "app").reason == "ContainerStatusUnknown"


def test_adopt_during_init_takes_earlier_init_containers_as_done(
    make: Make, tmp_path: Path
) -> None:
    log = tmp_path / "log"
    specs = [
        sh("one", f"echo one >> {log}", init=True),
        sh("two", f"echo two >> {log}; exec sleep 30", init=True),
        sh("app", f"echo app >> {log}"),
    ]
    first = make(specs, "Never")
    first.start()
    wait_for("init two", lambda: [r.container for r in first.records()] == ["two"])
    # Running is not yet having written: a kill before its echo would lose one "two".
    wait_for("init two's output", lambda: log.read_text().split() == ["one", "two"])
    first.detach()
    records = first.records()
    second = make(specs, "Never")
    assert second.adopt(records) == []
    assert container(second.status(), "one").reason == "Completed"
    os.kill(records[0].pid, signal.SIGKILL)  # init two "finishes" (status unknown): rerun
    wait_for(
        "init two to run again",
        lambda: [r.pid for r in second.records()] not in ([], [records[0].pid]),
    )
    assert second.status().phase == "Pending"
    wait_for("the rerun's output", lambda: len(log.read_text().split()) == 3)
    assert log.read_text().split() == ["one", "two", "two"]


def test_unknown_policy_and_double_start_are_errors(make: Make) -> None:
    with pytest.raises(AgentError, match="restart policy"):
        make([sh("app", "true")], "Sometimes")
    runtime = make([sh("app", "true")])
    runtime.start()
    with pytest.raises(AgentError, match="already started"):
        runtime.start()


@dataclass(frozen=True)
class ExpandCase:
    """A string with references and what it expands to with ``A=1``, ``B=two``."""

    name: str
    text: str
    expanded: str


EXPAND_CASES = [
    ExpandCase("plain", "abc", "abc"),
    ExpandCase("reference", "x$(A)y", "x1y"),
    ExpandCase("two references", "$(A)$(B)", "1two"),
    ExpandCase("undefined kept", "$(C)", "$(C)"),
    ExpandCase("escaped", "$$(A)", "$(A)"),
    ExpandCase("double dollar", "a$$b", "a$b"),
    ExpandCase("lone dollar", "a$b", "a$b"),
    ExpandCase("trailing dollar", "a$", "a$"),
    ExpandCase("unclosed", "$(A", "$(A"),
    ExpandCase("empty name", "$()", "$()"),
]


@pytest.mark.parametrize("case", EXPAND_CASES, ids=lambda c: c.name)
def test_expand_follows_the_kubelet(case: ExpandCase) -> None:
    values = {"A": "1", "B": "two"}
    assert expand(case.text, values.get) == case.expanded


def test_env_refers_to_earlier_variables_and_argv_to_all() -> None:
    spec = ContainerSpec(
        "app",
        ("run", "$(GREETING)"),
        ("--dev=$(DEV)", "$(LATER)"),
        (("NAME", "world"), ("GREETING", "hello $(NAME) $(LATER)"), ("LATER", "x")),
        None,
        False,
        False,
    )
    env = container_env(spec, {"DEV": "gpu0", "NAME": "device"})
    assert env["GREETING"] == "hello world $(LATER)"
    assert env["NAME"] == "world"
    assert env["PATH"]
    assert container_argv(spec, env) == ("run", "hello world $(LATER)", "--dev=gpu0", "x")


def test_process_cpu_seconds_counts_a_process_s_cpu_time() -> None:
    # The benchmarks charge each process the CPU it used; a busy child must show it.
    child = subprocess.Popen(
        [sys.executable, "-c", "import time\nend = time.process_time() + 0.3\n"
         "while time.process_time() < end: pass\ninput()"],
        stdin=subprocess.PIPE,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while (used := process_cpu_seconds(child.pid) or 0.0) < 0.3:
            assert time.monotonic() < deadline, f"only {used}s of CPU seen"
            time.sleep(0.05)
    finally:
        child.communicate(b"\n")
    assert process_cpu_seconds(child.pid) is None  # reaped: no such process
