"""State directories stay whole: multi-pod ``admit``/``release`` are all-or-nothing, even when
interrupted at any step of the write, and the four state files always agree with each other."""

from __future__ import annotations

import contextlib
import errno
import json
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from numaplane.node import statedir
from numaplane.node.statedir import STATE_FILES
from tests.cli.helpers import assert_one_line_error, invoke

REPO = Path(__file__).resolve().parents[2]
CONFIG = str(REPO / "examples" / "kubelet-static-cpu.yaml")
# Every pod below takes exclusive CPUs, memory (Static memory manager) and a GPU: each admitted
# pod appears in all four files, so "the files agree" is "the same pods everywhere".
MACHINE = (
    "sockets=2,numa-per-socket=1,cores-per-numa=4,threads-per-core=2,"
    "memory-per-numa=64Gi,gpus-per-numa=2"
)


def _pod(name: str) -> str:
    return f"""\
apiVersion: v1
kind: Pod
metadata: {{name: {name}}}
spec:
  containers:
  - name: c
    resources: {{limits: {{cpu: "2", memory: 1Gi, nvidia.com/gpu: "1"}}}}
"""


def _common(state: Path) -> tuple[str, ...]:
    return ("-m", MACHINE, "-c", CONFIG, "--state-dir", str(state))


def _files(state: Path) -> dict[str, bytes | None]:
    return {
        name: (state / name).read_bytes() if (state / name).exists() else None
        for name in STATE_FILES
    }


def _pods_everywhere(state: Path) -> dict[str, set[str]]:
    """The pod UIDs each state file holds."""

    def load(name: str) -> Any:
        return json.loads((state / name).read_bytes())

    return {
        "pods": {p["metadata"]["uid"] for p in load("numaplane_pods.json")["pods"]},
        "cpu": set(load("cpu_manager_state")["entries"] or {}),
        "memory": set(load("memory_manager_state")["entries"] or {}),
        "devices": {
            e["PodUID"]
            for e in load("kubelet_internal_checkpoint")["Data"]["PodDeviceEntries"] or ()
        },
    }


def assert_files_agree(state: Path) -> set[str]:
    """Every state file holds the same pods; returns them."""
    held = _pods_everywhere(state)
    assert len({frozenset(uids) for uids in held.values()}) == 1, held
    return held["pods"]


@pytest.fixture
def pod_files(tmp_path: Path) -> dict[str, str]:
    """Manifest files: ``base``, and ``pair`` holding pods ``a`` and ``b``."""
    paths = {}
    for key, text in {
        "base": _pod("base"),
        "pair": _pod("a") + "---\n" + _pod("b"),
        "next": _pod("next"),
    }.items():
        path = tmp_path / f"{key}.yaml"
        path.write_text(text)
        paths[key] = str(path)
    return paths


# -- all-or-nothing before any write ------------------------------------------------------


@dataclass(frozen=True)
class RefusedRelease:
    name: str
    refs: tuple[str, ...]
    words: str


REFUSED_RELEASES = (
    RefusedRelease("the same pod twice", ("a", "a"), "pod default/a is named twice"),
    RefusedRelease("one name twice, two ways", ("a", "default/a"), "named twice"),
    RefusedRelease("one unknown name after a good one", ("a", "nope"), "no admitted pod 'nope'"),
)


@pytest.mark.parametrize("case", REFUSED_RELEASES, ids=lambda c: c.name)
def test_a_refused_release_changes_nothing(
    case: RefusedRelease, tmp_path: Path, pod_files: dict[str, str]
) -> None:
    """`release a a` used to free a's CPUs in cpu_manager_state and keep a in the pod records,
    so later pods were refused OutOfcpu: now every name is checked before anything is written."""
    state = tmp_path / "state"
    assert invoke("admit", pod_files["pair"], *_common(state)).code == 0
    before = _files(state)
    outcome = invoke("release", *case.refs, *_common(state))
    assert_one_line_error(outcome, str(state), case.words)
    assert outcome.out == ""
    assert _files(state) == before
    assert invoke("release", "a", *_common(state)).code == 0
    assert len(assert_files_agree(state)) == 1


def test_release_of_several_pods_frees_them_all(tmp_path: Path, pod_files: dict[str, str]) -> None:
    state = tmp_path / "state"
    assert invoke("admit", pod_files["base"], pod_files["pair"], *_common(state)).code == 0
    outcome = invoke("release", "a", "default/b", *_common(state))
    assert outcome.code == 0
    assert outcome.out.count("released ") == 2
    assert len(assert_files_agree(state)) == 1


def test_release_from_a_missing_state_dir_creates_nothing(tmp_path: Path) -> None:
    state = tmp_path / "no" / "state"
    outcome = invoke("release", "web", *_common(state))
    assert_one_line_error(outcome, str(state), "no such state directory")
    assert not (tmp_path / "no").exists()


