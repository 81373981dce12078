"""A ``cpu_manager_state`` of the V1 layout (entries keyed by container ID), restored from a real
file and migrated through the container map, as upstream's ``state_checkpoint`` does.

The files are written by the test itself, with a checksum computed here independently of
numaplane's codec: the go-spew ``%#v`` rendering of ``*state.CPUManagerCheckpointV1`` with the
type name normalised to ``CPUManagerCheckpoint`` and ``Checksum`` 0, hashed with FNV-32a. The
rendering is pinned to upstream's own checksums of its V1 test files first.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from numaplane.api.manifest import ManifestError, pod_from_dict, pod_to_manifest
from numaplane.api.pod import Pod
from numaplane.node.checkpoint import CheckpointRestoreError, container_map
from numaplane.node.cpumanager.state_checkpoint import CheckpointState
from numaplane.topology.cpuset import CPUSet

NAME = "cpu_manager_state"


def fnv32a(data: bytes) -> int:
    """FNV-1a, 32 bits (``hash/fnv.New32a``), written out here rather than imported."""
    value = 0x811C9DC5
    for byte in data:
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return value


def v1_payload(
    policy: str, default: str, entries: dict[str, str], type_name: str = "CPUManagerCheckpoint"
) -> str:
    """go-spew's ``%#v`` of ``*state.CPUManagerCheckpointV1`` (``SortKeys``, ``Checksum`` 0),
    its type name as given: upstream's ``VerifyChecksum`` normalises it to the V2 name."""
    inner = " ".join(f"{key}:{entries[key]}" for key in sorted(entries))
    return (
        f"(*state.{type_name}){{PolicyName:(string){policy} DefaultCPUSet:(string){default} "
        f"Entries:(map[string]string)map[{inner}] Checksum:(checksum.Checksum)0}}"
    )


def v1_checksum(policy: str, default: str, entries: dict[str, str]) -> int:
    """The checksum a V1 kubelet stored for this content."""
    return fnv32a(v1_payload(policy, default, entries).encode())


@pytest.mark.parametrize(
    ("policy", "default", "entries", "upstream"),
    [
        ("none", "1-3", {"containerID1": "4-6", "containerID2": "1-3"}, 3680390589),
        ("static", "7-9", {"containerID1": "4-6", "containerID2": "1-3"}, 2026311253),
        ("none", "1-3", {}, 1694838852),
        ("none", "4-6", {}, 2912033808),
    ],
    ids=["with migration", "from v1 (migration)", "v1 checksum", "v1 default cpu set"],
)
def test_independent_v1_checksum_matches_upstream_test_files(
    policy: str, default: str, entries: dict[str, str], upstream: int
) -> None:
    """The test's own V1 checksum is upstream's (state_checkpoint_test.go, V1-era cases)."""
    assert v1_checksum(policy, default, entries) == upstream


def write_v1(
    state_dir: Path,
    policy: str,
    default: str,
    entries: dict[str, str] | None,
    checksum: int | None = None,
) -> bytes:
    """Write a V1 file as a V1 kubelet did (``entries`` omitted when ``None``); its bytes."""
    doc: dict[str, object] = {"policyName": policy, "defaultCpuSet": default}
    if entries is not None:
        doc["entries"] = entries
    doc["checksum"] = v1_checksum(policy, default, entries or {}) if checksum is None else checksum
    data = json.dumps(doc, separators=(",", ":")).encode()
    (state_dir / NAME).write_bytes(data)
    return data


POD_MAP = {"cid-a": ("pod1", "app"), "cid-b": ("pod1", "sidecar"), "cid-c": ("pod2", "db")}


@dataclass(frozen=True)
class MigrationCase:
    """A V1 file, the container map, and the migrated state or the restore error."""

    name: str
    policy: str
    default: str
    entries: dict[str, str] | None
    containers: dict[str, tuple[str, str]] = field(default_factory=lambda: dict(POD_MAP))
    configured: str | None = None
    checksum: int | None = None
    want_default: str = ""
    want: dict[str, dict[str, str]] = field(default_factory=dict)
    error: str | None = None


