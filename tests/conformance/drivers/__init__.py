"""Conformance drivers: one module per vector area.

A vector file's ``area`` is matched against ``DRIVERS`` by prefix; the driver module's
``run(vector, ctx)`` raises ``AssertionError`` on any mismatch, and on an operation it does not
know. An area with no driver fails; nothing is skipped.
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


DRIVERS: tuple[DriverSpec, ...] = (
    DriverSpec("topologymanager/bitmask", "bitmask"),
    DriverSpec("Topology Manager policy Merge", "merge_policies"),
    DriverSpec("Topology Manager HintMerger", "hint_merger"),
    DriverSpec("topologymanager NUMAInfo", "numa_info"),
    DriverSpec("Topology Manager admission", "admission"),
    DriverSpec("cpumanager cpu_assignment.go", "cpu_assignment"),
    DriverSpec("cpumanager static policy hint generation", "cpu_topology_hints"),
    DriverSpec("cpumanager static policy Allocate", "static_policy_allocate"),
    DriverSpec("cpumanager static policy lifecycle", "static_policy_lifecycle"),
    DriverSpec("memory manager static policy: GetTopologyHints", "memory_hints"),
    DriverSpec("memory manager static policy: New/Start", "memory_allocate"),
    DriverSpec("devicemanager topology hints", "device_hints"),
    DriverSpec("cpu_manager_state checkpoint", "checkpoints"),
    DriverSpec("memory_manager_state checkpoint", "memory_checkpoints"),
    DriverSpec("policy Name() of every manager", "policy_basics"),
)


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


def load_driver(spec: DriverSpec) -> ModuleType:
    """Import the driver module (an import error fails the vector)."""
    return importlib.import_module(f"{__name__}.{spec.module}")
