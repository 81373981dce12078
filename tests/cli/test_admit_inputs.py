"""``admit``/``release`` as a careless or hostile user meets them: every bad input is one line
naming it (exit 2), inventories claim nothing the machine lacks, and output prints user and
kubelet text as it is."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.cli.helpers import Outcome, assert_one_line_error, invoke

REPO = Path(__file__).resolve().parents[2]
PODS = str(REPO / "examples" / "worked" / "pods.yaml")
BEST_EFFORT = str(REPO / "examples" / "worked" / "kubelet-best-effort.yaml")
STATIC = str(REPO / "examples" / "kubelet-static-cpu.yaml")
SMALL = "sockets=2,numa-per-socket=1,cores-per-numa=4,threads-per-core=2,memory-per-numa=64Gi"

POD = """\
apiVersion: v1
kind: Pod
metadata: {{name: "{name}"}}
spec:
  containers: [{{name: "{container}", resources: {{limits: {{cpu: "2", memory: {memory}}}}}}}]
"""


def _pod(name: str = "p", container: str = "c", memory: str = "1Gi") -> str:
    return POD.format(name=name, container=container, memory=memory)


@dataclass(frozen=True)
class BadInput:
    """A command line (``{tmp}`` is a scratch directory holding ``files``) refused in one line
    that names ``names`` (``{tmp}`` replaced too)."""

    name: str
    argv: tuple[str, ...]
    files: tuple[tuple[str, bytes], ...]
    names: tuple[str, ...]


RECORDS_NOT_PODS = (("s/numaplane_pods.json", b'{"pods":[1,2]}'),)

BAD_INPUTS = (
    BadInput(
        "admit: pod records holding numbers",
        ("admit", PODS, "-m", "dual-socket-ht", "-c", BEST_EFFORT, "--state-dir", "{tmp}/s"),
        RECORDS_NOT_PODS,
        ("{tmp}/s/numaplane_pods.json", "pods[0]", "expected a pod manifest"),
    ),
    BadInput(
        "release: pod records holding numbers",
        ("release", "web", "-m", "dual-socket-ht", "-c", BEST_EFFORT, "--state-dir", "{tmp}/s"),
        RECORDS_NOT_PODS,
        ("{tmp}/s/numaplane_pods.json", "pods[0]"),
    ),
    BadInput(
        "pod records that are not JSON",
        ("release", "web", "-m", "dual-socket-ht", "-c", BEST_EFFORT, "--state-dir", "{tmp}/s"),
        (("s/numaplane_pods.json", b"\xff\xfe{"),),
        ("{tmp}/s/numaplane_pods.json", "not a numaplane pod record file"),
    ),
    BadInput(
        "a device inventory that is binary",
        ("admit", PODS, "-m", "dual-socket-ht", "--devices", "{tmp}/inv"),
        (("inv", bytes(range(128, 256))),),
        ("{tmp}/inv", "not UTF-8"),
    ),
    BadInput(
        "a pod file that is binary",
        ("admit", "{tmp}/p.yaml", "-m", "dual-socket-ht"),
        (("p.yaml", b"\x80\x81\x82"),),
        ("{tmp}/p.yaml", "not UTF-8"),
    ),
    BadInput(
        "a kubelet config that is binary",
        ("admit", PODS, "-m", "dual-socket-ht", "-c", "{tmp}/k.yaml"),
        (("k.yaml", b"\xc3\x28"),),
        ("{tmp}/k.yaml", "not UTF-8"),
    ),
    BadInput(
        "an empty pod file",
        ("admit", "{tmp}/p.yaml", "-m", "dual-socket-ht"),
        (("p.yaml", b"\n---\n# nothing\n"),),
        ("{tmp}/p.yaml", "no pods in the file"),
    ),
    BadInput(
        "a directory as the pod file",
        ("admit", "{tmp}", "-m", "dual-socket-ht"),
        (),
        ("{tmp}", "is a directory"),
    ),
    BadInput(
        "a directory as the kubelet config",
        ("admit", PODS, "-m", "dual-socket-ht", "-c", "{tmp}"),
        (),
        ("{tmp}", "is a directory"),
    ),
    BadInput(
        "a pod file that does not exist",
        ("admit", "{tmp}/missing.yaml", "-m", "dual-socket-ht"),
        (),
        ("{tmp}/missing.yaml", "No such file"),
    ),
    BadInput(
        "an endless device inventory",
        ("admit", PODS, "-m", "dual-socket-ht", "--devices", "/dev/zero"),
        (),
        ("/dev/zero", "larger than"),
    ),
    BadInput(
        "a directory where a checkpoint should be",
        ("admit", PODS, "-m", "dual-socket-ht", "-c", BEST_EFFORT, "--state-dir", "{tmp}/s"),
        (("s/cpu_manager_state/x", b""),),
        ("{tmp}/s/cpu_manager_state",),
    ),
    BadInput(
        "a damaged device checkpoint",
        ("admit", PODS, "-m", "dual-socket-ht", "-c", BEST_EFFORT, "--state-dir", "{tmp}/s"),
        (("s/kubelet_internal_checkpoint", b'{"Data":'),),
        ("{tmp}/s/kubelet_internal_checkpoint",),
    ),
    BadInput(
        "a state directory that is a file",
        ("admit", PODS, "-m", "dual-socket-ht", "--state-dir", "{tmp}/s"),
        (("s", b""),),
        ("{tmp}/s", "is a file"),
    ),
    BadInput(
        "an unknown output format",
        ("admit", PODS, "-m", "dual-socket-ht", "-o", "xml"),
        (),
        ("--output", "xml"),
    ),
    BadInput(
        "an unknown option",
        ("release", "web", "--stat-dir", "{tmp}"),
        (),
        ("--stat-dir",),
    ),
    BadInput(
        "a bad device rule",
        ("admit", PODS, "-m", "dual-socket-ht", "--device-rule", "gpu"),
        (),
        ("--device-rule",),
    ),
    BadInput(
        "a device plugin for cpu",
        ("device-plugin", "pci", "--resource", "cpu", "--vendor", "10de"),
        (),
        ("--resource", '"cpu" is invalid'),
    ),
    BadInput(
        "a device plugin poll interval that is not a number",
        ("device-plugin", "pci", "--resource", "a.io/b", "--vendor", "1", "--poll-interval", "nan"),
        (),
        ("--poll-interval", "not a finite number"),
    ),
    BadInput(
        "a device plugin directory that cannot be created",
        (
            "device-plugin",
            "pci",
            "--resource",
            "a.io/b",
            "--vendor",
            "1",
            "--plugin-dir",
            "{tmp}/f/d",
        ),
        (("f", b""),),
        ("{tmp}/f/d", "cannot create the directory"),
    ),
)


@pytest.mark.parametrize("case", BAD_INPUTS, ids=lambda c: c.name)
def test_bad_input_is_one_line_naming_it(case: BadInput, tmp_path: Path) -> None:
    for name, data in case.files:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    outcome = invoke(*(a.replace("{tmp}", str(tmp_path)) for a in case.argv))
    assert_one_line_error(outcome, *(n.replace("{tmp}", str(tmp_path)) for n in case.names))
    assert outcome.out == ""
    # Refused means untouched: no file created or removed.
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before


# -- inventories claim nothing the machine lacks ---------------------------------------------


@dataclass(frozen=True)
class BadInventory:
    name: str
    text: str
    field: str
    words: str


BAD_INVENTORIES = (
    BadInventory("devices under cpu", "resources: {cpu: [{id: a}]}", "resources.cpu", "extended"),
    BadInventory("devices under memory", "resources: {memory: [{id: a}]}", "resources.memory", ""),
    BadInventory(
        "devices under hugepages",
        "resources: {hugepages-2Mi: [{id: a}]}",
        "resources.hugepages-2Mi",
        "",
    ),
    BadInventory(
        "a kubernetes.io resource",
        "resources: {kubernetes.io/gpu: [{id: a}]}",
        "resources.kubernetes.io/gpu",
        "outside kubernetes.io",
    ),
    BadInventory(
        "a NUMA node the machine lacks",
        "resources: {example.com/gpu: [{id: a, numa: 0}, {id: b, numa: [1, 2]}]}",
        "resources.example.com/gpu[1].numa",
        "no NUMA node 2 (its nodes: 0,1)",
    ),
)


@pytest.mark.parametrize("case", BAD_INVENTORIES, ids=lambda c: c.name)
def test_inventory_claiming_what_the_machine_lacks_is_refused(
    case: BadInventory, tmp_path: Path
) -> None:
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text(case.text)
    outcome = invoke("admit", PODS, "-m", "dual-socket-ht", "--devices", str(inventory))
    assert_one_line_error(outcome, f"{inventory}: {case.field}", case.words)


# -- output prints what it is given ----------------------------------------------------------


@dataclass(frozen=True)
class Literal:
    name: str
    pod: str
    expected: tuple[str, ...]


LITERALS = (
    Literal(
        "markup in pod and container names",
        _pod(name="[bold]web[/bold]", container="[red]c[/red]"),
        ("pod default/[bold]web[/bold]: admitted", "[red]c[/red]"),
    ),
    Literal(
        "emoji codes in a name",
        _pod(name=":smile:"),
        ("pod default/:smile:: admitted",),
    ),
    Literal(
        "the memory manager's tag in a kubelet message",
        _pod(memory="200Gi"),
        ("Allocate failed due to [memorymanager] ",),
    ),
)


@pytest.mark.parametrize("case", LITERALS, ids=lambda c: c.name)
def test_table_output_prints_names_and_messages_as_they_are(case: Literal, tmp_path: Path) -> None:
    pod = tmp_path / "pod.yaml"
    pod.write_text(case.pod)
    outcome = invoke("admit", str(pod), "-m", SMALL, "-c", _best_effort_static(tmp_path))
    assert outcome.code in (0, 1), outcome
    for text in case.expected:
        assert text in outcome.out, outcome.out


def _best_effort_static(tmp_path: Path) -> str:
    # Static CPU and memory managers under best-effort: a 200Gi pod reaches the memory
    # manager, whose refusal message starts with its "[memorymanager]" tag.
    config = tmp_path / "kubelet.yaml"
    text = Path(STATIC).read_text().replace("single-numa-node", "best-effort")
    config.write_text(text)
    return str(config)


# -- a checkpoint that does not fit is named -------------------------------------------------


@dataclass(frozen=True)
class Mismatch:
    name: str
    second_machine: str
    second_config: Callable[[Path], str]
    file: str
    words: str


MISMATCHES = (
    Mismatch(
        "fewer CPUs than the CPU checkpoint",
        SMALL.replace("cores-per-numa=4", "cores-per-numa=3"),
        _best_effort_static,
        "cpu_manager_state",
        "doesn't match with CPUs in state",
    ),
    Mismatch(
        "less memory than the memory checkpoint",
        SMALL.replace("64Gi", "32Gi"),
        _best_effort_static,
        "memory_manager_state",
        "machine state is different",
    ),
    Mismatch(
        "another memory policy",
        SMALL,
        lambda _: BEST_EFFORT,
        "memory_manager_state",
        'configured policy "None" differs',
    ),
)


@pytest.mark.parametrize("case", MISMATCHES, ids=lambda c: c.name)
def test_a_checkpoint_that_does_not_fit_is_named(case: Mismatch, tmp_path: Path) -> None:
    """Not blamed on the kubelet configuration: the checkpoint file is the input at fault."""
    pod = tmp_path / "pod.yaml"
    pod.write_text(_pod())
    state = tmp_path / "state"
    first = invoke(
        "admit",
        str(pod),
        "-m",
        SMALL,
        "-c",
        _best_effort_static(tmp_path),
        "--state-dir",
        str(state),
    )
    assert first.code == 0, first
    before = {p.name: p.read_bytes() for p in state.iterdir()}
    outcome = invoke(
        "admit",
        str(pod),
        "-m",
        case.second_machine,
        "-c",
        case.second_config(tmp_path),
        "--state-dir",
        str(state),
    )
    assert_one_line_error(outcome, f"{state / case.file}: ", case.words)
    assert {p.name: p.read_bytes() for p in state.iterdir()} == before


# -- release -------------------------------------------------------------------------------


def test_release_refuses_a_name_two_pods_share(tmp_path: Path) -> None:
    pods = tmp_path / "pods.yaml"
    pods.write_text(
        _pod(name="web")
        + "---\n"
        + _pod(name="web").replace('name: "web"}', "name: web, namespace: other}")
    )
    state = tmp_path / "state"
    common = ("-m", SMALL, "-c", _best_effort_static(tmp_path), "--state-dir", str(state))
    assert invoke("admit", str(pods), *common).code == 0
    outcome = invoke("release", "web", *common)
    assert_one_line_error(outcome, "'web' names several pods (default/web, other/web)")
    released: Outcome = invoke("release", "other/web", *common)
    assert released.code == 0
    doc = json.loads((state / "numaplane_pods.json").read_text())
    assert [p["metadata"]["namespace"] for p in doc["pods"]] == ["default"]
