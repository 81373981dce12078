"""``numaplane admit`` and ``numaplane release``: the kubelet's admission decision, predicted.

Exit status of ``admit``: 0 when every pod was admitted, 1 when any was rejected, 2 on bad input.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import yaml
from rich.console import Console
from rich.table import Table
from rich.text import Text

from numaplane.api.kubeletconfig import KubeletConfiguration
from numaplane.api.pod import Pod
from numaplane.cli.inputs import read_kubelet_config, read_pods, read_text
from numaplane.cli.options import machine_option
from numaplane.cli.render import console, styled
from numaplane.errors import InputError, NumaplaneError
from numaplane.node.admission import Admission, Node, NodeStates
from numaplane.node.checkpoint import CheckpointError, ContainerMap, container_map
from numaplane.node.devicemanager.inventory import (
    DEFAULT_PCI_RULES,
    PCIRule,
    devices_from_machine,
    parse_inventory,
    sources_of,
)
from numaplane.node.devicemanager.source import DeviceSource
from numaplane.node.statedir import (
    CPU_FILE,
    DEVICE_FILE,
    MEMORY_FILE,
    STATE_FILES,
    StateDirError,
    StateFiles,
    commit_files,
    encode_states,
    locked,
    recover,
)
from numaplane.topology.model import Machine

OUTPUTS = ("table", "json", "yaml")


@dataclass
class _Session:
    """A node for one command; ``commit`` writes its state back (a no-op without a state dir)."""

    node: Node
    commit: Callable[[], None]


def _device_sources(
    machine: Machine, inventory: Path | None, rules: Sequence[str]
) -> list[DeviceSource]:
    if inventory is not None:
        parsed = parse_inventory(read_text(inventory), str(inventory), numa_nodes=machine.numa_ids)
        return list(sources_of(parsed))
    rule_list = [PCIRule.parse(r) for r in rules] if rules else list(DEFAULT_PCI_RULES)
    return list(sources_of(devices_from_machine(machine, rule_list)))


@contextmanager
def _session(
    machine: Machine,
    config_path: Path | None,
    state_dir: Path | None,
    inventory: Path | None,
    rules: Sequence[str],
    known_pods: Sequence[Pod] = (),
    *,
    create: bool,
) -> Iterator[_Session]:
    """The node, restored from ``state_dir`` (held locked meanwhile) when one is given.

    Nothing is written until ``commit``; then every state file is replaced together. Without
    ``create``, a missing ``state_dir`` is an error rather than a new, empty node.
    """
    config = read_kubelet_config(config_path)
    label = str(config_path) if config_path is not None else "kubelet defaults"
    sources = _device_sources(machine, inventory, rules)

    def build(files: StateFiles | None, containers: ContainerMap | None = None) -> Node:
        return _node(machine, config, label, sources, files, containers)

    if state_dir is None:
        yield _Session(build(None), lambda: None)
        return
    if state_dir.exists() and not state_dir.is_dir():
        raise StateDirError(state_dir, "state directory is not a directory")
    if not state_dir.exists():
        if not create:
            raise StateDirError(
                state_dir, "no such state directory (numaplane admit --state-dir creates one)"
            )
        node = build(None)
        yield _Session(node, lambda: _commit_new(state_dir, _encode(node, config)))
        return
    with locked(state_dir):
        files = StateFiles.read(state_dir)
        recorded = files.pods()
        # The kubelet's container map: the containers of every pod known here, so that a CPU
        # manager checkpoint of the V1 layout (keyed by container ID) can be migrated.
        node = build(files, container_map([*recorded, *known_pods]))
        for pod in recorded:
            node.adopt(pod)
        yield _Session(node, lambda: commit_files(state_dir, _encode(node, config)))


def _node(
    machine: Machine,
    config: KubeletConfiguration,
    label: str,
    sources: Sequence[DeviceSource],
    files: StateFiles | None,
    containers: ContainerMap | None = None,
) -> Node:
    def attempt(states: NodeStates) -> Node:
        return Node(machine, config, device_sources=sources, states=states)

    policies = (config.cpu_manager_policy, config.memory_manager_policy)
    try:
        states = (
            files.node_states(*policies, containers=containers)
            if files is not None
            else NodeStates()
        )
    except CheckpointError as err:
        # Unreadable, corrupt, or of another policy: the kubelet's words, after the file.
        raise InputError(err.source or label, str(err)) from err
    try:
        return attempt(states)
    except InputError:
        raise
    except NumaplaneError as err:
        # The kubelet refuses to start with this configuration, or with these checkpoints:
        # name the checkpoint that alone makes it refuse, else the configuration.
        if files is not None and _starts(attempt, NodeStates()):
            advice = "use the --machine and --config it was written with"
            for name in (CPU_FILE, MEMORY_FILE, DEVICE_FILE):
                if files.data[name] is not None and not _starts(
                    attempt, files.node_states(*policies, only=name, containers=containers)
                ):
                    raise InputError(
                        files.path(name),
                        f"{err} (this checkpoint does not fit the machine and configuration "
                        f"given: {advice})",
                    ) from err
            raise InputError(
                str(files.state_dir),
                f"{err} (these checkpoints together do not fit the machine and configuration "
                f"given: {advice})",
            ) from err
        raise InputError(label, str(err)) from err


def _starts(attempt: Callable[[NodeStates], Node], states: NodeStates) -> bool:
    try:
        attempt(states)
    except NumaplaneError:
        return False
    return True


def _encode(node: Node, config: KubeletConfiguration) -> dict[str, bytes]:
    return encode_states(
        node.states, node.pods, config.cpu_manager_policy, config.memory_manager_policy
    )


def _commit_new(state_dir: Path, files: dict[str, bytes]) -> None:
    try:
        state_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StateDirError(
            state_dir, f"cannot create state directory: {exc.strerror or exc}"
        ) from exc
    with locked(state_dir):
        recover(state_dir)
        if any((state_dir / name).exists() for name in STATE_FILES):
            raise StateDirError(
                state_dir, "another command wrote this state directory meanwhile; run again"
            )
        commit_files(state_dir, files)


@click.command(
    epilog="""\b
