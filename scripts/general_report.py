"""The general model's report table, from the output folder of scripts/general_arenas.sh.

    python scripts/general_report.py OUT      # prints the markdown table of docs/training.md

The output folder of scripts/general_select.sh (a candidate's selection arenas) reads the same way,
with a column for the candidate against the shipped general model.

One row per built-in board, one column per pair (az against default mcts, az against greedy,
the raw policy against greedy, the general model against the board's specialist): the row
agent's wins-draws-losses, its score (a draw counts half) and the score's Wilson 95% interval.
Every number is read from the arenas' results.json; a pair not played yet shows a dash. Below the
table, the model files the arenas played, by sha256 (from results.json's ``models``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from carnac_env.train.curve import wilson

BOARDS = ("petit_menec", "small", "medium", "kerlescan", "large", "kermario", "le_menec")
PAIRS = {
    "az-mcts": "`az` vs `mcts`",
    "az-greedy": "`az` vs `greedy`",
    "raw-greedy": "`az:sims=0` vs `greedy`",
    "az-specialist": "`az` vs the specialist",
}
# pairs only the selection arenas (scripts/general_select.sh) play: a column when any board has one
SELECTION_PAIRS = {"az-general": "`az` vs the shipped `general`"}


def cell(folder: Path) -> str:
    """``"38-0-2 (95, 83-99%)"`` for one arena folder, ``"-"`` if it has no result yet."""
    results = folder / "results.json"
    if not results.exists():
        return "-"
    pair = json.loads(results.read_text())["pairs"][0]
    games = pair["wins_a"] + pair["draws"] + pair["wins_b"]
    score = (pair["wins_a"] + pair["draws"] / 2) / games
    low, high = wilson(score, games)
    result = f"{pair['wins_a']}-{pair['draws']}-{pair['wins_b']}"
    return f"{result} ({100 * score:.0f}, {100 * low:.0f}-{100 * high:.0f}%)"


def table(out: Path) -> str:
    """The markdown table of every board and pair found under ``out``."""
    pairs = dict(PAIRS)
    pairs.update(
        {pair: name for pair, name in SELECTION_PAIRS.items() if any((out / f"{b}-{pair}").is_dir() for b in BOARDS)}
    )
    lines = ["| board | " + " | ".join(pairs.values()) + " |", "|---|" + "---:|" * len(pairs)]
    for board in BOARDS:
        lines.append(f"| {board} | " + " | ".join(cell(out / f"{board}-{pair}") for pair in pairs) + " |")
    return "\n".join(lines)


def models(out: Path) -> list[str]:
    """One line per model file the arenas under ``out`` played (their ``results.json``'s
    ``models``): the spec, the file's sha256 and how many arenas; several digests for one spec
    mean the file changed between arenas, and the table mixes networks."""
    seen: dict[tuple[str, str], int] = {}
    for results in sorted(out.glob("*/results.json")):
        for spec, record in json.loads(results.read_text()).get("models", {}).items():
            key = (spec, record["sha256"])
            seen[key] = seen.get(key, 0) + 1
    specs = [spec for spec, _ in seen]
    mixed = " **another file than in other arenas**"
    return [
        f"- `{spec}`: {digest} ({count} arena{'s' if count > 1 else ''})" + (mixed if specs.count(spec) > 1 else "")
        for (spec, digest), count in seen.items()
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="the output folder of scripts/general_arenas.sh")
    args = parser.parse_args(argv)
    if not args.out.is_dir():
        print(f"{args.out}: no such folder; expected the output folder of scripts/general_arenas.sh", file=sys.stderr)
        return 2
    print(table(args.out))
    played = models(args.out)
    if played:
        print("\nModel files played:\n" + "\n".join(played))
    return 0


if __name__ == "__main__":
    sys.exit(main())
