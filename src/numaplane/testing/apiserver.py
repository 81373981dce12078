"""A real ``numaplane apiserver`` in a subprocess, for tests (and for users' own tests): started
on a free loopback port with a data directory, waited for until ``/readyz`` answers ``ok``,
stopped with SIGTERM (SIGKILL if it hangs) when done.

It runs the command line a user runs, so it imports nothing of the server: what it knows comes
from the server's first lines of output and the kubeconfig it writes.
"""

from __future__ import annotations

import base64
import contextlib
import os
import re
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

SERVING_LINE = re.compile(r"serving (https://\S+) ")
STARTUP_TIMEOUT_S = 90.0
STOP_TIMEOUT_S = 30.0
#: Runs the ``numaplane`` entry point with this interpreter (and so this ``PYTHONPATH``).
ENTRY = "from numaplane.cli.main import main; main()"


def open_crd(group: str, version: str, plural: str, kind: str, scope: str) -> dict[str, Any]:
    """A CustomResourceDefinition serving ``kind`` with an open schema (any object accepted):
    for tests that need a kind served, not validated."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "scope": scope,
            "names": {
                "plural": plural,
                "singular": kind.lower(),
                "kind": kind,
                "listKind": f"{kind}List",
            },
            "versions": [
                {
                    "name": version,
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "x-kubernetes-preserve-unknown-fields": True,
                        }
                    },
                }
            ],
        },
    }


class ApiServerStartError(RuntimeError):
    """The server did not come up; the message ends with its log."""


@dataclass(frozen=True)
class ClientCredentials:
    """A kubeconfig's first user and cluster, as files an ``ssl`` context can load."""

    server: str
    ca_file: Path
    cert_file: Path | None
    key_file: Path | None
    token: str | None

    def ssl_context(self) -> ssl.SSLContext:
        """A client TLS context trusting the server's CA, with the client certificate."""
        ctx = ssl.create_default_context(cafile=str(self.ca_file))
        if self.cert_file is not None and self.key_file is not None:
            ctx.load_cert_chain(str(self.cert_file), str(self.key_file))
        return ctx


def read_kubeconfig(path: Path, into: Path) -> ClientCredentials:
    """The credentials of kubeconfig ``path``'s current context, their PEM data written under
    directory ``into``."""
    config: dict[str, Any] = yaml.safe_load(path.read_text())
    current = config.get("current-context")
    contexts = {c["name"]: c["context"] for c in config.get("contexts", [])}
    context = contexts.get(current) if current else next(iter(contexts.values()), None)
    if context is None:
        raise ApiServerStartError(f"{path}: no current context")
    cluster = next(c["cluster"] for c in config["clusters"] if c["name"] == context["cluster"])
    user = next(u["user"] for u in config["users"] if u["name"] == context["user"])
    into.mkdir(parents=True, exist_ok=True)

    def data_file(key: str, name: str) -> Path | None:
        value = cluster.get(key) if key.startswith("certificate-authority") else user.get(key)
        if value is None:
            return None
        target = into / name
        target.write_bytes(base64.b64decode(value))
        target.chmod(0o600)
        return target

    ca = data_file("certificate-authority-data", "ca.crt")
    if ca is None:
        raise ApiServerStartError(f"{path}: no certificate-authority-data")
    return ClientCredentials(
        server=cluster["server"],
        ca_file=ca,
        cert_file=data_file("client-certificate-data", "client.crt"),
        key_file=data_file("client-key-data", "client.key"),
        token=user.get("token"),
    )


@dataclass
class RunningApiServer:
    """A server started by :func:`running_apiserver`."""

    url: str
    data_dir: Path
    kubeconfig: Path
    process: subprocess.Popen[bytes]
    log_path: Path
    credentials: ClientCredentials
    clusters: tuple[str, ...] = ()
    _work: Path = field(default=Path())

    @property
    def port(self) -> int:
        """The port it listens on."""
        return int(self.url.rsplit(":", 1)[1])

    def cluster_kubeconfig(self, name: str) -> Path:
        """The kubeconfig of logical cluster ``name``."""
        return self.data_dir / f"{name}.kubeconfig"

    def get(self, path: str, timeout_s: float = 10.0) -> tuple[int, bytes]:
        """``GET path`` as the admin: status code and body."""
        request = urllib.request.Request(self.url + path)
        context = self.credentials.ssl_context()
        try:
            with urllib.request.urlopen(request, context=context, timeout=timeout_s) as resp:
                return resp.status, resp.read()
        except urllib.error.HTTPError as err:
            # Closed here: an HTTPError holds the response's socket (a 503 from /readyz while
            # starting would otherwise leak one, a ResourceWarning at some later collection).
            with err:
                return err.code, err.read()

    def log(self) -> str:
        """What the server printed so far."""
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def kill(self) -> None:
        """SIGKILL the server and reap it (a crash, for crash tests)."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()

    def stop(self, timeout_s: float = STOP_TIMEOUT_S) -> int:
        """SIGTERM, wait for a clean exit (SIGKILL after ``timeout_s``); the exit status."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self._work, ignore_errors=True)
        code = self.process.returncode
        return int(code) if code is not None else -1


