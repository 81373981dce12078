"""``numaplane kueue``'s inputs: a missing kubeconfig or an unusable Kueue Configuration is one
line naming the file, exit status 2, before anything starts."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.cli.helpers import assert_one_line_error, invoke


def test_help_names_the_flags() -> None:
    outcome = invoke("kueue", "--help")
    assert outcome.code == 0
    for flag in ("--kubeconfig", "--config", "--no-leader-elect", "-v"):
        assert flag in outcome.out


@dataclass(frozen=True)
class BadInput:
    name: str
    #: File name → content written under tmp_path ("" content: the file is not written).
    files: tuple[tuple[str, str], ...]
    argv: tuple[str, ...]
    #: Words the one error line must contain.
    names: tuple[str, ...]


GOOD_KUBECONFIG = """\
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
"""

BAD_INPUTS = [
    BadInput("no-kubeconfig", (), ("--kubeconfig", "{tmp}/missing"), ("missing",)),
    BadInput(
        "config-not-yaml",
        (("kc", GOOD_KUBECONFIG), ("cfg.yaml", "{not: [yaml")),
        ("--kubeconfig", "{tmp}/kc", "--config", "{tmp}/cfg.yaml"),
        ("cfg.yaml",),
    ),
    BadInput(
        "config-wrong-kind",
        (("kc", GOOD_KUBECONFIG), ("cfg.yaml", "apiVersion: v1\nkind: Pod\n")),
        ("--kubeconfig", "{tmp}/kc", "--config", "{tmp}/cfg.yaml"),
        ("cfg.yaml",),
    ),
]


@pytest.mark.parametrize("case", BAD_INPUTS, ids=[c.name for c in BAD_INPUTS])
def test_bad_inputs_are_one_line_and_status_2(case: BadInput, tmp_path: Path) -> None:
    for name, content in case.files:
        (tmp_path / name).write_text(content)
    argv = [a.replace("{tmp}", str(tmp_path)) for a in case.argv]
    assert_one_line_error(invoke("kueue", *argv), *case.names)


@dataclass(frozen=True)
class UpCase:
    name: str
    kueue: bool
    kueue_config: str | None
    #: The kueue child's argv after ``numaplane`` (None: no kueue child).
    child: tuple[str, ...] | None
    defaulting: bool


UP_CASES = [
    UpCase("default", True, None, ("kueue", "--kubeconfig", "{kc}"), True),
    UpCase(
        "with-config",
        True,
        "/etc/kueue.yaml",
        ("kueue", "--kubeconfig", "{kc}", "--config", "/etc/kueue.yaml"),
        True,
    ),
    UpCase("no-kueue", False, None, None, False),
]


@pytest.mark.parametrize("case", UP_CASES, ids=[c.name for c in UP_CASES])
def test_up_supervises_numaplane_kueue_and_turns_job_defaulting_on(
    case: UpCase, tmp_path: Path
) -> None:
    from numaplane.cli.up import UpOptions, apiserver_component, components

    options = UpOptions(
        data_dir=tmp_path,
        node="none",
        kueue=case.kueue,
        kueue_config=Path(case.kueue_config) if case.kueue_config else None,
    )
    children = {c.name: c.argv for c in components(options)}
    if case.child is None:
        assert "kueue" not in children
    else:
        want = tuple(a.replace("{kc}", str(options.kubeconfig)) for a in case.child)
        assert children["kueue"][-len(want) :] == want
    assert ("--kueue-job-defaulting" in apiserver_component(options).argv) == case.defaulting


def test_up_refuses_a_kueue_config_with_no_kueue(tmp_path: Path) -> None:
    config = tmp_path / "kueue.yaml"
    config.write_text("apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n")
    outcome = invoke(
        "up", "--data-dir", str(tmp_path / "d"), "--no-kueue", "--kueue-config", str(config)
    )
    assert_one_line_error(outcome, "--kueue-config", "--no-kueue")
