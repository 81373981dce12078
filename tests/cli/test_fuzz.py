"""Fuzzing every input ``admit``, ``release`` and ``machine`` read: kubelet configurations,
device inventories, the files of a state directory, and the command line itself.

The only acceptable outcomes are an answer (exit 0 or 1) or exit 2 with ONE ``error:`` line
naming the input; anything else (a traceback, several lines) fails. Runs in-process; example
counts stay modest so the suite stays quick on a small machine.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from numaplane.node.cpumanager.checkpoint import CPUManagerCheckpoint
from numaplane.node.devicemanager import checkpoint as device_codec
from numaplane.node.memorymanager import checkpoint as memory_codec
from numaplane.node.statedir import STATE_FILES
from tests.cli.helpers import Outcome, invoke

REPO = Path(__file__).resolve().parents[2]
CONFIGS = sorted((REPO / "examples").glob("kubelet-*.yaml")) + sorted(
    (REPO / "examples" / "worked").glob("kubelet-*.yaml")
)
STATIC = REPO / "examples" / "kubelet-static-cpu.yaml"
MACHINE = (
    "sockets=2,numa-per-socket=1,cores-per-numa=4,threads-per-core=2,"
    "memory-per-numa=64Gi,gpus-per-numa=2"
)
POD = """\
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers: [{name: c, resources: {limits: {cpu: "2", memory: 1Gi, nvidia.com/gpu: "1"}}}]
"""
INVENTORY = """\
resources:
  example.com/gpu:
    - {id: gpu0, numa: 0}
    - {id: gpu1, numa: [0, 1]}
    - {id: gpu2}
    - {id: gpu3, numa: 1, healthy: false}
