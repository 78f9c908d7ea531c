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


def write_log(folder: Path, curve: list[dict[str, Any]]) -> None:
    """log.txt: one JSON line per iteration, from the curve (so it always matches the checkpoint)."""
    _files.write_text(folder / "log.txt", "".join(json.dumps(row) + "\n" for row in curve))


def write_curve(folder: Path, curve: list[dict[str, Any]], config: Any) -> None:
    """curve.json, curve.csv and (with matplotlib) curve.png."""
    _files.write_text(folder / "curve.json", json.dumps(curve, indent=1, sort_keys=True) + "\n")
    keys: list[str] = []
    for row in curve:
        keys.extend(k for k in row if k not in keys)
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=keys)
    writer.writeheader()
    writer.writerows(curve)
    _files.write_text(folder / "curve.csv", text.getvalue())
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
        rx = [r["games"] for r in rated]
        boards = sorted({k.split("@", 1)[1] for r in rated for k in r if k.startswith("vs_greedy@")})
        series = [(f"vs_greedy@{b}", f"{b} vs greedy") for b in boards] or [
            ("vs_greedy", "vs greedy"),
            ("vs_mcts", f"vs mcts:sims={config.mcts_sims}"),
        ]
        if boards:
            series.append(("vs_mcts", f"mean vs mcts:sims={config.mcts_sims}"))
        games = config.eval_games
        for key, label in series:
            ys = [r.get(key, math.nan) for r in rated]
            line = bottom.plot(rx, ys, "o-", ms=3, label=label)[0]
            lows, highs = zip(*(wilson(y, games) if not math.isnan(y) else (math.nan, math.nan) for y in ys))
            bottom.fill_between(rx, lows, highs, color=line.get_color(), alpha=0.12, lw=0)
        bottom.legend(fontsize=7)
    bottom.axhline(0.5, color="grey", lw=0.5)
    bottom.set_ylim(-0.02, 1.02)
    bottom.set_ylabel(f"win rate (az:sims={config.eval_sims}), 95% interval")
    bottom.set_xlabel("games played")
    fig.suptitle(f"AlphaZero training on {config.board}")
    fig.tight_layout()
    with _files.writing(folder / "curve.png") as out:
        fig.savefig(out, format="png", dpi=80)
    plt.close(fig)
