"""``pod_to_manifest`` writes what ``pod_from_dict`` reads back unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest

from numaplane.api.manifest import load_pods, pod_from_dict, pod_to_manifest
from numaplane.api.pod import Container, Pod, QOSClass

DATA = Path(__file__).parent / "data"


def _round_trip(pod: Pod) -> Pod:
    return pod_from_dict(pod_to_manifest(pod), "<round-trip>")


@pytest.mark.parametrize("path", sorted(DATA.glob("*.yaml")), ids=lambda p: p.name)
def test_every_valid_example_manifest_round_trips(path: Path) -> None:
    try:
        pods = load_pods(path)
    except Exception:
        pytest.skip("an invalid example (tested for its error elsewhere)")
    for pod in pods:
        assert _round_trip(pod) == pod


def test_sidecars_status_qos_and_env_survive() -> None:
    pod = Pod.of(
        "u1",
        containers=[Container.of("app", requests={"cpu": "1500m"}, limits={"cpu": "2"})],
        init_containers=[
            Container.of("side", requests={"memory": "1Gi"}, restart_policy="Always"),
            Container.of("init", requests={"hugepages-2Mi": "4Mi"}),
        ],
        qos=QOSClass.BURSTABLE,
    )
    back = _round_trip(pod)
    assert back == pod
    assert back.init_containers[0].is_restartable
    assert back.qos_class is QOSClass.BURSTABLE
