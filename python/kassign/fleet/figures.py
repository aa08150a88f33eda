"""What the report's figures share: the PNG writer, and the imports the job starts early."""

from __future__ import annotations

from typing import Any


def preload() -> None:
    """Import what the report needs (pandas, matplotlib with its font cache): the job calls it in a
    thread while Spark runs, so that the report does not wait for it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot
    import pandas  # noqa: F401


#: Resolution of the report's PNGs.
DPI = 110


def save_figure(fig: Any, path: str) -> None:
    """Write ``fig`` as a PNG cropped to what is drawn (``bbox_inches="tight"``: one layout pass, where
    ``tight_layout`` before ``savefig`` drew the figure twice) and close it."""
    import matplotlib.pyplot as plt

    fig.savefig(path, dpi=DPI, bbox_inches="tight", pad_inches=0.1)
    plt.close(fig)