MIGRATIONS = [
    MigrationCase(
        "entries of two pods are keyed by pod and container",
        "static",
        "0-1,8-11",
        {"cid-a": "2-3", "cid-b": "4", "cid-c": "5-7"},
        want_default="0-1,8-11",
        want={"pod1": {"app": "2-3", "sidecar": "4"}, "pod2": {"db": "5-7"}},
    ),
    MigrationCase(
        "upstream: restore checkpoint with migration",
        "none",
        "1-3",
        {"containerID1": "4-6", "containerID2": "1-3"},
        containers={"containerID1": ("pod", "container1"), "containerID2": ("pod", "container2")},
        want_default="1-3",
        want={"pod": {"container1": "4-6", "container2": "1-3"}},
    ),
    MigrationCase(
        "a container map with more containers than the file is fine",
        "static",
        "0-1",
        {"cid-c": "2-3"},
        want_default="0-1",
        want={"pod2": {"db": "2-3"}},
    ),
    MigrationCase(
        "a file without entries needs no container map",
        "none",
        "1-3",
        None,
        containers={},
        want_default="1-3",
    ),
    MigrationCase(
        "checksum 0 is accepted unverified, then migrated",
        "static",
        "0",
        {"cid-a": "1"},
        checksum=0,
        want_default="0",
        want={"pod1": {"app": "1"}},
    ),
    MigrationCase(
        "a container the runtime does not know cannot be migrated",
        "static",
        "0-1",
        {"cid-a": "2", "cid-gone": "3"},
        error="failed to migrate checkpoint from v1 to v2: "
        "containerID 'cid-gone' not found in initial containers list",
    ),
    MigrationCase(
        "no container map at all",
        "static",
        "0-1",
        {"cid-a": "2"},
        containers={},
        error="containerID 'cid-a' not found in initial containers list",
    ),
    MigrationCase(
        "a V1 checksum that does not match is a corrupt file",
        "static",
        "0-1",
        {"cid-a": "2"},
        checksum=1337,
        error="checkpoint is corrupted",
    ),
    MigrationCase(
        "a migrated file of another policy is refused",
        "static",
        "0-1",
        {"cid-a": "2"},
        configured="none",
        error='configured policy "none" differs from state checkpoint policy "static"',
    ),
    MigrationCase(
        "a migrated entry that is no cpuset is refused naming pod and container",
        "static",
        "0-1",
        {"cid-b": "x"},
        error='could not parse cpuset "x" for container "sidecar" in pod "pod1": '
        'strconv.Atoi: parsing "x": invalid syntax',
    ),
]


@pytest.mark.parametrize("case", MIGRATIONS, ids=[c.name for c in MIGRATIONS])
def test_v1_file_is_restored_through_the_container_map(case: MigrationCase, tmp_path: Path) -> None:
    data = write_v1(tmp_path, case.policy, case.default, case.entries, case.checksum)
    configured = case.configured or case.policy
    if case.error is not None:
        with pytest.raises(CheckpointRestoreError) as failure:
            CheckpointState.open(tmp_path, configured, initial_containers=case.containers)
        message = str(failure.value)
        assert message.startswith("could not restore state from checkpoint: ")
        assert case.error in message
        assert "please drain this node and delete the CPU manager checkpoint file" in message
        assert failure.value.source == str(tmp_path / NAME)
    else:
        state = CheckpointState.open(tmp_path, configured, initial_containers=case.containers)
        assert state.get_default_cpu_set() == CPUSet.parse(case.want_default)
        want = {
            pod: {name: CPUSet.parse(cpus) for name, cpus in containers.items()}
            for pod, containers in case.want.items()
        }
        assert state.get_cpu_assignments() == want
    # Restoring never rewrites the file: the V2 layout is written by the next change only.
    assert (tmp_path / NAME).read_bytes() == data


