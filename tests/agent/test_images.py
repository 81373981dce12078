"""The image table: lookups as a runtime names images, the ENTRYPOINT/CMD combination, the
table file's format and its one-line errors, the built-in shims."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from numaplane.agent.images import (
    DEFAULT_IMAGES,
    ImageEntry,
    ImageTable,
    load_image_table,
    pull_error,
)
from numaplane.errors import InputError


@dataclass(frozen=True)
class ArgvCase:
    name: str
    image: str
    command: tuple[str, ...]
    args: tuple[str, ...]
    expected: tuple[tuple[str, ...], tuple[str, ...]] | None


TABLE = ImageTable(
    {
        "example.com/tool": ImageEntry(("/opt/tool",), ("--help",)),
        "example.com/tool:v2": ImageEntry(("/opt/tool2",)),
        "docker.io/library/shell": ImageEntry((), ("sh",)),
    }
)

ARGV_CASES = [
    ArgvCase(
        "a command runs as given", "nowhere/unknown", ("sleep",), ("1",), (("sleep",), ("1",))
    ),
    ArgvCase("entry command and CMD", "example.com/tool:v1", (), (), (("/opt/tool",), ("--help",))),
    ArgvCase("args replace CMD", "example.com/tool", (), ("run",), (("/opt/tool",), ("run",))),
    ArgvCase("a tagged entry wins", "example.com/tool:v2", (), (), (("/opt/tool2",), ())),
    ArgvCase(
        "a digest is a tag", "example.com/tool@sha256:ab", (), (), (("/opt/tool",), ("--help",))
    ),
    ArgvCase("docker.io library is implied", "shell:latest", (), (), ((), ("sh",))),
    ArgvCase(
        "args are the command without ENTRYPOINT", "busybox", (), ("echo", "x"), ((), ("echo", "x"))
    ),
    ArgvCase("unknown image", "example.com/other", (), ("x",), None),
    ArgvCase("a registry port is no tag", "localhost:5000/thing", (), (), None),
]


@pytest.mark.parametrize("case", ARGV_CASES, ids=lambda c: c.name)
def test_argv(case: ArgvCase) -> None:
    assert TABLE.argv(case.image, case.command, case.args) == case.expected


def test_the_kueue_examples_image_is_built_in() -> None:
    assert ImageTable().lookup("registry.k8s.io/e2e-test-images/agnhost:2.53") is not None
    assert "gcr.io/k8s-staging-perf-tests/sleep" in DEFAULT_IMAGES


@pytest.mark.parametrize(
    ("args", "output", "code"),
    [(("pause",), "", None), (("entrypoint-tester", "a", "b"), "agnhost a b\n", 0)],
    ids=["pause-runs", "entrypoint-tester-echoes"],
)
def test_agnhost_shim(args: tuple[str, ...], output: str, code: int | None) -> None:
    entry = ImageTable().lookup("registry.k8s.io/e2e-test-images/agnhost:2.53")
    assert entry is not None
    with subprocess.Popen([*entry.command, *args], stdout=subprocess.PIPE, text=True) as proc:
        try:
            if code is None:
                with pytest.raises(subprocess.TimeoutExpired):
                    proc.wait(0.3)
                return
            out, _ = proc.communicate(timeout=10)
            assert (out, proc.returncode) == (output, code)
        finally:
            proc.kill()


@pytest.mark.parametrize(
    ("duration", "code"), [("0.05s", 0), ("20ms", 0), ("1x", 1)], ids=["seconds", "ms", "bad"]
)
def test_go_duration_sleep_shim(duration: str, code: int) -> None:
    entry = ImageTable().lookup("gcr.io/k8s-staging-perf-tests/sleep:v0.1.0")
    assert entry is not None
    done = subprocess.run([*entry.command, duration], capture_output=True, timeout=30, check=False)
    assert done.returncode == code


def test_pull_error_names_the_image_and_the_way_out() -> None:
    message = pull_error("example.com/nothing:1")
    assert message.startswith('Failed to pull image "example.com/nothing:1": ')
    assert "--image-table" in message
    assert "'example.com/nothing'" in message


def test_table_file_entries_come_before_the_built_in(tmp_path: Path) -> None:
    path = tmp_path / "images.yaml"
    path.write_text('images:\n  busybox: ["/bin/true"]\n  my/app: {command: [run], args: [x]}\n')
    table = load_image_table(path)
    assert table.lookup("busybox:1.36") == ImageEntry(("/bin/true",))
    assert table.argv("my/app:3", (), ()) == (("run",), ("x",))
    assert table.lookup("alpine") == DEFAULT_IMAGES["alpine"]


@dataclass(frozen=True)
class BadFile:
    name: str
    text: str
    says: str


BAD_FILES = [
    BadFile("not a mapping", "- a\n", "expected"),
    BadFile("entry of numbers", "images:\n  a: [1]\n", "images.a: expected a list of strings"),
    BadFile("unknown key", "images:\n  a: {cmd: [x]}\n", "images.a: unknown key(s) ['cmd']"),
    BadFile("runs nothing", "images:\n  a: {command: []}\n", "images.a: the entry runs nothing"),
    BadFile("not yaml", "images: [\n", "not YAML"),
]


@pytest.mark.parametrize("case", BAD_FILES, ids=lambda c: c.name)
def test_bad_table_file_is_one_line_naming_the_file(tmp_path: Path, case: BadFile) -> None:
    path = tmp_path / "images.yaml"
    path.write_text(case.text)
    with pytest.raises(InputError) as caught:
        load_image_table(path)
    text = str(caught.value)
    assert text.startswith(str(path))
    assert case.says in text
    assert "\n" not in text
