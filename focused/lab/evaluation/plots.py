"""PNG plots of the evaluation: harvest and target recall over pages crawled, per crawler."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only: no display on a server, and no GUI toolkit needed

import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)
import numpy as np  # noqa: E402

__all__ = ["plot_curves"]


def plot_curves(curves: Mapping[str, Sequence[int]], targets: int, title: str, path: Path) -> Path:
    """Plot each crawler's harvest (targets found / pages so far) and recall (targets found /
    all targets) against pages crawled; ``curves`` maps a crawler to its targets-found curve
    (floats allowed, for averages over topics)."""
    figure, (harvest, recall) = plt.subplots(1, 2, figsize=(11, 4.2), constrained_layout=True)
    for name, curve in curves.items():
        found = np.asarray(curve, dtype=float)
        if not len(found):
            continue
        pages = np.arange(1, len(found) + 1)
        style = {"linestyle": "--", "color": "black"} if name == "oracle" else {}
        harvest.plot(pages, found / pages, label=name, **style)
        recall.plot(pages, found / max(targets, 1), label=name, **style)
    harvest.set(xlabel="pages crawled", ylabel="harvest (share relevant so far)", ylim=(0, 1.02))
    recall.set(xlabel="pages crawled", ylabel="target recall", ylim=(0, 1.02))
    for axes in (harvest, recall):
        axes.grid(alpha=0.3)
    harvest.legend(loc="best")
    figure.suptitle(title)
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path