def start_apiserver(
    data_dir: Path,
    *,
    clusters: Sequence[str] = (),
    extra_args: Sequence[str] = (),
    port: int = 0,
    startup_timeout_s: float = STARTUP_TIMEOUT_S,
) -> RunningApiServer:
    """Start ``numaplane apiserver --data-dir DATA_DIR --port PORT`` (0: a free port) on
    127.0.0.1 and wait until ``/readyz`` is ``ok``. The caller must :meth:`~RunningApiServer.stop`
    it (or use :func:`running_apiserver`)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    log_path = data_dir / "apiserver.log"
    argv = [
        sys.executable,
        "-c",
        ENTRY,
        "apiserver",
        "--data-dir",
        str(data_dir),
        "--bind",
        "127.0.0.1",
        "--port",
        str(port),
        *(arg for name in clusters for arg in ("--cluster", name)),
        *extra_args,
    ]
    return launch(argv, data_dir, log_path, tuple(clusters), startup_timeout_s)


def launch(
    argv: Sequence[str],
    data_dir: Path,
    log_path: Path,
    clusters: tuple[str, ...] = (),
    startup_timeout_s: float = STARTUP_TIMEOUT_S,
) -> RunningApiServer:
    """Run ``argv`` (a command that starts an API server on ``data_dir``: ``numaplane
    apiserver`` or ``numaplane up``) with its output appended to ``log_path``, and wait until
    the server is ready; a failed start stops the process (SIGTERM, then SIGKILL) and raises."""
    with log_path.open("ab") as log:
        # The log is kept across restarts; only what this process prints counts.
        offset = log.tell()
        process = subprocess.Popen(
            argv,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
    work = Path(tempfile.mkdtemp(prefix="apiserver-client-"))
    try:
        return _wait_ready(process, data_dir, log_path, offset, clusters, work, startup_timeout_s)
    except BaseException:
        if process.poll() is None:
            # SIGTERM first: ``numaplane up`` stops its children on it.
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
        process.wait()
        raise


def _keep_waiting(
    process: subprocess.Popen[bytes], deadline: float, log: str | Callable[[], str], late: str
) -> None:
    # One more poll of a starting server: give up when it exited or ``deadline`` passed, with
    # its output (``log``, read only then when a callable), else pause before the next look.
    if process.poll() is not None or time.monotonic() > deadline:
        output = log if isinstance(log, str) else log()
        if process.poll() is not None:
            raise ApiServerStartError(
                f"apiserver exited with status {process.returncode}: {output.strip()}"
            )
        raise ApiServerStartError(f"apiserver {late}: {output}")
    time.sleep(0.05)


def _wait_ready(
    process: subprocess.Popen[bytes],
    data_dir: Path,
    log_path: Path,
    offset: int,
    clusters: tuple[str, ...],
    work: Path,
    timeout_s: float,
) -> RunningApiServer:
    deadline = time.monotonic() + timeout_s
    url = ""
    while not url:
        with log_path.open("rb") as log:
            log.seek(offset)
            text = log.read().decode(errors="replace")
        found = SERVING_LINE.search(text)
        if found:
            url = found.group(1)
            break
        _keep_waiting(process, deadline, text, f"did not start in {timeout_s:.0f}s")
    kubeconfig = data_dir / "admin.kubeconfig"
    server = RunningApiServer(
        url,
        data_dir,
        kubeconfig,
        process,
        log_path,
        read_kubeconfig(kubeconfig, work),
        clusters,
        work,
    )
    while True:
        with contextlib.suppress(OSError):
            code, body = server.get("/readyz", timeout_s=5.0)
            if code == 200 and body == b"ok":
                return server
        _keep_waiting(process, deadline, server.log, f"not ready in {timeout_s:.0f}s")


@contextlib.contextmanager
def running_apiserver(
    data_dir: Path,
    *,
    clusters: Sequence[str] = (),
    extra_args: Sequence[str] = (),
) -> Iterator[RunningApiServer]:
    """A started server for the ``with`` block, stopped (SIGTERM) after it."""
    server = start_apiserver(data_dir, clusters=clusters, extra_args=extra_args)
    try:
        yield server
    finally:
        server.stop()