def test_checksum_over_the_unnormalised_v1_type_name_is_corrupt(tmp_path: Path) -> None:
    """Only the normalised rendering verifies: a checksum over ``CPUManagerCheckpointV1`` fails."""
    entries = {"cid-a": "2"}
    raw = fnv32a(v1_payload("static", "0-1", entries, "CPUManagerCheckpointV1").encode())
    assert raw != v1_checksum("static", "0-1", entries)
    write_v1(tmp_path, "static", "0-1", entries, raw)
    with pytest.raises(CheckpointRestoreError, match="checkpoint is corrupted"):
        CheckpointState.open(tmp_path, "static", initial_containers=POD_MAP)


def test_migrated_state_is_written_in_the_current_layout_on_the_next_change(
    tmp_path: Path,
) -> None:
    write_v1(tmp_path, "static", "0-1,4-7", {"cid-a": "2-3"})
    state = CheckpointState.open(tmp_path, "static", initial_containers=POD_MAP)
    state.set_cpu_set("pod2", "db", CPUSet.parse("4"))
    doc = json.loads((tmp_path / NAME).read_text())
    assert doc["entries"] == {"pod1": {"app": "2-3"}, "pod2": {"db": "4"}}
    assert doc["defaultCpuSet"] == "0-1,4-7"
    reopened = CheckpointState.open(tmp_path, "static")  # V2 now: no map needed
    assert reopened.get_cpu_set("pod1", "app") == CPUSet.parse("2-3")


# -- the container map numaplane builds from the pods' status ---------------------------------


def _manifest(
    statuses: list[dict[str, str]], init: list[dict[str, str]] | None = None
) -> dict[str, object]:
    status: dict[str, object] = {"containerStatuses": statuses}
    if init is not None:
        status["initContainerStatuses"] = init
    return {
        "metadata": {"name": "web", "uid": "uid-1"},
        "spec": {"initContainers": [{"name": "setup"}], "containers": [{"name": "app"}]},
        "status": status,
    }


def test_container_map_comes_from_the_pods_status_without_the_runtime_prefix() -> None:
    pod = pod_from_dict(
        _manifest(
            [{"name": "app", "containerID": "containerd://abc123"}],
            [{"name": "setup", "containerID": "docker://def456"}],
        ),
        "pods.yaml",
    )
    assert dict(pod.container_ids) == {"app": "containerd://abc123", "setup": "docker://def456"}
    other = Pod.of("other", containers=[])
    assert container_map([pod, other]) == {
        "abc123": ("uid-1", "app"),
        "def456": ("uid-1", "setup"),
    }
    # The records of admitted pods keep the IDs (pod_to_manifest round-trips them).
    again = pod_from_dict(pod_to_manifest(pod), "records")
    assert again == pod
    assert dict(again.container_ids) == dict(pod.container_ids)


@dataclass(frozen=True)
class BadStatus:
    """A ``status.containerStatuses`` that a manifest must not accept, and the one-line error."""

    name: str
    statuses: list[dict[str, str]]
    error: str


BAD_STATUSES = [
    BadStatus(
        "an ID without its runtime",
        [{"name": "app", "containerID": "abc123"}],
        "status.containerStatuses[0].containerID: invalid container ID: 'abc123'",
    ),
    BadStatus(
        "a status of a container the spec does not have",
        [{"name": "ghost", "containerID": "containerd://1"}],
        "status.containerStatuses[0].name: no container named 'ghost' in the spec",
    ),
]


@pytest.mark.parametrize("case", BAD_STATUSES, ids=[c.name for c in BAD_STATUSES])
def test_bad_container_status_is_a_manifest_error(case: BadStatus) -> None:
    with pytest.raises(ManifestError) as failure:
        pod_from_dict(_manifest(case.statuses), "pods.yaml")
    assert case.error in str(failure.value)


def test_a_status_without_an_id_is_a_container_not_created_yet() -> None:
    pod = pod_from_dict(_manifest([{"name": "app"}]), "pods.yaml")
    assert dict(pod.container_ids) == {}
