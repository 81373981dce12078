"""``numaplane admit`` and ``numaplane release``: the kubelet's admission decision, predicted.

Exit status of ``admit``: 0 when every pod was admitted, 1 when any was rejected, 2 on bad input.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import yaml
from rich.console import Console
from rich.table import Table

from numaplane.api.kubeletconfig import KubeletConfiguration, load_kubelet_config
from numaplane.api.manifest import load_pods
from numaplane.api.pod import Pod
from numaplane.cli.options import machine_option
from numaplane.errors import InputError, NumaplaneError
from numaplane.node.admission import Admission, Node, NodeStates
from numaplane.node.checkpoint import CheckpointStore, container_map
from numaplane.node.devicemanager.inventory import (
    DEFAULT_PCI_RULES,
    PCIRule,
    devices_from_machine,
    parse_inventory,
    sources_of,
)
from numaplane.node.devicemanager.source import DeviceSource
from numaplane.node.podrecords import PodRecords
from numaplane.node.statedir import ensure_writable_dir, open_node_states
from numaplane.topology.model import Machine

OUTPUTS = ("table", "json", "yaml")


@dataclass
class _Session:
    node: Node
    records: PodRecords | None


def _device_sources(
    machine: Machine, inventory: Path | None, rules: Sequence[str]
) -> list[DeviceSource]:
    if inventory is not None:
        try:
            text = inventory.read_text()
        except OSError as err:
            raise InputError(str(inventory), err.strerror or str(err)) from err
        return list(sources_of(parse_inventory(text, str(inventory))))
    parsed = [PCIRule.parse(r) for r in rules] if rules else list(DEFAULT_PCI_RULES)
    return list(sources_of(devices_from_machine(machine, parsed)))


@contextmanager
def _session(
    machine: Machine,
    config_path: Path | None,
    state_dir: Path | None,
    inventory: Path | None,
    rules: Sequence[str],
    known_pods: Sequence[Pod] = (),
) -> Iterator[_Session]:
    config = (
        load_kubelet_config(config_path)
        if config_path is not None
        else KubeletConfiguration.default()
    )
    sources = _device_sources(machine, inventory, rules)
    label = str(config_path) if config_path is not None else "kubelet defaults"
    records: PodRecords | None = None
    recorded: list[Pod] = []
    states = NodeStates()
    if state_dir is not None:
        ensure_writable_dir(state_dir)
        records = PodRecords(CheckpointStore(state_dir))
        recorded = records.load()
        # The kubelet's container map: the containers of every pod known here, so that a CPU
        # manager checkpoint of the V1 layout (keyed by container ID) can be migrated.
        states = open_node_states(
            state_dir,
            config.cpu_manager_policy,
            config.memory_manager_policy,
            initial_containers=container_map([*recorded, *known_pods]),
        )
    try:
        node = Node(machine, config, device_sources=sources, states=states)
    except InputError:
        raise
    except NumaplaneError as err:
        # The kubelet refuses to start with this configuration (or this state): say which.
        raise InputError(label, str(err)) from err
    for pod in recorded:
        node.adopt(pod)
    yield _Session(node, records)


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
    "memory_manager_state, kubelet_internal_checkpoint, plus the admitted pods). A V1 "
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
    to_admit: list[Pod] = []
    first_seen: dict[str, Path] = {}
    for path in pods:
        for pod in load_pods(path):
            if pod.uid in first_seen:
                raise InputError(
                    str(path), f"pod {pod.key} is given twice (first in {first_seen[pod.uid]})"
                )
            first_seen[pod.uid] = path
            to_admit.append(pod)
    with _session(machine, config_path, state_dir, inventory, rules, to_admit) as session:
        for pod in to_admit:
            if pod.uid in {p.uid for p in session.node.pods}:
                raise InputError(
                    str(first_seen[pod.uid]),
                    f"pod {pod.key} is already admitted in {state_dir}; release it first",
                )
        results = [session.node.admit(pod) for pod in to_admit]
        if session.records is not None:
            session.records.save(session.node.pods)
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
    rewritten. Use the same --machine and --config as the admissions.
    """
    with _session(machine, config_path, state_dir, inventory, rules) as session:
        for ref in pods:
            pod = _find_pod(session.node.pods, ref, str(state_dir))
            session.node.release(pod.uid)
            click.echo(f"released {pod.namespace}/{pod.name} ({pod.uid})")
        if session.records is not None:
            session.records.save(session.node.pods)


def _find_pod(pods: Sequence[Pod], ref: str, where: str) -> Pod:
    for pod in pods:
        if ref in (pod.uid, pod.name, f"{pod.namespace}/{pod.name}"):
            return pod
    raise InputError(where, f"no admitted pod {ref!r}")


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
    console = Console(highlight=False, soft_wrap=True)
    for result in results:
        _print_table(console, result, explain)


def _print_table(console: Console, result: Admission, explain: bool) -> None:
    verdict = "[green]admitted[/]" if result.admitted else "[red]rejected[/]"
    console.print(f"pod {result.pod_namespace}/{result.pod_name}: {verdict}")
    if not result.admitted:
        console.print(f"  reason:  {result.reason}")
        console.print(f"  message: {result.message}")
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
        console.print(table)
    if explain:
        for line in result.topology.explanation.render_text().splitlines():
            console.print("  " + line, markup=False)
    console.print()


def _hint_text(hint: dict[str, Any]) -> str:
    numa = hint["numa"]
    text = "any" if numa is None else ",".join(map(str, numa))
    return text + ("" if hint["preferred"] else " (not preferred)")


def _size(n: int) -> str:
    for suffix, factor in (("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)):
        if n >= factor and n % factor == 0:
            return f"{n // factor}{suffix}"
    return str(n)
