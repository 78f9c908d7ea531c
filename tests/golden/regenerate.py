"""Rebuild the golden playthroughs (``*.playthrough.txt``) from the golden records (``*.json``).

A playthrough is written in the spirit of OpenSpiel's playthrough files: the game record is
replayed through the PettingZoo AEC environment (``carnac_env.env``) and, for every
decision, the file shows the board as the ANSI renderer draws it (without colour codes),
the agent to act, its legal moves in the move notation and the move taken; at the end, the
rewards, the infos and the result. ``tests/core/test_golden.py`` replays each record and
compares the text it gets with the stored file.

    python tests/golden/regenerate.py              # rewrite every *.playthrough.txt
    python tests/golden/regenerate.py --check      # only report which ones differ
    python tests/golden/regenerate.py --construct  # also rebuild the three records

**A changed playthrough must be reviewed by a human before it is committed.** The files
exist so that any change in the rules, the notation, the observation mask or the renderer
shows up as a readable diff; regenerating them blindly defeats their purpose. Check that
every difference is intended (and, for a rules change, that the rules reference agrees)
before you commit the new files.

``--construct`` rebuilds the records themselves from the constructions below (hand-chosen
moves, and for two of them a seeded continuation). It also needs review: the records are
chosen to have particular properties (repeated declines, a tilt of the last megalith, a
board that fills up with megaliths left), which the constructions assert.
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
from pathlib import Path

import numpy as np

import carnac_env
from carnac_env.core import GameState
from carnac_env.core.record import GameRecord

GOLDEN = Path(__file__).resolve().parent


def playthrough(record: GameRecord) -> str:
    """The playthrough text of ``record``, replayed through ``carnac_env.env``.

    Raises:
        AssertionError: the environment does not accept a recorded move as legal, or ends
            the game before or after the record does.
    """
    env = carnac_env.env(board=record.board, render_mode="ansi")
    env.reset(seed=0)
    raw = env.unwrapped
    board = record.board
    rules = ", ".join(f"{k}={v}" for k, v in board.rules().items())
    out = [
        f"# Carnac playthrough: board {board.name} ({rules})",
        f"# {len(record.moves)} moves. Rebuilt by tests/golden/regenerate.py; review any diff by hand.",
        "",
    ]
    moves = iter(record.moves)
    decision = 0
    final: dict[str, tuple[float, dict]] = {}
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        if terminated or truncated:
            final[agent] = (reward, dict(info))
            env.step(None)
            continue
        decision += 1
        text = next(moves, None)
        assert text is not None, f"the record ends after {decision - 1} moves but the game goes on"
        action = raw.parse_action(text)
        legal = [int(a) for a in np.flatnonzero(obs["action_mask"])]
        assert action in legal, f"move {decision} ({text!r}) is not in the mask of {agent}"
        assert reward == 0
        out.append(f"== decision {decision} ==")
        out.append(env.render())
        out.append(f"agent: {agent}")
        out.append(f"legal moves ({len(legal)}):")
        out.extend(_wrap_moves([raw.action_to_text(a) for a in legal]))
        out.append(f"move: {text} (action {action})")
        out.append("")
        env.step(action)
    assert next(moves, None) is None, "the game ended before the record did"
    out.append("== final position ==")
    out.append(env.render())
    for agent in sorted(final):
        reward, info = final[agent]
        sizes = [int(size) for size in info["dolmens"] if size]  # the infos pad dolmens to a fixed length
        out.append(f"{agent}: reward {reward:+g}, dolmens {sizes}, score {info['score']}")
    result = raw.game.result()
    out.append(f"result: {json.dumps(result.to_dict())}")
    env.close()
    return "\n".join(out) + "\n"


def _wrap_moves(texts: list[str], width: int = 100) -> list[str]:
    """Comma-separated moves on lines of at most ``width`` characters, never splitting a move."""
    lines: list[str] = []
    line = ""
    for text in texts:
        item = f"{text},"
        if line and len(line) + 1 + len(item) > width:
            lines.append(line)
            line = ""
        line = f"{line} {item}" if line else f"  {item}"
    if line:
        lines.append(line)
    if lines:
        lines[-1] = lines[-1].rstrip(",")
    return lines


def golden_records() -> list[Path]:
    """The golden record files, sorted by name."""
    return sorted(GOLDEN.glob("*.json"))


def playthrough_path(record_path: Path) -> Path:
    """``name.json`` -> ``name.playthrough.txt``."""
    return record_path.with_suffix(".playthrough.txt")


# --------------------------------------------------------------------------- constructions
def _finish_seeded(state: GameState, moves: list[int], seed: int, tilt_chance: float) -> None:
    """Play on from ``state`` with a seeded policy: a random placement; a random tilt with
    probability ``tilt_chance`` when one is legal, else a decline."""
    rng = np.random.default_rng(seed)
    while not state.is_over:
        legal = state.legal_actions()
        if state.phase == 1:
            tilts = legal[:-1]
            action = int(rng.choice(tilts)) if tilts and rng.random() < tilt_chance else legal[-1]
        else:
            action = int(rng.choice(legal))
        moves.append(action)
        state.apply(action)


def _from_texts(board: str, texts: list[str], **rules: object) -> tuple[GameState, list[int]]:
    state = GameState(board, **rules)
    actions = []
    for text in texts:
        action = carnac_env.core.parse_action(state.board, text, state.to_act)
        state.apply(action)
        actions.append(action)
    return state, actions


def construct_declines() -> GameRecord:
    """Medium board: White declines three megaliths in a row (Red placing each time), Red
    declines two in a row later, then a seeded continuation to the end of the supply."""
    opening = [
        "d4 Rns", "decline", "g4 Rew", "decline", "d6 Wns", "decline",  # White declines 3 times
        "f2 Rns", "tilt S",  # White tilts f2 onto f3, f4 and places next
        "b6 Wew", "decline", "h6 Wns", "decline",  # Red declines twice; White places again
        "h2 Rew", "tilt W",
    ]  # fmt: skip
    state, actions = _from_texts("medium", opening)
    _finish_seeded(state, actions, seed=7, tilt_chance=0.5)
    record = GameRecord.from_actions(
        state.board, actions, {"description": "repeated declines by both players", "seed": 7}
    )
    texts = record.moves
    assert texts[1] == texts[3] == texts[5] == "decline" and texts[9] == texts[11] == "decline"
    assert state.supply == 0
    return record


def construct_last_tilt() -> GameRecord:
    """Petit Menec: the 14th and last megalith is tilted before the game ends (last_tilt)."""
    for seed in range(1000):
        state = GameState("petit_menec")
        actions: list[int] = []
        _finish_seeded(state, actions, seed=seed, tilt_chance=0.6)
        last = state.board.squares * 4
        declines = sum(1 for a in actions if a == last + 4)
        if last <= actions[-1] < last + 4 and declines >= 2 and state.result().winner is not None:
            return GameRecord.from_actions(
                state.board, actions, {"description": "the last megalith is tilted", "seed": seed}
            )
    raise AssertionError("no seed gave a game ending with a tilt of the last megalith")


def construct_full_board() -> GameRecord:
    """Small board: 15 megaliths tilted east in rows of three, then columns a and d filled
    with standing megaliths: the board is full after 25 of the 28 megaliths."""
    texts = []
    for row in range(1, 6):
        texts += [f"f{row} {'R' if row % 2 else 'W'}ew", "tilt E", f"d{row} Wew", "tilt E", f"a{row} Rew", "tilt E"]
    state, actions = _from_texts("small", texts)
    for column, top in (("d", "R"), ("a", "W")):
        for row in range(1, 6):
            action = carnac_env.core.parse_action(state.board, f"{column}{row} {top}ns", state.to_act)
            state.apply(action)
            actions.append(action)
            if state.phase == 1:
                actions.append(state.board.squares * 4 + 4)
                state.apply(actions[-1])
    assert state.is_over and state.empty == 0 and state.supply == 3
    return GameRecord.from_actions(state.board, actions, {"description": "the board fills up with 3 megaliths left"})


CONSTRUCTIONS = {
    "declines_medium": construct_declines,
    "last_tilt_petit_menec": construct_last_tilt,
    "full_board_small": construct_full_board,
}


def write_record(record: GameRecord, path: Path) -> None:
    """Write a record as indented JSON (one move per line, for readable diffs)."""
    path.write_text(json.dumps(record.to_dict(), indent=1) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only report differences; write nothing")
    parser.add_argument("--construct", action="store_true", help="rebuild the records too (review them!)")
    args = parser.parse_args(argv)
    if args.construct and not args.check:
        for name, construct in CONSTRUCTIONS.items():
            write_record(construct(), GOLDEN / f"{name}.json")
    differ = 0
    for path in golden_records():
        text = playthrough(GameRecord.load(path))
        target = playthrough_path(path)
        old = target.read_text(encoding="utf-8") if target.exists() else ""
        if old == text:
            continue
        differ += 1
        diff = difflib.unified_diff(old.splitlines(), text.splitlines(), str(target), "regenerated", lineterm="")
        print("\n".join(list(diff)[:60]))
        if not args.check:
            target.write_text(text, encoding="utf-8")
            print(f"rewrote {target.name}: review the diff before committing")
    print(f"{differ} of {len(golden_records())} playthroughs differ")
    return 1 if args.check and differ else 0


if __name__ == "__main__":
    sys.exit(main())
