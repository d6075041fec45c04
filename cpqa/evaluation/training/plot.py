"""The loss curves of the shipped models (their ``training_log.json``) as one PNG for docs/results:
``python -m cpqa.evaluation.training.plot [OUT.png]`` (needs matplotlib: ``pip install -e '.[notebooks]'``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from cpqa.models.names import TRAINED_DIR

TITLES = {  # model: (title, the steps' batch and machine)
    "encoder": ("bi-encoder (E1), round 2: multiple-negatives ranking loss", "batch 128, H200"),
    "chooser": ("answer chooser: binary cross-entropy", "batch 128, H200"),
    "reranker": ("record reranker: binary cross-entropy", "batch 32, 2 CPU cores"),
}


def plot(out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(TITLES), figsize=(14, 3.6))
    for ax, (name, (title, steps)) in zip(axes, TITLES.items()):
        rows = json.loads((TRAINED_DIR / name / "training_log.json").read_text(encoding="utf-8"))
        ax.plot([r["step"] for r in rows], [r["loss"] for r in rows], marker=".", lw=1)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel(f"step ({steps})")
        ax.set_ylabel("mean loss")
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    plot(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("docs/results/training_loss.png"))
