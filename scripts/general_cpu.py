"""The CPU hours of the general run, per board, read from its curve.

    python scripts/general_cpu.py                                   # the committed run's curve
    python scripts/general_cpu.py runs/general/curve.csv
    python scripts/general_cpu.py examples/models/general-run-lr4     # a run's folder: its curve.csv

Prints a Markdown table for docs/training.md: each board's self-play games and CPU hours (the
curve's ``selfplay_cpu@BOARD`` column, summed over iterations; a board's games are its groups of
``games_per_board`` games in the mix's fixed schedule, both from the run's config.json), the
learner's share (gradient steps and evaluations: the run's ``cpu_seconds`` less all self-play)
and the total.
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

from carnac_env.train.mix import BoardMix

ROOT = Path(__file__).resolve().parent.parent
CURVE = ROOT / "examples" / "models" / "general-run" / "curve.csv"
#: The mix's boards in the order of the docs' tables (custom: the random custom boards).
ORDER = ["petit_menec", "small", "medium", "kerlescan", "large", "kermario", "le_menec", "custom"]


def per_board(
    path: Path, mix: dict[str, float], games_per_board: int
) -> tuple[dict[str, tuple[int, float]], float, int]:
    """``({board: (games, self-play CPU seconds)}, the run's CPU seconds, the last iteration)``
    of the run whose curve is ``path``, trained on ``mix`` (its weights) in groups of
    ``games_per_board`` games (the groups' boards are the mix's fixed schedule)."""
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    if not rows:
        raise SystemExit(f"{path}: no iterations in the curve")
    totals: dict[str, list[float]] = {}
    for row in rows:
        for key, value in row.items():
            if key.startswith("selfplay_cpu@") and value:
                board = key.removeprefix("selfplay_cpu@")
                totals.setdefault(board, [0, 0.0])[1] += float(value)
    last = rows[-1]
    groups = int(last["games"]) // games_per_board
    for board in BoardMix(mix).schedule(0, groups):
        totals.setdefault(board, [0, 0.0])[0] += games_per_board
    return {b: (int(g), s) for b, (g, s) in totals.items()}, float(last["cpu_seconds"]), int(last["iteration"])


def table(path: Path) -> str:
    """The Markdown table of :func:`per_board`, in hours, for the run whose curve is ``path``
    (its mix and groups from the config.json beside it)."""
    config = json.loads(path.with_name("config.json").read_text(encoding="utf-8"))
    mix = BoardMix.of(config["board"], config.get("mix", "")).weights
    boards, total, last = per_board(path, mix, int(config.get("games_per_board", 16)))
    names = [b for b in ORDER if b in boards] + sorted(set(boards) - set(ORDER))
    lines = [
        f"| board (iterations 1-{last}) | self-play games | self-play CPU hours | share of the run |",
        "|---|---:|---:|---:|",
    ]
    for name in names:
        games, seconds = boards[name]
        lines.append(f"| {name} | {games:,} | {seconds / 3600:.2f} | {seconds / total:.0%} |")
    selfplay = sum(seconds for _, seconds in boards.values())
    learner = total - selfplay
    lines.append(f"| the learner (gradient steps, evaluations) | | {learner / 3600:.2f} | {learner / total:.0%} |")
    lines.append(f"| **all** | {sum(g for g, _ in boards.values()):,} | **{total / 3600:.2f}** | 100% |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("curve", nargs="?", default=str(CURVE), help="a run's curve.csv, or the run's folder")
    args = parser.parse_args(argv)
    path = Path(args.curve)
    if path.is_dir():
        path = path / "curve.csv"
    missing = [p for p in (path, path.with_name("config.json")) if not p.is_file()]
    if missing:
        parser.error(f"{missing[0]} is not a file; expected a run's curve.csv with its config.json beside it")
    print(table(path))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