def test_admit_of_a_pod_already_admitted_changes_nothing(
    tmp_path: Path, pod_files: dict[str, str]
) -> None:
    """The whole command is refused, the pods before the repeated one included."""
    state = tmp_path / "state"
    assert invoke("admit", pod_files["base"], *_common(state)).code == 0
    before = _files(state)
    outcome = invoke("admit", pod_files["next"], pod_files["base"], *_common(state))
    assert_one_line_error(outcome, "default/base is already admitted")
    assert _files(state) == before


def test_a_second_command_on_a_held_state_dir_is_refused(
    tmp_path: Path, pod_files: dict[str, str]
) -> None:
    state = tmp_path / "state"
    assert invoke("admit", pod_files["base"], *_common(state)).code == 0
    with statedir.locked(state):
        outcome = invoke("admit", pod_files["next"], *_common(state))
    assert_one_line_error(outcome, str(state), "in use by another numaplane process")


# -- interrupted at every step ------------------------------------------------------------


class Crash(BaseException):
    """The process dies: nothing after this reaches the disk (not an ``Exception``, so no
    handler in the code under test can act on it)."""


@dataclass
class FaultyDisk:
    """``statedir.DISK`` failing at step ``at`` (1-based): a crash, after which every step
    fails too, or one ``OSError`` (ENOSPC), after which the disk works again."""

    at: int
    crash: bool
    steps: int = 0
    failed: bool = False

    def wrap(self, step: Callable[..., None]) -> Callable[..., None]:
        def faulty(*args: Any) -> None:
            self.steps += 1
            if self.crash and self.failed:
                raise Crash
            if self.steps == self.at:
                self.failed = True
                if self.crash:
                    if step.__name__ == "write":
                        # A torn write: half the bytes made it.
                        path, data = args
                        Path(path).write_bytes(data[: len(data) // 2])
                    raise Crash
                raise OSError(errno.ENOSPC, "No space left on device")
            step(*args)

        faulty.__name__ = step.__name__
        return faulty


@contextlib.contextmanager
def faulty_disk(monkeypatch: pytest.MonkeyPatch, fault: FaultyDisk) -> Iterator[FaultyDisk]:
    """``statedir.DISK`` replaced by ``fault`` for the block."""
    with monkeypatch.context() as patch:
        # A directory sync never fails (the OS may refuse it; it is then skipped), but a crash
        # can come during one.
        steps = ("write", "rename", "remove") + (("sync_dir",) if fault.crash else ())
        for name in steps:
            patch.setattr(statedir.DISK, name, fault.wrap(getattr(statedir.DISK, name)))
        yield fault


@dataclass(frozen=True)
class MultiPodCommand:
    name: str
    argv: Callable[[dict[str, str]], tuple[str, ...]]
    """The command, given the manifest files."""
    pods_after: int


COMMANDS = (
    MultiPodCommand("admit of two pods", lambda f: ("admit", f["pair"]), 3),
    MultiPodCommand("release of two pods", lambda f: ("release", "a", "default/b"), 1),
)


@pytest.mark.parametrize("crash", [True, False], ids=["crash", "write error"])
@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c.name)
def test_interrupted_at_every_step_the_files_stay_whole(
    command: MultiPodCommand,
    crash: bool,
    tmp_path: Path,
    pod_files: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Whatever step fails, the next command sees either every old file or every new one, the
    four files agree, and it works."""
    base = tmp_path / "base"
    first = [pod_files["base"]] + (
        [pod_files["pair"]] if command.name.startswith("release") else []
    )
    assert invoke("admit", *first, *_common(base)).code == 0
    old = _files(base)
    reference = tmp_path / "reference"
    shutil.copytree(base, reference)
    assert invoke(*command.argv(pod_files), *_common(reference)).code == 0
    new = _files(reference)
    assert new != old
    pods_before = len(_pod_names(base))

    at = 0
    while True:
        at += 1
        state = tmp_path / f"run-{at}"
        shutil.copytree(base, state)
        with faulty_disk(monkeypatch, FaultyDisk(at, crash)) as fault:
            try:
                outcome = invoke(*command.argv(pod_files), *_common(state))
            except Crash:
                outcome = None
        if not fault.failed:
            assert outcome is not None
            assert outcome.code == 0
            assert _files(state) == new
            break
        if outcome is not None:  # a write error: reported in one line
            assert_one_line_error(outcome, str(state))
        # What any later reader sees: exactly the old files or exactly the new ones ...
        statedir.recover(state)
        assert _files(state) in (old, new), f"interrupted at step {at}"
        assert len(assert_files_agree(state)) in (pods_before, command.pods_after)
        # ... and the next command works on it.
        follow = invoke("admit", pod_files["next"], *_common(state))
        assert follow.code == 0, follow
        assert "next" in {p.split("/")[-1] for p in _pod_names(state)}
        assert_files_agree(state)
    # Every file's write and rename, the journal's and the clean-up were interrupted once.
    assert at > 2 * len(STATE_FILES) + 2


def _pod_names(state: Path) -> set[str]:
    doc = json.loads((state / "numaplane_pods.json").read_bytes())
    return {p["metadata"]["name"] for p in doc["pods"]}
