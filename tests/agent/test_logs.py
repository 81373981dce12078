"""``/containerLogs`` without a server: the request's parsing and the kubelet's query
parameters applied to a log file (tail, limit, timestamps, since, follow)."""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path

import pytest

from numaplane.agent.logs import ContainerLog, LogRequest, LogsError, stream_log


def test_parse_reads_the_path_and_the_query() -> None:
    request = LogRequest.parse(
        "/containerLogs/ns/pod-1/main?follow=true&tailLines=5&timestamps=1&limitBytes=9"
    )
    assert request == LogRequest(
        "ns", "pod-1", "main", follow=True, tail_lines=5, timestamps=True, limit_bytes=9
    )


@pytest.mark.parametrize(
    "target",
    ["/containerLogs/ns/pod", "/containerLogs/ns//c", "/containerLogs/ns/p/c?tailLines=x"],
    ids=["short", "empty-part", "bad-number"],
)
def test_parse_refuses_malformed_requests(target: str) -> None:
    with pytest.raises(LogsError) as caught:
        LogRequest.parse(target)
    assert caught.value.status == HTTPStatus.BAD_REQUEST


@dataclass(frozen=True)
class Case:
    name: str
    query: str
    expected: str


CASES = [
    Case("everything", "", "one\ntwo\nthree\n"),
    Case("tail", "?tailLines=2", "two\nthree\n"),
    Case("tail zero", "?tailLines=0", ""),
    Case("limit", "?limitBytes=6", "one\ntw"),
    Case("tail and limit", "?tailLines=1&limitBytes=3", "thr"),
    Case("since, recent", "?sinceSeconds=3600", "one\ntwo\nthree\n"),
]


def _read(path: Path, query: str, running: bool = False) -> str:
    out: list[bytes] = []
    request = LogRequest.parse(f"/containerLogs/ns/p/c{query}")
    stream_log(ContainerLog(path, lambda: running), request, out.append, lambda: None, poll=0.01)
    return b"".join(out).decode()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_query_parameters(tmp_path: Path, case: Case) -> None:
    path = tmp_path / "c.log"
    path.write_text("one\ntwo\nthree\n")
    assert _read(path, case.query) == case.expected


def test_since_leaves_out_an_old_file(tmp_path: Path) -> None:
    path = tmp_path / "c.log"
    path.write_text("old\n")
    old = time.time() - 100
    os.utime(path, (old, old))
    assert _read(path, "?sinceSeconds=10") == ""


def test_timestamps_start_every_line(tmp_path: Path) -> None:
    path = tmp_path / "c.log"
    path.write_text("a\nb\n")
    lines = _read(path, "?timestamps=true").splitlines()
    assert len(lines) == 2
    for line, text in zip(lines, ("a", "b"), strict=True):
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z " + text, line)


def test_follow_sends_what_is_written_until_the_container_stops(tmp_path: Path) -> None:
    path = tmp_path / "c.log"
    path.write_text("first\n")
    looks = iter([True, True, False])
    written: list[bytes] = []

    def running() -> bool:
        alive = next(looks)
        if alive:
            with path.open("a") as handle:
                handle.write(f"line {len(written)}\n")
        return alive

    request = LogRequest.parse("/containerLogs/ns/p/c?follow=true")
    stream_log(ContainerLog(path, running), request, written.append, lambda: None, poll=0.01)
    assert b"".join(written).decode() == "first\nline 1\nline 2\n"


def test_a_missing_file_is_empty(tmp_path: Path) -> None:
    assert _read(tmp_path / "none.log", "") == ""
