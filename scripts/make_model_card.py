"""Write a shipped model's card (``carnac_env/models/<board>.json``) from the model and its arenas.

    python scripts/make_model_card.py small --command "python -m carnac_env.train ..." \\
        --source "/work/az-runs/small (best.npz of iteration 220)" --arena /work/targets2/small-it220-*

The card repeats the model header's training record (settings, games, positions, gradient
steps, wall and CPU seconds, the machine, the evaluation that selected it) and adds what the
header cannot know: the command that trained it, where the run lives, and each arena given with
``--arena`` (an arena output folder: its ``arena.json`` settings and ``results.json`` totals),
with the command that reproduces it. Every number comes from those files; nothing is typed in.

    python scripts/make_model_card.py --endgames

adds (or refreshes) each shipped card's ``endgame_errors``: the endgame error rates of ``az`` and
``az:sims=0`` on every board where that model is az's default, copied from the leaderboard's
docs/cards/endgames.json (``python scripts/make_leaderboard.py --endgames`` measures them).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from carnac_env import models
from carnac_env._files import write_text
from carnac_env.train.curve import wilson

ROOT = Path(__file__).resolve().parent.parent
PREVIOUS_COMMIT = "9919766"  # the last commit with the models of issue 11


def _spec_name(spec: str, model: str) -> str:
    """The arena's spec with the candidate's file path written as the shipped model."""
    return spec.replace(f":model={model}", "").replace(f"model={model}:", "").replace(f"model={model}", "")


def arena_entry(folder: Path, model: str, by_board: bool = False) -> tuple[str, dict]:
    """One arena folder as a card entry: ``("az vs mcts", {result, games, score, interval_95,
    command, ...})``, the name prefixed with the board (``"large: az vs mcts"``) with
    ``by_board`` (the general model's card, whose arenas are on many boards)."""
    settings = json.loads((folder / "arena.json").read_text())
    results = json.loads((folder / "results.json").read_text())
    if len(results["pairs"]) != 1:
        raise SystemExit(f"{folder}: a card arena has one pair, this one has {len(results['pairs'])}")
    pair = results["pairs"][0]
    if by_board:  # on a board with a specialist, plain az would play the specialist: name the model
        a, b = (s.replace(f"model={model}", f"model={models.GENERAL_MODEL}") for s in (pair["a"], pair["b"]))
    else:
        a, b = (_spec_name(s, model) for s in (pair["a"], pair["b"]))
    a = a.rstrip(":") or "az"
    b = b.rstrip(":") or "az"
    agents = ",".join((a, b))
    command = (
        f"carnac arena --board {settings['board']} --agents {agents} --games {settings['games_per_pair']}"
        f" --openings {settings.get('openings', 0)} --seed {settings['seed']}"
    )
    previous = f"az:model=carnac_env/models/{settings['board']}.npz"
    name = f"{a} vs {b}"
    if b == f"az:model={settings['board']}":
        name = f"{a} vs the specialist"  # the board's own shipped model, by name
    if b == previous:
        name = f"{a} vs the previous shipped model"
        agents = f"{a},az:model=PREVIOUS.npz"
        command = command.replace(f"--agents {a},{b}", f"--agents {agents}")
    games = pair["wins_a"] + pair["draws"] + pair["wins_b"]
    score = (pair["wins_a"] + pair["draws"] / 2) / games
    low, high = wilson(score, games)
    entry = {
        "result": f"{pair['wins_a']}-{pair['draws']}-{pair['wins_b']}",
        "games": games,
        "score": round(score, 3),
        "interval_95": [round(low, 3), round(high, 3)],
        "command": command,
    }
    repeated = [r for r in results.get("repeated", []) if {r.get("a"), r.get("b")} == {pair["a"], pair["b"]}]
    if repeated:
        entry["repeated"] = repeated
    if b == previous:
        entry["previous"] = (
            f"PREVIOUS.npz: carnac_env/models/{settings['board']}.npz as it was before this model"
            f" (git show {PREVIOUS_COMMIT}:carnac_env/models/{settings['board']}.npz > PREVIOUS.npz)"
        )
    return (f"{settings['board']}: {name}" if by_board else name), entry


def endgame_entries(model: str, results: dict) -> dict:
    """A card's ``endgame_errors``: per board where ``model`` is az's default, the endgame error
    rates of ``az`` and ``az:sims=0`` there (from docs/cards/endgames.json's ``results``), with
    the note of what they mean and the command that reproduces them."""
    from carnac_env.core.boards import BOARDS

    boards = [name for name, board in BOARDS.items() if models.default_model(board) == model]
    rows = {(r["agent"], r["board"]): r for r in results["results"]}
    entries = {}
    for board in boards:
        for agent in ("az", "az:sims=0"):
            r = rows.get((agent, board))
            if r is not None:
                entries[f"{board}: {agent}"] = {k: r[k] for k in ("set", "all", "won", "drawn", "won_to_loss")}
    seed = results["seed"]
    return {
        "note": "share of the endgame set's positions (solved exactly; only those where some move loses value) "
        "where the agent's move throws away a win (won) or a draw (drawn), Wilson 95% interval; "
        f"reproduce with: carnac evaluate az --endgames --board BOARD --seed {seed}",
        "seed": seed,
        "boards": entries,
    }


def add_endgames() -> None:
    """Add ``endgame_errors`` to every shipped card (see the module docstring)."""
    stored = json.loads((ROOT / "docs" / "cards" / "endgames.json").read_text(encoding="utf-8"))
    for name, path in models.shipped_models().items():
        card_path = path.with_suffix(".json")
        card = json.loads(card_path.read_text(encoding="utf-8"))
        card["endgame_errors"] = endgame_entries(name, stored)
        write_text(card_path, json.dumps(card, indent=1, sort_keys=False) + "\n")
        print(f"wrote {card_path.relative_to(ROOT)}: endgame_errors on {len(card['endgame_errors']['boards'])} rows")


def main() -> None:
    import sys

    if sys.argv[1:] == ["--endgames"]:
        add_endgames()
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("board", help="the shipped model's board (its file is carnac_env/models/BOARD.npz)")
    parser.add_argument("--command", required=True, help="the command that trained it")
    parser.add_argument("--source", required=True, help="where the run lives and which file was shipped")
    parser.add_argument("--arena", nargs="*", default=[], help="arena output folders (one pair each)")
    parser.add_argument("--candidate", default="", help="the model path the arenas used (default: read from them)")
    parser.add_argument("--note", default="", help="a sentence for the card's note")
    args = parser.parse_args()

    path = ROOT / "carnac_env" / "models" / f"{args.board}.npz"
    net = models.files.load(path)
    header = net.header
    training = header.get("training", {})
    card: dict = {
        "board": args.board,
        "file": f"carnac_env/models/{args.board}.npz",
        "format": "carnac-az",
        "version": models.network.MODEL_VERSION,
        "architecture": header["architecture"],
        "command": args.command,
        "source_run": args.source,
    }
    for key in ("iteration", "games", "positions", "steps", "wall_seconds", "cpu_seconds", "machine", "torch"):
        card[key] = training.get(key)
    card["settings"] = training.get("config", {})
    card["evaluation_during_training"] = training.get("evaluation")
    arenas = {}
    for folder in sorted(args.arena):
        folder = Path(folder)
        settings = json.loads((folder / "arena.json").read_text())
        candidate = args.candidate or next(
            spec.split("model=")[1].split(":")[0] for spec in settings["agents"] if "model=" in spec
        )
        name, entry = arena_entry(folder, candidate, by_board=args.board == models.GENERAL_MODEL)
        arenas[name] = entry
    card["arena"] = arenas
    card["arena_note"] = (
        "40 games per pair, seats alternating, from --openings 4 openings each played from both seats;"
        " az at its default budget (200 PUCT simulations, 8 lanes), mcts at its default;"
        " score: the row agent's share of the points (a draw counts half), interval_95: its Wilson 95% interval."
        + (f" {args.note}" if args.note else "")
    )
    out = path.with_suffix(".json")
    if out.exists():  # the endgame rates come from another measurement (--endgames): keep them
        kept = json.loads(out.read_text(encoding="utf-8")).get("endgame_errors")
        if kept is not None:
            card["endgame_errors"] = kept
    write_text(out, json.dumps(card, indent=1, sort_keys=False) + "\n")
    print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
