"""Rejections remembered across restarts: the file, and matching it to a manifest scan."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from numaplane.agent.agent import Agent, AgentOptions
from numaplane.agent.podsource import ManifestDirectory
from numaplane.agent.rejections import (
    REJECTIONS_FILE,
    Rejection,
    RejectionRecords,
    Rejections,
    RememberedRejection,
)
from numaplane.agent.views import pods_view
from numaplane.errors import InputError
from numaplane.node.checkpoint import CheckpointStore
from numaplane.topology.discover import load_machine
from tests.agent.agent_fixtures import (
    MemoryDriver,
    kubelet_config,
    pod_manifest,
    pod_named,
    write_pod,
)


def _agent(manifests: Path, state: Path) -> Agent:
    """A started in-process agent that starts no plugins and writes no cgroups."""
    options = AgentOptions(
        machine=load_machine("sockets=1,numa-per-socket=2,cores-per-numa=2,threads-per-core=1"),
        config=kubelet_config(),
        manifest_dir=manifests,
        state_dir=state,
        device_plugins=False,
    )
    agent = Agent(options, driver=MemoryDriver())
    agent.start()
    return agent


def _records(directory: Path) -> RejectionRecords:
    return RejectionRecords(CheckpointStore(directory))


def test_scan_digest_follows_the_file_content(tmp_path: Path) -> None:
    source = ManifestDirectory(tmp_path)
    write_pod(tmp_path, pod_manifest("web", cpu="64"))
    (first,) = source.scan().pods.values()
    (again,) = ManifestDirectory(tmp_path).scan().pods.values()
    assert len(first.digest) == 64
    assert again.digest == first.digest
    write_pod(tmp_path, pod_manifest("web", cpu="1"))
    (changed,) = source.scan().pods.values()
    assert changed.pod.uid == first.pod.uid
    assert changed.digest != first.digest


def test_rejection_records_round_trip(tmp_path: Path) -> None:
    records = _records(tmp_path)
    assert records.load() == {}
    saved = {
        "u1": RememberedRejection("u1", "ab" * 32, "OutOfcpu", "no room", {"admitted": False}),
        "u2": RememberedRejection("u2", "cd" * 32, "TopologyAffinityError", "", None),
    }
    records.save(saved)
    assert records.load() == saved


@pytest.mark.parametrize(
    "content",
    [
        "{",
        json.dumps({"rejections": [{"podUID": 1}]}),
        json.dumps({"rejections": [{"podUID": "u", "manifestSHA256": "x", "reason": "r"}]}),
        json.dumps({"nope": []}),
    ],
    ids=["not json", "bad entry", "missing message", "no list"],
)
def test_corrupt_rejection_records_name_the_file(tmp_path: Path, content: str) -> None:
    (tmp_path / REJECTIONS_FILE).write_text(content)
    with pytest.raises(InputError) as caught:
        _records(tmp_path).load()
    assert caught.value.source.endswith(REJECTIONS_FILE)


def test_a_remembered_rejection_comes_back_only_for_the_same_manifest(tmp_path: Path) -> None:
    state, pods = tmp_path / "state", tmp_path / "pods"
    state.mkdir()
    pods.mkdir()
    write_pod(pods, pod_manifest("same", cpu="64"))
    write_pod(pods, pod_manifest("changed", cpu="64"))
    write_pod(pods, pod_manifest("gone", cpu="64"))
    first = Rejections(_records(state), {})
    for found in ManifestDirectory(pods).scan().pods.values():
        first.add(Rejection(found.pod, found.path, "OutOfcpu", "no room", digest=found.digest))
    (pods / "gone.yaml").unlink()
    write_pod(pods, pod_manifest("changed", cpu="1"))

    second = Rejections(_records(state), _records(state).load())
    scan = ManifestDirectory(pods).scan().pods
    second.match(scan, running=set())
    assert {r.pod.name: r.reason for r in second} == {"same": "OutOfcpu"}
    assert set(second.refused()) == {u for u, mp in scan.items() if mp.pod.name == "same"}
    # The file follows: what is not remembered any more is gone from it too.
    assert set(_records(state).load()) == set(second.refused())


def test_a_retried_refusal_is_not_remembered(tmp_path: Path) -> None:
    write_pod(tmp_path, pod_manifest("web"))
    (found,) = ManifestDirectory(tmp_path).scan().pods.values()
    rejections = Rejections(_records(tmp_path), {})
    rejections.add(
        Rejection(found.pod, found.path, "UnexpectedAdmissionError", "disk full", retry=True)
    )
    assert rejections.refused() == {}
    assert not (tmp_path / REJECTIONS_FILE).exists()


def test_a_rejection_outlives_a_restart_until_the_manifest_changes(tmp_path: Path) -> None:
    manifests, state = tmp_path / "pods", tmp_path / "state"
    manifests.mkdir()
    first = _agent(manifests, state)
    # Three CPUs fit the node but no single NUMA node: the Topology Manager refuses.
    write_pod(manifests, pod_manifest("wide", cpu="3"))
    first.sync()
    before = pod_named(pods_view(first), "wide")
    assert before is not None
    assert (before["phase"], before["reason"]) == ("Failed", "TopologyAffinityError")
    assert (
        first.node.registry.get_sample_value("kubelet_topology_manager_admission_requests_total")
        == 1
    )
    first.close()

    second = _agent(manifests, state)
    try:
        second.sync()
        second.sync()
        assert pod_named(pods_view(second), "wide") == before
        assert (
            second.node.registry.get_sample_value(
                "kubelet_topology_manager_admission_requests_total"
            )
            == 0
        )
        write_pod(manifests, pod_manifest("wide", cpu="1", command=("true",)))
        second.sync()
        after = pod_named(pods_view(second), "wide")
        assert after is not None
        assert after["containers"][0]["cpuKind"] == "exclusive"
        assert _records(state).load() == {}
    finally:
        second.stop_all_pods()
        second.close()


def test_an_unreadable_rejections_file_costs_one_more_attempt(tmp_path: Path) -> None:
    manifests, state = tmp_path / "pods", tmp_path / "state"
    manifests.mkdir()
    state.mkdir()
    (state / REJECTIONS_FILE).write_text("{")
    write_pod(manifests, pod_manifest("wide", cpu="3"))
    agent = _agent(manifests, state)
    try:
        agent.sync()
        assert (
            agent.node.registry.get_sample_value(
                "kubelet_topology_manager_admission_requests_total"
            )
            == 1
        )
        (uid,) = agent.rejected
        assert set(_records(state).load()) == {uid}
    finally:
        agent.close()
