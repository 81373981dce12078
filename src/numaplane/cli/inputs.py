"""Reading the files a user names on the command line: one error path for all of them.

Every input file (pod manifests, kubelet configurations, device inventories) is read here, so
that a missing file, a directory, a permission problem, bytes that are not UTF-8 text or a file
too large to be meant are all one ``InputError`` naming the file, never a traceback.
"""

from __future__ import annotations

from pathlib import Path

from numaplane.api.kubeletconfig import KubeletConfiguration, kubelet_config_from_text
from numaplane.api.manifest import pods_from_text
from numaplane.api.pod import Pod
from numaplane.errors import InputError

MAX_INPUT_BYTES = 64 << 20
"""An input file larger than this is refused after reading this much (``/dev/zero`` ends)."""


def read_text(path: Path) -> str:
    """The UTF-8 text of ``path``; ``InputError`` naming it when it cannot be read as text."""
    source = str(path)
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_INPUT_BYTES + 1)
    except IsADirectoryError:
        raise InputError(source, "cannot read the file: it is a directory") from None
    except OSError as err:
        raise InputError(source, f"cannot read the file: {err.strerror or err}") from None
    if len(data) > MAX_INPUT_BYTES:
        raise InputError(source, f"the file is larger than {MAX_INPUT_BYTES >> 20} MiB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise InputError(
            source, f"the file is not UTF-8 text (byte {err.start}: {err.reason})"
        ) from None


def read_pods(paths: tuple[Path, ...]) -> list[Pod]:
    """Every pod of every manifest file, in order; a file without pods, or a pod given twice,
    is an ``InputError``."""
    pods: list[Pod] = []
    first_seen: dict[str, Path] = {}
    for path in paths:
        found = pods_from_text(read_text(path), str(path))
        if not found:
            # kubectl: "error: no objects passed to apply".
            raise InputError(str(path), "no pods in the file (expected Pod or List manifests)")
        for pod in found:
            if pod.uid in first_seen:
                raise InputError(
                    str(path), f"pod {pod.key} is given twice (first in {first_seen[pod.uid]})"
                )
            first_seen[pod.uid] = path
            pods.append(pod)
    return pods


def read_kubelet_config(path: Path | None) -> KubeletConfiguration:
    """The configuration in ``path``, or the kubelet's defaults when there is none."""
    if path is None:
        return KubeletConfiguration.default()
    return kubelet_config_from_text(read_text(path), str(path))
