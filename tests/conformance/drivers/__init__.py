"""Conformance drivers: one module per vector area.

A vector file's ``area`` is matched against ``DRIVERS`` by prefix; the driver module's
``run(vector, ctx)`` raises ``AssertionError`` on any mismatch. An area with no driver fails,
except one whose driver a later open issue owns: that is skipped naming the issue, until the
module exists.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol


@dataclass(frozen=True)
class DriverSpec:
    """Which module runs the vectors of areas starting with ``area_prefix``."""

    area_prefix: str
    module: str
    owner_issue: int


DRIVERS: tuple[DriverSpec, ...] = (
    DriverSpec("topologymanager/bitmask", "bitmask", 3),
    DriverSpec("Topology Manager policy Merge", "merge_policies", 3),
    DriverSpec("Topology Manager HintMerger", "hint_merger", 3),
    DriverSpec("topologymanager NUMAInfo", "numa_info", 3),
    DriverSpec("Topology Manager admission", "admission", 3),
    DriverSpec("cpumanager cpu_assignment.go", "cpu_assignment", 4),
    DriverSpec("cpumanager static policy hint generation", "cpu_topology_hints", 4),
    DriverSpec("cpumanager static policy Allocate", "static_policy_allocate", 4),
    DriverSpec("cpumanager static policy lifecycle", "static_policy_lifecycle", 4),
    DriverSpec("memory manager static policy: GetTopologyHints", "memory_hints", 4),
    DriverSpec("memory manager static policy: New/Start", "memory_allocate", 4),
    DriverSpec("devicemanager topology hints", "device_hints", 4),
    DriverSpec("cpu_manager_state checkpoint", "checkpoints", 4),
    DriverSpec("memory_manager_state checkpoint", "memory_checkpoints", 4),
)

# Issues still open that own drivers; once a driver module exists it always runs.
OPEN_LATER_ISSUES: frozenset[int] = frozenset({4})


class Driver(Protocol):
    """What a driver module provides."""

    def run(self, vector: Mapping[str, Any], ctx: VectorContext) -> None:
        """Check one vector; raise ``AssertionError`` on a mismatch."""


@dataclass(frozen=True)
class VectorContext:
    """What a driver may need besides its vector: the directory's shared fixture files."""

    vectors_dir: Path
    file: str
    _cache: dict[str, Any] = field(default_factory=dict, compare=False)

    @cached_property
    def topologies(self) -> Mapping[str, Any]:
        """``topologies.json`` of the same directory: CPU topology fixtures by name."""
        path = self.vectors_dir / "topologies.json"
        data: Mapping[str, Any] = json.loads(path.read_text())["topologies"]
        return data


def find_spec(area: str) -> DriverSpec | None:
    """The driver spec for an area, or ``None`` if no driver claims it."""
    for spec in DRIVERS:
        if area.startswith(spec.area_prefix):
            return spec
    return None


def load_driver(spec: DriverSpec) -> ModuleType | None:
    """Import the driver module, or ``None`` if it does not exist yet."""
    name = f"{__name__}.{spec.module}"
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:
            raise
        return None
