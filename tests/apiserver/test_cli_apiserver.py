"""``numaplane apiserver``: a --help that teaches, one-line errors (exit 2) for bad flags and
data directories, and a real server process that kubectl uses with the kubeconfig it writes and
that shuts down cleanly on SIGTERM."""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from numaplane.testing.apiserver import running_apiserver
from tests.cli.helpers import invoke


def test_help_explains_how_to_use_it() -> None:
    outcome = invoke("apiserver", "--help")
    assert outcome.code == 0
    for text in ("--data-dir", "--port", "--bind", "--clusters", "--cluster", "--token-auth-file"):
        assert text in outcome.out
    assert "kubectl --kubeconfig ./cluster/admin.kubeconfig get namespaces" in outcome.out


@dataclass(frozen=True)
class BadCase:
    name: str
    args: tuple[str, ...]
    error: str  # expected in the one error line


def _bad_cases(tmp: Path) -> tuple[BadCase, ...]:
    a_file = tmp / "file"
    a_file.write_text("x")
    return (
        BadCase("no data dir", (), "Missing option '--data-dir'"),
        BadCase("data dir is a file", ("--data-dir", str(a_file)), str(a_file)),
        BadCase(
            "negative clusters",
            ("--data-dir", str(tmp / "d"), "--clusters", "-1"),
            "--clusters -1: must be between 0 and 1000",
        ),
        BadCase(
            "bad cluster name",
            ("--data-dir", str(tmp / "d"), "--cluster", "Bad_Name"),
            "cluster name 'Bad_Name': must be a DNS-1123 label",
        ),
        BadCase(
            "both cluster flags",
            ("--data-dir", str(tmp / "d"), "--clusters", "2", "--cluster", "x"),
            "--clusters and --cluster: give one or the other",
        ),
        BadCase(
            "port out of range",
            ("--data-dir", str(tmp / "d"), "--port", "70000"),
            "70000 is not in the range 0<=x<=65535",
        ),
        BadCase(
            "missing token file",
            ("--data-dir", str(tmp / "d"), "--token-auth-file", str(tmp / "none.csv")),
            str(tmp / "none.csv"),
        ),
    )


BAD_NAMES = (
    "no data dir",
    "data dir is a file",
    "negative clusters",
    "bad cluster name",
    "both cluster flags",
    "port out of range",
    "missing token file",
)


@pytest.mark.parametrize("name", BAD_NAMES, ids=BAD_NAMES)
def test_bad_flags_are_one_line_errors(tmp_path: Path, name: str) -> None:
    (case,) = [c for c in _bad_cases(tmp_path) if c.name == name]
    outcome = invoke("apiserver", *case.args)
    assert outcome.code == 2
    assert len(outcome.error_lines) == 1, outcome.err
    assert case.error in outcome.error_lines[0]
    assert "Traceback" not in outcome.err


KUBECTL = shutil.which("kubectl")


def _kubectl(kubeconfig: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    assert KUBECTL is not None
    return subprocess.run(
        [KUBECTL, "--kubeconfig", str(kubeconfig), *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=check,
    )


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.skipif(KUBECTL is None, reason="kubectl not installed")
def test_kubectl_works_with_the_written_kubeconfig(tmp_path: Path) -> None:
    with running_apiserver(tmp_path / "data") as server:
        kc = server.kubeconfig
        namespaces = _kubectl(kc, "get", "namespaces").stdout
        assert namespaces.splitlines()[0].split() == ["NAME", "STATUS", "AGE"]
        assert "default" in namespaces
        _kubectl(kc, "create", "configmap", "c1", "--from-literal=k=v")
        as_yaml = _kubectl(kc, "get", "cm", "c1", "-o", "yaml").stdout
        assert "k: v" in as_yaml
        as_json = json.loads(_kubectl(kc, "get", "cm", "-o", "json").stdout)
        assert "c1" in [i["metadata"]["name"] for i in as_json["items"]]
        _kubectl(kc, "delete", "cm", "c1")
        missing = _kubectl(kc, "get", "cm", "c1", check=False)
        assert missing.returncode == 1
        assert 'Error from server (NotFound): configmaps "c1" not found' in missing.stderr
        assert server.stop() == 0
        assert "Traceback" not in server.log()


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.skipif(KUBECTL is None, reason="kubectl not installed")
def test_kubectl_get_watch_streams_changes(tmp_path: Path) -> None:
    with running_apiserver(tmp_path / "data") as server:
        kc = server.kubeconfig
        _kubectl(kc, "create", "configmap", "w0")
        assert KUBECTL is not None
        with subprocess.Popen(
            [KUBECTL, "--kubeconfig", str(kc), "get", "cm", "-w", "--request-timeout=0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        ) as watch:
            try:
                assert watch.stdout is not None
                header = watch.stdout.readline().split()
                assert header == ["NAME", "DATA", "AGE"]
                # The root CA bundle of the namespace is listed too, before w0 (by name).
                listed = [watch.stdout.readline().split()[0] for _ in range(2)]
                assert listed == ["kube-root-ca.crt", "w0"]
                _kubectl(kc, "create", "configmap", "w1")
                while True:
                    line = watch.stdout.readline()
                    assert line, "the watch ended"
                    if line.split()[0] == "w1":
                        break
            finally:
                watch.terminate()
                watch.wait(timeout=30)
