"""The ``numaplane`` command: one group, one module per command group.

Every deliberate error (``NumaplaneError``) and every usage error becomes one line on stderr and
exit status 2; a traceback only ever means a bug.
"""

from __future__ import annotations

import sys

import click

from numaplane import __version__
from numaplane.cli import commands
from numaplane.errors import NumaplaneError


@click.group(
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    epilog="""\b
Examples:
  numaplane machine show --machine dual-socket-ht
  numaplane admit pod.yaml --machine / --config /var/lib/kubelet/config.yaml --explain
  numaplane COMMAND --help""",
)
@click.version_option(__version__, prog_name="numaplane")
def cli() -> None:
    """numaplane: the kubelet's NUMA-aware resource managers, in Python.

    Predict and explain what the kubelet's Topology, CPU, Memory and Device Managers decide
    for a pod on a machine; run pods pinned to the CPUs, memory and devices they would get;
    replay traces to compare policies.

    A machine (--machine) is this host (/), a captured sysfs root or hwloc-gather-topology
    tarball, an hwloc XML export, a synthetic shape (sockets=2,numa-per-socket=2,...) or a
    named preset (see `numaplane machine presets`).
    """


commands.register(cli)


# Line breaks and other control characters (from a file name, a flag's value, a parser's
# message) shown escaped, so that an error is always one line.
_CONTROL = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F, 0x85)} | {
    0x09: "\\t",
    0x0A: "\\n",
    0x0D: "\\r",
    0x2028: "\\u2028",
    0x2029: "\\u2029",
}


def one_line(text: str) -> str:
    """``text`` with every character that would break or garble the line escaped."""
    return text.translate(_CONTROL)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    try:
        cli.main(args=argv, prog_name="numaplane", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        sys.exit(130)
    except click.UsageError as exc:
        # One line, like every other input error; --help has the rest.
        command = exc.ctx.command_path if exc.ctx is not None else "numaplane"
        message = " ".join(exc.format_message().split())
        click.echo(f"error: {one_line(message)} (see '{command} --help')", err=True)
        sys.exit(2)
    except click.ClickException as exc:
        click.echo(f"error: {one_line(exc.format_message())}", err=True)
        sys.exit(2 if exc.exit_code == 2 else exc.exit_code)
    except NumaplaneError as exc:
        click.echo(f"error: {one_line(str(exc))}", err=True)
        sys.exit(2)
    except BrokenPipeError:
        sys.exit(0)
    except SystemExit:
        raise
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)


if __name__ == "__main__":
    main()
