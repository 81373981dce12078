"""``numaplane device-plugin pci`` as a process: registers, then exits cleanly on SIGTERM."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from numaplane.cli.main import main
from numaplane.deviceplugin.registration import RegistrationServer
from numaplane.node.devicemanager.device import Device
from tests.deviceplugin.conftest import Recorder


def _sysfs(root: Path) -> Path:
    d = root / "sys" / "bus" / "pci" / "devices" / "0000:43:00.0"
    d.mkdir(parents=True)
    for name, value in (
        ("vendor", "0x1077"),
        ("device", "0x7322"),
        ("class", "0x0c0600"),
        ("numa_node", "1"),
    ):
        (d / name).write_text(value + "\n")
    return root


def test_pci_command_serves_until_sigterm(
    plugin_dir: Path, tmp_path: Path, kubelet: RegistrationServer, recorder: Recorder
) -> None:
    argv = [
        sys.executable,
        "-c",
        "from numaplane.cli.main import main; main()",
        "device-plugin",
        "pci",
        "--resource",
        "example.com/ib",
        "--vendor",
        "0x1077",
        "--plugin-dir",
        str(plugin_dir),
        "--sysfs-root",
        str(_sysfs(tmp_path)),
        "--poll-interval",
        "0.1",
    ]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # A fresh interpreter imports grpc first: allow it a little longer than the rest.
        events = recorder.wait_for(lambda e: bool(e) or proc.poll() is not None, timeout=10.0)
        assert events, proc.stderr.read() if proc.stderr else "the plugin exited"
        assert events[-1] == ("example.com/ib", (Device("0000:43:00.0", (1,)),))
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=5.0)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert "serving 1 device(s) of example.com/ib" in err
    recorder.wait_for_devices((Device("0000:43:00.0", (1,), healthy=False),))


def test_pci_command_rejects_a_bad_vendor(
    plugin_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as info:
        main(
            [
                "device-plugin",
                "pci",
                "--resource",
                "example.com/x",
                "--vendor",
                "zz",
                "--plugin-dir",
                str(plugin_dir),
            ]
        )
    assert info.value.code == 2
    assert "--vendor: 'zz' is not a hexadecimal number" in capsys.readouterr().err