Examples:
  numaplane admit pod.yaml --machine dual-socket-ht --config examples/kubelet-single-numa-node.yaml
  numaplane admit a.yaml b.yaml -m 16amd64-8n2c.tar.bz2 -c kubelet.yaml --explain
  numaplane admit pods.yaml -m / -c kubelet.yaml --state-dir ./state -o json
"""
)
@click.argument("pods", nargs=-1, required=True, type=click.Path(path_type=Path))
@machine_option(default="/")
@click.option(
    "--config",
    "-c",
    "config_path",
    type=click.Path(path_type=Path),
    help="KubeletConfiguration YAML (kubelet.config.k8s.io/v1beta1). Default: kubelet defaults "
    "(every policy none).",
)
@click.option(
    "--state-dir",
    type=click.Path(path_type=Path, file_okay=False),
    help="Continue from, and checkpoint to, this directory (kubelet-format cpu_manager_state, "
    "memory_manager_state, kubelet_internal_checkpoint, plus the admitted pods). Every file "
    "is replaced together, or none is; one command at a time may use it. A V1 "
    "cpu_manager_state (keyed by container ID) is migrated through the containerIDs in the "
    "pods' status.containerStatuses.",
)
@click.option(
    "--devices",
    "inventory",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Device inventory YAML: resources: {nvidia.com/gpu: [{id: gpu0, numa: 0}, ...]}. "
    "Default: the machine's PCI devices matched by --device-rule.",
)
@click.option(
    "--device-rule",
    "rules",
    multiple=True,
    metavar="RESOURCE=VENDOR[:CLASS]",
    help="Expose PCI devices of VENDOR (and class prefix) as RESOURCE; repeatable. "
    "Default: nvidia.com/gpu=0x10de:0x03.",
)
@click.option("--explain", is_flag=True, help="Show every provider's hints and the merge.")
@click.option("--output", "-o", type=click.Choice(OUTPUTS), default="table", show_default=True)
def admit(
    pods: tuple[Path, ...],
    machine: Machine,
    config_path: Path | None,
    state_dir: Path | None,
    inventory: Path | None,
    rules: tuple[str, ...],
    explain: bool,
    output: str,
) -> None:
    """Predict the kubelet's admission of PODS, in order, on a machine.

    Each file may hold several Pod manifests (YAML documents or a List). For every pod this
    prints admit or reject with the kubelet's reason and message and, per container, the
    NUMA affinity, the CPUs (exclusive or the shared pool), memory blocks and devices.

    Exit status: 0 all admitted, 1 some rejected, 2 bad input.
    """
    to_admit = read_pods(pods)
    with _session(
        machine, config_path, state_dir, inventory, rules, to_admit, create=True
    ) as session:
        admitted = {p.uid for p in session.node.pods}
        for pod in to_admit:
            if pod.uid in admitted:
                raise InputError(
                    str(state_dir), f"pod {pod.key} is already admitted here; release it first"
                )
        results = [session.node.admit(pod) for pod in to_admit]
        session.commit()
    _print(results, output, explain, machine)
    sys.exit(0 if all(r.admitted for r in results) else 1)


@click.command(
    epilog="""\b
Example:
  numaplane release default/web-0 --state-dir ./state -m dual-socket-ht -c kubelet.yaml
