"""Reusable click options: ``--machine`` (a ``Machine``) for every command that needs one.

Usage::

    @click.command()
    @machine_option()
    def admit(machine: Machine) -> None: ...

A bad value raises the discovery error itself (an ``InputError``), so ``numaplane.cli.main``
prints one ``error:`` line and exits 2 instead of a usage block.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, TypeVar

import click

from numaplane.topology.discover import load_machine
from numaplane.topology.model import Machine

F = TypeVar("F", bound=Callable[..., Any])

MACHINE_HELP = (
    "The machine: / (this host, the default), a sysfs root directory, an "
    "hwloc-gather-topology .tar.bz2, an hwloc .xml export, a synthetic shape such as "
    "'sockets=2,numa-per-socket=2,cores-per-numa=8,threads-per-core=2' or a preset name "
    "(see `numaplane machine presets`). Also read from $NUMAPLANE_MACHINE."
)


class MachineParamType(click.ParamType[Machine]):
    """Turns a ``--machine`` value into a ``Machine`` (see ``load_machine``)."""

    name = "machine"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> Machine:
        """Load the machine; a ``Machine`` passes through unchanged."""
        if isinstance(value, Machine):
            return value
        return load_machine(str(value))


MACHINE = MachineParamType()


def machine_option(default: str = "/", help_text: str = MACHINE_HELP) -> Callable[[F], F]:
    """A ``--machine``/``-m`` option delivering a ``Machine`` as the ``machine`` argument."""
    return click.option(
        "--machine",
        "-m",
        "machine",
        type=MACHINE,
        default=default,
        show_default=True,
        envvar="NUMAPLANE_MACHINE",
        help=help_text,
    )


class FiniteFloatRange(click.FloatRange):
    """``click.FloatRange`` that also refuses ``nan`` and infinities (a ``nan`` passes every
    comparison with the bounds unnoticed)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        """The number, checked to be finite and within the range."""
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return number
