"""The learning curve of a run: ``curve.json``, ``curve.csv``, ``log.txt`` and ``curve.png``.

One row per iteration (counters, losses, times, and at evaluations the win rates). The picture
(with matplotlib, the ``plot`` extra) shows the loss terms over the games played and, below,
the evaluation's win rates with 95% Wilson intervals; on a run over several boards, one line
per board against ``greedy``.
"""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from typing import Any

from carnac_env import _files
from carnac_env.arena.ratings import wilson  # kept here for old imports

__all__ = ["wilson", "write_curve", "write_log"]

#: The loss terms drawn, when the run has them.
LOSSES = ("loss", "policy_loss", "value_loss", "ownership_loss", "dolmens_loss")


def write_log(folder: Path, curve: list[dict[str, Any]], *, if_changed: bool = False) -> bool:
    """log.txt: one JSON line per iteration, from the curve (so it always matches the checkpoint);
    with ``if_changed``, a file that holds exactly those lines is left alone. Returns whether it
    wrote.

    Raises:
        CarnacError: the file cannot be written; ValueError: a NaN or an infinity in the curve
            (never JSON; the trainer's rows and the checkpoints it reads hold none).
    """
    text = "".join(json.dumps(row, allow_nan=False) + "\n" for row in curve)
    return _files.write_text(folder / "log.txt", text, if_changed=if_changed)


def write_curve(folder: Path, curve: list[dict[str, Any]], config: Any, *, if_changed: bool = False) -> bool:
    """curve.png (with matplotlib), curve.csv and curve.json, in that order: a curve.json of the
    curve says that the other two are of it too. With ``if_changed``, a folder whose curve.json
    and curve.csv hold this curve already is left alone. Returns whether it wrote.

    Raises:
        CarnacError: a file cannot be written; ValueError: a NaN or an infinity in the curve.
    """
    as_json = json.dumps(curve, indent=1, sort_keys=True, allow_nan=False) + "\n"
    keys: list[str] = []
    for row in curve:
        keys.extend(k for k in row if k not in keys)
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=keys)
    writer.writeheader()
    writer.writerows(curve)
    as_csv = text.getvalue()
    if if_changed and all(
        _files.same_bytes(folder / name, data.encode("utf-8"))
        for name, data in (("curve.json", as_json), ("curve.csv", as_csv))
    ):
        return False
    _plot(folder, curve, config)
    _files.write_text(folder / "curve.csv", as_csv)
    _files.write_text(folder / "curve.json", as_json)
    return True


def _plot(folder: Path, curve: list[dict[str, Any]], config: Any) -> None:
    """curve.png, where matplotlib is installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    rated = [r for r in curve if "vs_greedy" in r]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
    x = [r["games"] for r in curve]
    for key in LOSSES:
        if curve and key in curve[-1]:
            top.plot(x, [r.get(key, math.nan) for r in curve], label=key.replace("_", " "))
    top.set_ylabel("loss")
    top.legend(fontsize=7)
    if rated:
        _plot_rates(bottom, rated, config)
    bottom.axhline(0.5, color="grey", lw=0.5)
    bottom.set_ylim(-0.02, 1.02)
    bottom.set_ylabel(f"win rate (az:sims={config.eval_sims}), 95% interval")
    bottom.set_xlabel("games played")
    fig.suptitle(f"AlphaZero training on {config.board}")
    fig.tight_layout()
    with _files.writing(folder / "curve.png") as out:
        fig.savefig(out, format="png", dpi=80)
    plt.close(fig)


def _plot_rates(axes: Any, rated: list[dict[str, Any]], config: Any) -> None:
    """The evaluations' win rates with their 95% Wilson intervals (one line per board against
    greedy on a run over several boards)."""
    rx = [r["games"] for r in rated]
    boards = sorted({k.split("@", 1)[1] for r in rated for k in r if k.startswith("vs_greedy@")})
    series = [(f"vs_greedy@{b}", f"{b} vs greedy") for b in boards] or [
        ("vs_greedy", "vs greedy"),
        ("vs_mcts", f"vs mcts:sims={config.mcts_sims}"),
    ]
    if boards:
        series.append(("vs_mcts", f"mean vs mcts:sims={config.mcts_sims}"))
    for key, label in series:
        ys = [r.get(key, math.nan) for r in rated]
        line = axes.plot(rx, ys, "o-", ms=3, label=label)[0]
        lows, highs = zip(*(wilson(y, config.eval_games) if not math.isnan(y) else (math.nan, math.nan) for y in ys))
        axes.fill_between(rx, lows, highs, color=line.get_color(), alpha=0.12, lw=0)
    axes.legend(fontsize=7)