"""
)
@click.argument("pods", nargs=-1, required=True)
@machine_option(default="/")
@click.option("--config", "-c", "config_path", type=click.Path(path_type=Path))
@click.option(
    "--state-dir",
    type=click.Path(path_type=Path, file_okay=False),
    required=True,
    help="The state directory a previous `numaplane admit --state-dir` wrote.",
)
@click.option("--devices", "inventory", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--device-rule", "rules", multiple=True, metavar="RESOURCE=VENDOR[:CLASS]")
def release(
    pods: tuple[str, ...],
    machine: Machine,
    config_path: Path | None,
    state_dir: Path,
    inventory: Path | None,
    rules: tuple[str, ...],
) -> None:
    """Release admitted PODS (NAME, NAMESPACE/NAME or UID) from a state directory.

    Their exclusive CPUs, memory and devices return to the node; the checkpoints are
    rewritten. Use the same --machine and --config as the admissions. Every name is checked
    first: an unknown or repeated one releases nothing.
    """
    with _session(machine, config_path, state_dir, inventory, rules, create=False) as session:
        chosen = _resolve(session.node.pods, pods, str(state_dir))
        for pod in chosen:
            session.node.release(pod.uid)
        session.commit()
    for pod in chosen:
        click.echo(f"released {pod.namespace}/{pod.name} ({pod.uid})")


def _resolve(admitted: Sequence[Pod], refs: Sequence[str], where: str) -> list[Pod]:
    """The pods ``refs`` name, all of them checked before any is released.

    A reference is a UID, ``NAMESPACE/NAME`` or a ``NAME`` that only one pod has.
    """
    chosen: dict[str, str] = {}
    pods: list[Pod] = []
    for ref in refs:
        matches = (
            [p for p in admitted if ref == p.uid]
            or [p for p in admitted if ref == p.key]
            or [p for p in admitted if ref == p.name]
        )
        if not matches:
            raise InputError(where, f"no admitted pod {ref!r}")
        if len(matches) > 1:
            keys = ", ".join(p.key for p in matches)
            raise InputError(where, f"{ref!r} names several pods ({keys}): use NAMESPACE/NAME")
        (pod,) = matches
        if pod.uid in chosen:
            raise InputError(where, f"pod {pod.key} is named twice ({chosen[pod.uid]!r}, {ref!r})")
        chosen[pod.uid] = ref
        pods.append(pod)
    return pods


# -- output -----------------------------------------------------------------------------


def _print(results: Sequence[Admission], output: str, explain: bool, machine: Machine) -> None:
    if output != "table":
        doc: dict[str, Any] = {
            "machine": machine.name,
            "pods": [r.to_json(explain=explain) for r in results],
        }
        if output == "json":
            click.echo(json.dumps(doc, indent=2))
        else:
            click.echo(yaml.safe_dump(doc, sort_keys=False), nl=False)
        return
    out = console(soft_wrap=True)
    for result in results:
        _print_table(out, result, explain)


def _print_table(out: Console, result: Admission, explain: bool) -> None:
    # Pod names, container names, device ids and the kubelet's messages are printed as they
    # are: the shared console takes no markup.
    verdict = styled("admitted", "green") if result.admitted else styled("rejected", "red")
    out.print(Text.assemble(f"pod {result.pod_namespace}/{result.pod_name}: ", verdict))
    if not result.admitted:
        out.print(f"  reason:  {result.reason}")
        out.print(f"  message: {result.message}")
    if result.containers:
        table = Table(show_edge=False, pad_edge=False, box=None, padding=(0, 2, 0, 2))
        for column in ("container", "numa", "cpus", "memory", "devices"):
            table.add_column(column)
        for c in result.containers:
            kind = " (init)" if c.init and not c.restartable else " (sidecar)" if c.init else ""
            numa = "-" if c.affinity is None else _hint_text(c.affinity.to_json())
            cpus = f"{c.cpus} exclusive" if c.exclusive_cpus else f"{c.cpus} shared"
            memory = ", ".join(
                f"{b.resource} {_size(b.size)} on {','.join(map(str, b.numa_nodes))}"
                for b in c.memory
            )
            devices = ", ".join(f"{r}: {' '.join(ids)}" for r, ids in c.devices.items())
            table.add_row(c.name + kind, numa, cpus, memory or "-", devices or "-")
        out.print(table)
    if explain:
        for line in result.topology.explanation.render_text().splitlines():
            out.print("  " + line)
    out.print()


def _hint_text(hint: dict[str, Any]) -> str:
    numa = hint["numa"]
    text = "any" if numa is None else ",".join(map(str, numa))
    return text + ("" if hint["preferred"] else " (not preferred)")


def _size(n: int) -> str:
    for suffix, factor in (("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)):
        if n >= factor and n % factor == 0:
            return f"{n // factor}{suffix}"
    return str(n)
