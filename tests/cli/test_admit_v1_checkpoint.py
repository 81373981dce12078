"""``numaplane admit --state-dir`` over a kubelet's V1 ``cpu_manager_state``: the container map
comes from the pods' status (recorded pods and the pods being admitted), as the kubelet's comes
from its runtime."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.cli.test_admit import BEST_EFFORT, admit_json, run
from tests.node.cpumanager.test_checkpoint_migration import write_v1

WEB = """\
apiVersion: v1
kind: Pod
metadata: {{name: web, uid: uid-web}}
spec:
  containers: [{{name: nginx, resources: {{limits: {{cpu: "2", memory: 1Gi}}}}}}]
status:
  containerStatuses: [{{name: nginx, containerID: "containerd://{cid}"}}]
"""


@dataclass(frozen=True)
class AdmitCase:
    """The container ID the pod's status reports, and what admission over the V1 file gives."""

    name: str
    container_id: str
    exit_code: int
    cpus: str | None
    error: str | None


CASES = [
    AdmitCase("the pod's container is the V1 entry: its CPUs are kept", "abc123", 0, "2-3", None),
    AdmitCase(
        "no pod has the V1 entry's container: the kubelet refuses the file",
        "other",
        2,
        None,
        "failed to migrate checkpoint from v1 to v2: "
        "containerID 'abc123' not found in initial containers list",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_v1_checkpoint_is_migrated_through_the_pods_container_ids(
    case: AdmitCase, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    state = tmp_path / "state"
    state.mkdir()
    write_v1(state, "static", "0-1,4-11", {"abc123": "2-3"})
    pods = tmp_path / "web.yaml"
    pods.write_text(WEB.format(cid=case.container_id))
    argv = (str(pods), "-m", "dual-socket-ht", "-c", BEST_EFFORT, "--state-dir", str(state))
    if case.error is None:
        code, doc = admit_json(capsys, *argv)
        assert code == case.exit_code
        assert doc["pods"][0]["containers"][0]["exclusive_cpus"] == case.cpus
        # The recorded pod keeps its container ID, so the next run migrates the file again.
        records = json.loads((state / "numaplane_pods.json").read_text())
        statuses = records["pods"][0]["status"]["containerStatuses"]
        assert statuses == [{"name": "nginx", "containerID": "containerd://abc123"}]
        assert run(capsys, "release", "default/web", *argv[1:])[0] == 0
        # Released: the file is rewritten in the current layout, the CPUs back in the pool.
        released = json.loads((state / "cpu_manager_state").read_text())
        assert "entries" not in released
        assert released["defaultCpuSet"] == "0-11"
    else:
        code, out, err = run(capsys, "admit", *argv)
        assert code == case.exit_code
        assert out == ""
        assert case.error in err
        assert len(err.strip().splitlines()) == 1
