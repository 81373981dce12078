"""A "billion laughs" YAML document, given to every command that reads YAML: refused in one line
naming the file, before anything walks the expanded value (it would take minutes and gigabytes)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from numaplane.api.yamlbounds import AliasError, check_aliases
from tests.cli.helpers import invoke

VALID_POD = """\
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers: [{name: c, image: x, resources: {limits: {cpu: "1", memory: 64Mi}}}]
"""


def bomb(top_key: str) -> str:
    """Nine levels of ten-fold aliases (10**9 values once expanded) under ``top_key``."""
    lines = ['l0: &l0 ["x", "x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    for level in range(1, 9):
        refs = ", ".join([f"*l{level - 1}"] * 10)
        lines.append(f"l{level}: &l{level} [{refs}]")
    lines.append(f"{top_key}: *l8")
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Surface:
    """One command that reads YAML, with the bomb in the file it reads."""

    name: str
    key: str
    argv: tuple[str, ...]


SURFACES = (
    Surface("pod manifest", "kind", ("admit", "{bomb}", "-m", "dual-socket-ht")),
    Surface(
        "kubelet config",
        "kind",
        ("admit", "{pod}", "-m", "dual-socket-ht", "-c", "{bomb}"),
    ),
    Surface(
        "device inventory",
        "resources",
        ("admit", "{pod}", "-m", "dual-socket-ht", "--devices", "{bomb}"),
    ),
    Surface("trace", "machine", ("simulate", "{bomb}")),
)


@pytest.mark.parametrize("surface", SURFACES, ids=lambda s: s.name)
def test_an_alias_bomb_is_one_line_naming_the_file(surface: Surface, tmp_path: Path) -> None:
    bomb_file = tmp_path / "bomb.yaml"
    bomb_file.write_text(bomb(surface.key))
    pod_file = tmp_path / "pod.yaml"
    pod_file.write_text(VALID_POD)
    argv = [a.format(bomb=bomb_file, pod=pod_file) for a in surface.argv]
    outcome = invoke(*argv)
    assert outcome.code == 2, outcome
    (line,) = outcome.error_lines
    assert str(bomb_file) in line
    assert "alias" in line


def test_shared_values_count_once_and_self_reference_is_refused() -> None:
    shared = ["x"] * 10
    fine = {"a": shared, "b": shared}  # 2 keys + 2 lists of 10, shared: within 40
    check_aliases(fine, 40)
    with pytest.raises(AliasError, match="past"):
        check_aliases({"a": [shared] * 10}, 40)
    looped: list[object] = []
    looped.append(looped)
    with pytest.raises(AliasError, match="contains it"):
        check_aliases(looped, 1000)
