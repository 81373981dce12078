"""``numaplane pods``: the table shows text from pods and the engine as it is (square brackets
included), shows why a container failed to start, and refuses an answer that is not an
agent's with one line."""

from __future__ import annotations

import io
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from click.testing import CliRunner
from rich.console import Console

from numaplane.cli.agent import print_pods
from numaplane.cli.main import cli
from numaplane.errors import InputError


def _container(**values: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "name": "main",
        "state": "running",
        "reason": None,
        "message": None,
        "restartCount": 0,
        "cpus": "1",
        "cpuKind": "exclusive",
        "memoryNumaNodes": None,
        "numaAffinity": {"numa": [0], "preferred": True},
        "devices": {},
    }
    base.update(values)
    return base


def _pod(**values: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "name": "web",
        "namespace": "default",
        "phase": "Running",
        "reason": None,
        "message": None,
        "containers": [_container()],
    }
    base.update(values)
    return base


def _render(doc: list[dict[str, Any]]) -> str:
    out = io.StringIO()
    print_pods(doc, Console(file=out, width=400, highlight=False))
    return out.getvalue()


@dataclass(frozen=True)
class TableCase:
    """A /pods document and a text the table must show verbatim."""

    name: str
    doc: list[dict[str, Any]]
    shown: str


TABLE_CASES = [
    TableCase("a pod name of markup", [_pod(name="[bold]x[/bold]")], "default/[bold]x[/bold]"),
    TableCase(
        "a message of the engine",
        [
            _pod(
                phase="Failed",
                reason="UnexpectedAdmissionError",
                message="[memorymanager] no NUMA node fits",
                containers=[_container(state="waiting", cpus=None)],
            )
        ],
        "UnexpectedAdmissionError: [memorymanager] no NUMA node fits",
    ),
    TableCase(
        "a container name and device id of markup",
        [_pod(containers=[_container(name="[red]c", devices={"x/gpu": ["[i]0"]})])],
        "x/gpu: [i]0",
    ),
    TableCase(
        "why a container does not start",
        [
            _pod(
                phase="Pending",
                containers=[
                    _container(
                        state="waiting",
                        reason="CrashLoopBackOff",
                        message="back-off 10s (last termination: StartError: cannot pin [5])",
                        restartCount=3,
                    )
                ],
            )
        ],
        "main: back-off 10s (last termination: StartError: cannot pin [5])",
    ),
    TableCase(
        "odd shapes from a foreign agent",
        [_pod(containers=[_container(numaAffinity=[1], devices=["a"], restartCount=None)])],
        "default/web",
    ),
]


@pytest.mark.parametrize("case", TABLE_CASES, ids=[c.name for c in TABLE_CASES])
def test_table_shows_text_as_it_is(case: TableCase) -> None:
    assert case.shown in _render(case.doc)


def _serve(body: bytes) -> Iterator[int]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@dataclass(frozen=True)
class AnswerCase:
    """What a server that is not an agent answers on /pods."""

    name: str
    body: bytes


ANSWER_CASES = [
    AnswerCase("html", b"<html>hello</html>"),
    AnswerCase("an object", b'{"pods": []}'),
    AnswerCase("a list of numbers", b"[1, 2]"),
    AnswerCase("pods without containers", b'[{"name": "x"}]'),
    AnswerCase("deep nesting", b"[" * 100_000 + b"]" * 100_000),
]


@pytest.mark.parametrize("case", ANSWER_CASES, ids=[c.name for c in ANSWER_CASES])
def test_an_answer_that_is_not_an_agents_is_one_error(case: AnswerCase) -> None:
    for port in _serve(case.body):
        for output in ("table", "json"):
            result = CliRunner().invoke(
                cli, ["pods", "--listen", f"127.0.0.1:{port}", "-o", output]
            )
            assert isinstance(result.exception, InputError), result.output
            message = str(result.exception)
            assert message.startswith(f"http://127.0.0.1:{port}/pods: not an agent's /pods")
            assert "\n" not in message
