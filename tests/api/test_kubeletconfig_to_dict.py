"""``KubeletConfiguration.to_dict``: read back, it is the same configuration."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from numaplane.api.kubeletconfig import (
    KubeletConfigError,
    KubeletConfiguration,
    kubelet_config_from_dict,
    load_kubelet_config,
)

REPO = Path(__file__).resolve().parents[2]
FILES = sorted(
    [
        *(REPO / "tests/api/data/kubelet").glob("*.yaml"),
        *(REPO / "examples").glob("**/kubelet*.yaml"),
    ]
)


def _back(config: KubeletConfiguration) -> KubeletConfiguration:
    return kubelet_config_from_dict(json.loads(json.dumps(config.to_dict())))


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(REPO)))
def test_files_round_trip(path: Path) -> None:
    try:
        config = load_kubelet_config(path)
    except KubeletConfigError:
        pytest.skip("an invalid configuration (the loader's own tests cover it)")
    assert _back(config) == config


@dataclass(frozen=True)
class DocCase:
    name: str
    doc: dict[str, object]


CASES = [
    DocCase("defaults", {}),
    DocCase(
        "reserved cpus drop kube-reserved cpu",
        {
            "cpuManagerPolicy": "static",
            "reservedSystemCPUs": "0,4",
            "kubeReserved": {"cpu": "3", "memory": "1Gi"},
        },
    ),
    DocCase("no eviction thresholds", {"evictionHard": {}}),
    DocCase(
        "merged defaults with one switched off",
        {
            "mergeDefaultEvictionSettings": True,
            "evictionHard": {"memory.available": "0%", "nodefs.available": "7.3%"},
        },
    ),
    DocCase("a go duration", {"cpuManagerReconcilePeriod": "1h2m3.5s"}),
    DocCase("feature gates", {"featureGates": {"AllAlpha": False, "PodLevelResources": True}}),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_documents_round_trip(case: DocCase) -> None:
    config = kubelet_config_from_dict(case.doc)
    back = _back(config)
    assert back == config
    # The fields that decide admissions, spelled out (equality could hide a compare=False one).
    assert back.node_allocatable_reservation() == config.node_allocatable_reservation()
    assert back.reserved_cpu_count() == config.reserved_cpu_count()


def test_switched_off_default_stays_off() -> None:
    config = kubelet_config_from_dict(
        {"mergeDefaultEvictionSettings": True, "evictionHard": {"memory.available": "0%"}}
    )
    assert "memory.available" not in config.eviction_hard
    assert "memory.available" not in _back(config).eviction_hard


@given(st.floats(min_value=0.001, max_value=99.999, allow_nan=False))
def test_any_percentage_round_trips(percent: float) -> None:
    config = kubelet_config_from_dict({"evictionHard": {"nodefs.available": f"{percent}%"}})
    assert _back(config) == config