"""

FUZZ = settings(
    max_examples=40,
    deadline=None,  # no timed assertions: a loaded CI machine must not fail a correct case
    suppress_health_check=[HealthCheck.too_slow],
    database=None,
)


def assert_answer_or_one_line(outcome: Outcome, *names: str) -> None:
    """An answer, or exit 2 with one ``error:`` line naming every one of ``names``."""
    if outcome.code in (0, 1):
        return
    assert outcome.code == 2, outcome
    lines = outcome.error_lines
    assert len(lines) == 1, outcome.err
    assert lines[0].startswith("error: "), lines
    for name in names:
        assert name in lines[0], (name, lines[0])


@pytest.fixture(scope="module")
def scratch() -> Iterator[Path]:
    """A module-wide scratch directory (hypothesis reuses it across examples)."""
    with tempfile.TemporaryDirectory(prefix="numaplane-fuzz-") as name:
        folder = Path(name)
        (folder / "pod.yaml").write_text(POD)
        yield folder


# -- mutations ------------------------------------------------------------------------------


@st.composite
def mutated_bytes(draw: st.DrawFn, valid: bytes) -> bytes:
    """``valid`` truncated, with bytes flipped, spliced with random bytes, or random bytes."""
    kind = draw(st.sampled_from(["truncate", "flip", "splice", "random"]))
    if kind == "random":
        return draw(st.binary(max_size=512))
    if kind == "truncate":
        return valid[: draw(st.integers(0, max(0, len(valid) - 1)))]
    position = draw(st.integers(0, max(0, len(valid) - 1)))
    if kind == "flip":
        out = bytearray(valid)
        if out:
            out[position] ^= draw(st.integers(1, 255))
        return bytes(out)
    return valid[:position] + draw(st.binary(min_size=1, max_size=16)) + valid[position:]


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False)
    | st.text(max_size=12)
    | st.sampled_from(["0-3", "0-99999", "1,3-5", "-1", "memory", "cpu", "Static", "static"]),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)


@st.composite
def mutated_document(draw: st.DrawFn, document: Any) -> Any:
    """``document`` with one value (at any depth) replaced, or one key removed."""
    if not isinstance(document, dict | list) or not document or draw(st.integers(0, 3)) == 0:
        return draw(JSON_VALUES)
    if isinstance(document, dict):
        key = draw(st.sampled_from(sorted(document)))
        copy = dict(document)
        if draw(st.booleans()) and draw(st.integers(0, 4)) == 0:
            del copy[key]
        else:
            copy[key] = draw(mutated_document(document[key]))
        return copy
    index = draw(st.integers(0, len(document) - 1))
    items = list(document)
    items[index] = draw(mutated_document(document[index]))
    return items


def _yaml_mutations(valid: str) -> st.SearchStrategy[bytes]:
    import yaml

    document = yaml.safe_load(valid)
    return st.one_of(
        mutated_bytes(valid.encode()),
        mutated_document(document).map(lambda d: yaml.safe_dump(d).encode()),
        st.text(max_size=200).map(str.encode),
    )


# -- kubelet configurations (-c) -----------------------------------------------------------


@FUZZ
@given(data=st.data())
def test_fuzzed_kubelet_config(scratch: Path, data: st.DataObject) -> None:
    valid = data.draw(st.sampled_from(CONFIGS)).read_text()
    config = scratch / "kubelet.yaml"
    config.write_bytes(data.draw(_yaml_mutations(valid)))
    outcome = invoke("admit", str(scratch / "pod.yaml"), "-m", MACHINE, "-c", str(config))
    assert_answer_or_one_line(outcome, str(config))


# -- device inventories (--devices) ---------------------------------------------------------

INVENTORY_ENTRIES = st.fixed_dictionaries(
    {},
    optional={
        "id": st.one_of(st.text(max_size=8), st.integers(-5, 5), st.none(), st.booleans()),
        "numa": st.one_of(
            st.integers(-2, 70), st.lists(st.integers(-2, 70), max_size=3), st.text(max_size=3)
        ),
        "healthy": st.one_of(st.booleans(), st.integers(0, 1), st.none()),
    },
)
INVENTORIES = st.fixed_dictionaries(
    {
        "resources": st.dictionaries(
            st.one_of(
                st.sampled_from(["example.com/gpu", "cpu", "memory", "hugepages-2Mi", "a/b/c"]),
                st.text(max_size=12),
            ),
            st.lists(INVENTORY_ENTRIES, max_size=4),
            max_size=3,
        )
    }
)


@FUZZ
@given(data=st.data())
def test_fuzzed_inventory(scratch: Path, data: st.DataObject) -> None:
    import yaml

    inventory = scratch / "inventory.yaml"
    text = data.draw(
        st.one_of(
            _yaml_mutations(INVENTORY),
            INVENTORIES.map(lambda d: yaml.safe_dump(d).encode()),
        )
    )
    inventory.write_bytes(text)
    outcome = invoke("admit", str(scratch / "pod.yaml"), "-m", MACHINE, "--devices", str(inventory))
    assert_answer_or_one_line(outcome, str(inventory))


# -- the files of a state directory (--state-dir) -------------------------------------------


@pytest.fixture(scope="module")
def valid_state(scratch: Path) -> Path:
    """A state directory holding one admitted pod (CPUs, memory and a GPU)."""
    state = scratch / "valid-state"
    outcome = invoke(
        "admit",
        str(scratch / "pod.yaml"),
        "-m",
        MACHINE,
        "-c",
        str(STATIC),
        "--state-dir",
        str(state),
    )
    assert outcome.code == 0, outcome
    return state


def _run_on_state(scratch: Path, valid_state: Path, name: str, content: bytes) -> None:
    state = scratch / "state"
    shutil.rmtree(state, ignore_errors=True)
    shutil.copytree(valid_state, state)
    (state / name).write_bytes(content)
    common = ("-m", MACHINE, "-c", str(STATIC), "--state-dir", str(state))
    for argv in (("release", "p"), ("admit", str(scratch / "pod.yaml"))):
        outcome = invoke(*argv, *common)
        # Any state file may be the one blamed, but it must be named as a file of the
        # directory (or the directory itself).
        assert_answer_or_one_line(outcome, str(state))


@FUZZ
@given(data=st.data())
def test_fuzzed_state_file(scratch: Path, valid_state: Path, data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(STATE_FILES))
    valid = (valid_state / name).read_bytes()
    content = data.draw(
        st.one_of(
            mutated_bytes(valid),
            mutated_document(json.loads(valid)).map(lambda d: json.dumps(d).encode()),
        )
    )
    _run_on_state(scratch, valid_state, name, content)


CPUSET_TEXT = st.one_of(
    st.sampled_from(["", "0", "0-15", "0-3,8-11", "16", "0-63", "3-1", "0-4294967296", "a"]),
    st.text(alphabet="0123456789,-", max_size=12),
)


@FUZZ
@given(
    policy=st.sampled_from(["static", "none", "Static", ""]),
    default=CPUSET_TEXT,
    entries=st.dictionaries(
        st.text(max_size=6),
        st.dictionaries(st.text(max_size=4), CPUSET_TEXT, max_size=2),
        max_size=3,
    ),
)
def test_fuzzed_cpu_checkpoint_with_a_valid_checksum(
    scratch: Path, valid_state: Path, policy: str, default: str, entries: dict[str, dict[str, str]]
) -> None:
    """Past the checksum: CPU sets the machine lacks, overlaps, pods nobody recorded."""
    content = CPUManagerCheckpoint(policy, default, entries).to_bytes()
    _run_on_state(scratch, valid_state, "cpu_manager_state", content)


# -- the command line ---------------------------------------------------------------------

MACHINE_VALUES = st.one_of(
    st.sampled_from(["dual-socket-ht", "single-socket-ht", "/", "", "sockets=0", MACHINE]),
    st.builds(
        lambda s, n, c, t: (
            f"sockets={s},numa-per-socket={n},cores-per-numa={c},threads-per-core={t}"
        ),
        st.integers(-1, 4),
        st.integers(-1, 4),
        st.integers(-1, 8),
        st.integers(-1, 4),
    ),
    st.text(max_size=20),
)
OPTION_VALUES = st.one_of(st.text(max_size=10), st.integers(-(2**65), 2**65).map(str))


@FUZZ
@given(
    command=st.sampled_from(["admit", "release", "machine show", "machine presets"]),
    machine=MACHINE_VALUES,
    extra=st.lists(
        st.tuples(
            st.sampled_from(
                ["-o", "--output", "--device-rule", "--explain", "-c", "--bogus", "--"]
            ),
            OPTION_VALUES,
        ),
        max_size=2,
    ),
    refs=st.lists(st.text(max_size=8), max_size=2),
)
def test_fuzzed_command_line(
    scratch: Path,
    valid_state: Path,
    command: str,
    machine: str,
    extra: list[tuple[str, str]],
    refs: list[str],
) -> None:
    argv = command.split()
    if command == "admit":
        argv.append(str(scratch / "pod.yaml"))
    if command == "release":
        state = scratch / "cli-state"
        shutil.rmtree(state, ignore_errors=True)
        shutil.copytree(valid_state, state)
        argv += [*refs, "--state-dir", str(state)]
    if command != "machine presets":
        argv += ["-m", machine]
    for option, value in extra:
        argv += [option] if option == "--explain" else [option, value]
    assert_answer_or_one_line(invoke(*argv))


SIZES = st.one_of(
    st.integers(-1, 4), st.integers(0, 2**64 - 1), st.sampled_from([2**63 - 1, 64 << 30])
)
NUMA_IDS = st.one_of(st.integers(-1, 3), st.sampled_from([63, 64, 10**6]))
MEMORY_TABLES = st.builds(memory_codec.MemoryTable, SIZES, SIZES, SIZES, SIZES, SIZES)
MEMORY_NODES = st.builds(
    memory_codec.NUMANodeState,
    st.integers(-1, 5),
    st.dictionaries(st.sampled_from(["memory", "hugepages-2Mi", "x"]), MEMORY_TABLES, max_size=2),
    st.one_of(st.none(), st.lists(NUMA_IDS, max_size=3).map(tuple)),
)
MEMORY_BLOCKS = st.builds(
    memory_codec.Block,
    st.lists(NUMA_IDS, max_size=3).map(tuple),
    st.sampled_from(["memory", "hugepages-1Gi", "x"]),
    SIZES,
)


@FUZZ
@given(
    policy=st.sampled_from(["Static", "None", "static"]),
    nodes=st.dictionaries(NUMA_IDS, MEMORY_NODES, max_size=3),
    entries=st.dictionaries(
        st.sampled_from(["pod", "0f1e", ""]),
        st.dictionaries(
            st.sampled_from(["c", ""]), st.lists(MEMORY_BLOCKS, max_size=2).map(tuple), max_size=2
        ),
        max_size=2,
    ),
)
def test_fuzzed_memory_checkpoint_with_a_valid_checksum(
    scratch: Path,
    valid_state: Path,
    policy: str,
    nodes: dict[int, memory_codec.NUMANodeState],
    entries: dict[str, dict[str, tuple[memory_codec.Block, ...]]],
) -> None:
    """Past the checksum: NUMA nodes the machine lacks, sizes beyond any machine, blocks on
    nodes that are not there."""
    try:
        content = memory_codec.MemoryManagerCheckpoint(policy, nodes, entries).to_bytes(1)
    except (ValueError, OverflowError):
        return  # not a file the kubelet could have written (an int beyond Go's types)
    _run_on_state(scratch, valid_state, "memory_manager_state", content)


DEVICE_IDS = st.sampled_from(["0000:10:00.0", "0000:11:00.0", "gpu0", ""])
DEVICE_ENTRIES = st.builds(
    device_codec.PodDevicesEntry,
    st.sampled_from(["pod", "0f1e", ""]),
    st.sampled_from(["c", ""]),
    st.sampled_from(["nvidia.com/gpu", "cpu", "example.com/x"]),
    st.dictionaries(NUMA_IDS, st.lists(DEVICE_IDS, max_size=3).map(tuple), max_size=2),
    st.binary(max_size=8),
)


@FUZZ
@given(
    entries=st.one_of(st.none(), st.lists(DEVICE_ENTRIES, max_size=3).map(tuple)),
    registered=st.dictionaries(
        st.sampled_from(["nvidia.com/gpu", "cpu", "example.com/x"]),
        st.lists(DEVICE_IDS, max_size=3).map(tuple),
        max_size=2,
    ),
)
def test_fuzzed_device_checkpoint_with_a_valid_checksum(
    scratch: Path,
    valid_state: Path,
    entries: tuple[device_codec.PodDevicesEntry, ...] | None,
    registered: dict[str, tuple[str, ...]],
) -> None:
    """Past the checksum: devices the machine lacks, on NUMA nodes it lacks, held twice."""
    unsummed = device_codec.DeviceManagerCheckpoint(entries, registered)
    checkpoint = device_codec.DeviceManagerCheckpoint(
        entries, registered, checksum=unsummed.compute_checksum()
    )
    _run_on_state(scratch, valid_state, "kubelet_internal_checkpoint", checkpoint.to_bytes())
