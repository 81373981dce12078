"""The command groups ``numaplane`` offers, registered in one place."""

from __future__ import annotations

import importlib

import click

# (module under numaplane.cli, attribute): each is a click command or group.
COMMAND_MODULES: tuple[tuple[str, str], ...] = (
    ("machine", "machine"),
    ("admit", "admit"),
    ("admit", "release"),
    ("deviceplugin", "device_plugin"),
    ("sim", "trace"),
    ("sim", "simulate"),
    ("agent", "agent"),
    ("agent", "pods"),
    ("apiserver", "apiserver"),
    ("controllers", "controllers"),
    ("kueue", "kueue"),
    ("multikueue", "multikueue"),
    ("up", "up"),
)


def register(group: click.Group) -> None:
    """Add every command of ``COMMAND_MODULES`` to ``group``."""
    for module_name, attr in COMMAND_MODULES:
        module = importlib.import_module(f"numaplane.cli.{module_name}")
        group.add_command(getattr(module, attr))
