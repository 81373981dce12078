"""The report's plots, drawn with matplotlib's Agg backend into PNG bytes.

Output is a function of the input alone: fixed figure size, resolution and style, bundled fonts
(DejaVu Sans), and no metadata (no software version, no timestamp) written into the PNG.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

__all__ = ["Heat", "Series", "heatmap_png", "label", "rejections_png", "timeline_png"]

_SIZE = (8.0, 4.5)
_DPI = 100
_RC: dict[str, Any] = {
    "font.family": "DejaVu Sans",
    "font.size": 9.0,
    "svg.hashsalt": "numaplane",
    "path.simplify": True,
    "figure.max_open_warning": 0,
}


@dataclass(frozen=True)
class Series:
    """One configuration's admitted pods over (virtual) time."""

    label: str
    t: tuple[float, ...]
    admitted: tuple[int, ...]


@dataclass(frozen=True)
class Heat:
    """Utilization per configuration (rows) and ``<node>/<numa>`` (columns), in [0, 1]."""

    rows: tuple[str, ...]
    columns: tuple[str, ...]
    cpu: tuple[tuple[float, ...], ...]
    memory: tuple[tuple[float, ...], ...]


def label(text: str) -> str:
    """User text as matplotlib draws it literally.

    ``$`` would start mathtext (a config named ``a$b$`` fails to draw) and a leading ``_``
    hides a legend entry; both are neutralised.
    """
    text = text.replace("$", r"\$")
    return " " + text if text.startswith("_") else text


def _png(fig: Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=_DPI, metadata={"Software": None})
    plt.close(fig)
    return buf.getvalue()


def timeline_png(series: Sequence[Series]) -> bytes:
    """Admitted pods over time, one step line per configuration."""
    with plt.rc_context(_RC):  # type: ignore[arg-type]
        fig, ax = plt.subplots(figsize=_SIZE, layout="constrained")
        for s in series:
            ax.step(s.t, s.admitted, where="post", label=label(s.label))
        ax.set_xlabel("time (s)")
        ax.set_ylabel("running pods")
        ax.set_title("Running pods over time (admitted, not yet ended)")
        ax.grid(True, alpha=0.3)
        if series:
            ax.legend(loc="best")
        return _png(fig)


def heatmap_png(heat: Heat) -> bytes:
    """Per-NUMA CPU and memory utilization, side by side."""
    with plt.rc_context(_RC):  # type: ignore[arg-type]
        height = max(2.5, 1.2 + 0.45 * len(heat.rows))
        fig, axes = plt.subplots(1, 2, figsize=(_SIZE[0] * 1.5, height), layout="constrained")
        image = None
        for ax, title, values in zip(
            axes,
            ("exclusive CPUs at peak load", "Static-manager memory at peak load"),
            (heat.cpu, heat.memory),
            strict=True,
        ):
            data = [list(row) for row in values] or [[0.0]]
            image = ax.imshow(data, vmin=0.0, vmax=1.0, cmap="viridis", aspect="auto")
            ax.set_title(title)
            ax.set_yticks(range(len(heat.rows)), labels=[label(r) for r in heat.rows])
            ax.set_xticks(
                range(len(heat.columns)), labels=[label(c) for c in heat.columns], rotation=45
            )
            for i, row in enumerate(values):
                for j, value in enumerate(row):
                    ax.text(
                        j,
                        i,
                        f"{value:.0%}",
                        ha="center",
                        va="center",
                        color="white" if value < 0.6 else "black",
                        fontsize=7,
                    )
        if image is not None:
            fig.colorbar(image, ax=list(axes), shrink=0.8, label="utilization")
        return _png(fig)


def rejections_png(
    configs: Sequence[str], reasons: Sequence[str], counts: Sequence[Sequence[int]]
) -> bytes:
    """Rejections per configuration, stacked by reason (``counts[config][reason]``)."""
    with plt.rc_context(_RC):  # type: ignore[arg-type]
        fig, ax = plt.subplots(figsize=_SIZE, layout="constrained")
        bottom = [0] * len(configs)
        for r, reason in enumerate(reasons):
            heights = [counts[c][r] for c in range(len(configs))]
            ax.bar(range(len(configs)), heights, bottom=bottom, label=label(reason))
            bottom = [b + h for b, h in zip(bottom, heights, strict=True)]
        ax.set_ylabel("rejected pods")
        ax.set_title("Rejections by reason")
        # Positions, not names, on the axis: equal-looking names must not share a bar.
        ax.set_xticks(range(len(configs)), labels=[label(c) for c in configs])
        ax.tick_params(axis="x", rotation=20)
        if reasons:
            ax.legend(loc="best")
        return _png(fig)
