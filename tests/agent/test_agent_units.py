"""The agent's pure parts: manifest scans, plans, container limits, process records."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from numaplane.agent.podsource import ManifestDirectory
from numaplane.agent.reconcile import container_specs, cpu_quota_us, limits_of, plan
from numaplane.agent.records import ProcessRecords
from numaplane.agent.runtime import ProcessRecord
from numaplane.api.manifest import pod_from_dict
from numaplane.api.pod import Container, Pod
from numaplane.cpuset import CPUSet
from numaplane.errors import InputError
from numaplane.node.admission import ContainerPlacement
from numaplane.node.checkpoint import CheckpointStore
from tests.agent.agent_fixtures import pod_manifest, write_pod

# -- manifest directory ------------------------------------------------------------------------


def test_scan_reads_pods_and_reports_bad_files(tmp_path: Path) -> None:
    write_pod(tmp_path, pod_manifest("web"))
    (tmp_path / "cm.yaml").write_text("kind: ConfigMap\nmetadata: {name: x}\n")
    (tmp_path / "broken.yaml").write_text("kind: Pod\n  bad: [\n")
    (tmp_path / "notes.txt").write_text("not a manifest")
    (tmp_path / ".hidden.yaml").write_text("kind: ConfigMap\n")
    scan = ManifestDirectory(tmp_path).scan()
    assert [p.pod.name for p in scan.pods.values()] == ["web"]
    faults = {f.path.name: f for f in scan.faults}
    assert set(faults) == {"cm.yaml", "broken.yaml"}
    assert "ConfigMap" in faults["cm.yaml"].message
    assert faults["broken.yaml"].reason == "InvalidManifest"


def test_scan_reports_a_pod_defined_twice(tmp_path: Path) -> None:
    write_pod(tmp_path, pod_manifest("web"), "a")
    write_pod(tmp_path, pod_manifest("web"), "b")
    scan = ManifestDirectory(tmp_path).scan()
    assert len(scan.pods) == 1
    assert [f.reason for f in scan.faults] == ["DuplicatePod"]


def test_scan_sees_changes_and_removals(tmp_path: Path) -> None:
    source = ManifestDirectory(tmp_path)
    path = write_pod(tmp_path, pod_manifest("web", ("sleep", "1")))
    first = source.scan().pods
    write_pod(tmp_path, pod_manifest("web", ("sleep", "22")))
    second = source.scan().pods
    assert first.keys() == second.keys()
    (uid,) = first
    assert first[uid].pod != second[uid].pod
    path.unlink()
    assert source.scan().pods == {}


def test_scan_of_a_missing_directory_is_an_error_not_an_empty_set(tmp_path: Path) -> None:
    scan = ManifestDirectory(tmp_path / "gone").scan()
    assert scan.error is not None
    assert "gone" in scan.error


# -- plan ----------------------------------------------------------------------------------


def _pod(name: str, command: str = "sleep") -> Pod:
    return pod_from_dict(pod_manifest(name, (command, "1")), "<test>")


@dataclass(frozen=True)
class PlanCase:
    name: str
    desired: tuple[Pod, ...]
    running: tuple[Pod, ...]
    rejected: tuple[Pod, ...]
    stop: tuple[str, ...]
    admit: tuple[str, ...]


A, B, A2 = _pod("a"), _pod("b"), _pod("a", "true")

PLAN_CASES = (
    PlanCase("nothing", (), (), (), (), ()),
    PlanCase("new pod", (A,), (), (), (), ("a",)),
    PlanCase("steady", (A,), (A,), (), (), ()),
    PlanCase("removed", (), (A,), (), ("a",), ()),
    PlanCase("changed restarts", (A2,), (A,), (), ("a",), ("a",)),
    PlanCase("rejected is not retried", (A,), (), (A,), (), ()),
    PlanCase("rejected then changed is retried", (A2,), (), (A,), (), ("a",)),
    PlanCase("mixed", (B, A2), (A,), (), ("a",), ("b", "a")),
)


@pytest.mark.parametrize("case", PLAN_CASES, ids=lambda c: c.name)
def test_plan(case: PlanCase) -> None:
    result = plan(
        {p.uid: p for p in case.desired},
        {p.uid: p for p in case.running},
        {p.uid: p for p in case.rejected},
    )
    names = {p.uid: p.name for p in (*case.desired, *case.running)}
    assert tuple(names[u] for u in result.stop) == case.stop
    assert tuple(p.name for p in result.admit) == case.admit


@given(st.sets(st.sampled_from("abcdef")), st.sets(st.sampled_from("abcdef")))
def test_plan_converges(desired_names: set[str], running_names: set[str]) -> None:
    """After stopping and admitting what the plan says, the node runs exactly the desired."""
    desired = {p.uid: p for p in map(_pod, sorted(desired_names))}
    running = {p.uid: p for p in map(_pod, sorted(running_names))}
    result = plan(desired, running, {})
    after = {u: p for u, p in running.items() if u not in result.stop}
    after.update({p.uid: p for p in result.admit})
    assert after == desired
    assert plan(desired, after, {}).empty


# -- limits --------------------------------------------------------------------------------


def _placement(
    name: str, exclusive: str = "", numa: tuple[int, ...] | None = None
) -> ContainerPlacement:
    return ContainerPlacement(
        name=name,
        init=False,
        restartable=False,
        affinity=None,
        exclusive_cpus=CPUSet.parse(exclusive),
        cpus=CPUSet.parse(exclusive),
        memory=(),
        memory_numa_nodes=numa,
        devices={},
    )


@dataclass(frozen=True)
class LimitsCase:
    name: str
    limits: dict[str, str]
    exclusive: str
    shared: str
    numa: tuple[int, ...] | None
    cpus: str
    mems: str | None
    memory_max: int | None
    quota: int | None


LIMITS_CASES = (
    LimitsCase("best effort on the shared pool", {}, "", "0,2-3", None, "0,2-3", None, None, None),
    LimitsCase(
        "exclusive CPUs drop the quota",
        {"cpu": "2", "memory": "1Gi"},
        "1-2",
        "0,3",
        (0,),
        "1-2",
        "0",
        1 << 30,
        None,
    ),
    LimitsCase(
        "burstable gets a quota", {"cpu": "500m"}, "", "0-3", None, "0-3", None, None, 50_000
    ),
    LimitsCase(
        "tiny limit gets the minimum quota",
        {"cpu": "5m"},
        "",
        "0-3",
        None,
        "0-3",
        None,
        None,
        1_000,
    ),
    LimitsCase("no shared set means every CPU", {}, "", "", None, "0-7", None, None, None),
)


@pytest.mark.parametrize("case", LIMITS_CASES, ids=lambda c: c.name)
def test_limits_of(case: LimitsCase) -> None:
    pod = Pod("p", "uid-p", containers=(Container.of("c", case.limits, case.limits),))
    limits = limits_of(
        pod,
        _placement("c", case.exclusive, case.numa),
        CPUSet.parse(case.shared),
        CPUSet.parse("0-7"),
    )
    assert limits.cpus == CPUSet.parse(case.cpus)
    assert limits.mems == (None if case.mems is None else CPUSet.parse(case.mems))
    assert limits.memory_max == case.memory_max
    assert limits.cpu_quota_us == case.quota


def test_cpu_quota_of_no_limit_is_none() -> None:
    assert cpu_quota_us(0) is None
    assert cpu_quota_us(2000) == 200_000


def test_container_specs_put_init_containers_first() -> None:
    doc = pod_manifest("p", ("sleep", "5"), env={"A": "1"})
    doc["spec"]["initContainers"] = [
        {"name": "setup", "command": ["true"]},
        {"name": "side", "command": ["sleep", "9"], "restartPolicy": "Always"},
    ]
    specs = container_specs(pod_from_dict(doc, "<test>"))
    assert [(s.name, s.init, s.restartable) for s in specs] == [
        ("setup", True, False),
        ("side", True, True),
        ("main", False, False),
    ]
    assert specs[2].env == (("A", "1"),)
    assert specs[2].command == ("sleep", "5")


# -- process records -----------------------------------------------------------------------


def test_process_records_round_trip(tmp_path: Path) -> None:
    records = ProcessRecords(CheckpointStore(tmp_path))
    assert records.load() == []
    saved = [ProcessRecord("u2", "c", 20, 7), ProcessRecord("u1", "c", 10, 5)]
    records.save(saved)
    assert records.load() == sorted(saved, key=lambda r: r.pod_uid)


@pytest.mark.parametrize(
    "content",
    ["{", json.dumps({"processes": [{"podUID": 1}]}), json.dumps({"nope": []})],
    ids=["not json", "bad record", "no list"],
)
def test_corrupt_process_records_name_the_file(tmp_path: Path, content: str) -> None:
    (tmp_path / "numaplane_processes.json").write_text(content)
    with pytest.raises(InputError) as caught:
        ProcessRecords(CheckpointStore(tmp_path)).load()
    assert caught.value.source.endswith("numaplane_processes.json")
