"""Endgame sets (carnac_env/evaluate/endgames/): the shipped files load and check, a malformed
file is refused naming it, stored values agree with the rules core and the solver, and the error
count of an agent is right on agents whose answer is known (always the worst move: every position
an error; always the best: none), deterministic, and printed by ``carnac evaluate --endgames``."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from _paths import ROOT

from carnac_env.cli import main
from carnac_env.core.boards import BOARDS
from carnac_env.core.game import GameState
from carnac_env.errors import CarnacError
from carnac_env.evaluate.endgames.report import format_endgame_table
from carnac_env.evaluate.endgames.score import endgame_errors
from carnac_env.evaluate.endgames.sets import ENDGAME_DIR, EndgameSet, endgame_set_ids, load_endgames


@pytest.fixture(scope="module")
def petit() -> EndgameSet:
    return load_endgames("petit_menec")


class _Oracle:
    """An agent that knows the set: it plays, in each of its positions, the stored move of the
    lowest value (``worst``) or of the highest (the first such)."""

    def __init__(self, endgames: EndgameSet, worst: bool) -> None:
        self.positions = endgames.positions
        self.worst = worst

    def act(self, state: GameState) -> int:
        position = next(p for p in self.positions if p.state == state)
        pick = min if self.worst else max
        return position.actions[position.values.index(pick(position.values))]


def test_every_board_has_a_set_that_loads_and_is_small() -> None:
    ids = endgame_set_ids()
    assert {i.rpartition("-v")[0] for i in ids} == set(BOARDS)
    total = sum((ENDGAME_DIR / f"{i}.json").stat().st_size for i in ids)
    assert total < 1_000_000, f"the endgame sets take {total} bytes"
    for board in BOARDS:
        endgames = load_endgames(board)
        assert endgames.board == BOARDS[board] and len(endgames.positions) >= 50
        left = endgames.made["megaliths_left"]
        for position in endgames.positions:
            assert position.value in (0, 1) and min(position.values) < position.value  # informative only
            assert left[0] <= position.state.supply <= left[1]
            assert position.actions == tuple(position.state.legal_actions())


def _mutated(tmp_path: Path, change: Any) -> Path:
    data = json.loads((ENDGAME_DIR / "petit_menec-v1.json").read_text(encoding="utf-8"))
    change(data)
    path = tmp_path / "bad-v1.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _set(key: str, value: Any) -> Any:
    return lambda data: data.__setitem__(key, value)


def _position(key: str, value: Any) -> Any:
    return lambda data: data["positions"][3].__setitem__(key, value)


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (_set("format", 2), "format must be 1"),
        (_set("version", 0), "version must be"),
        (_set("board", "nonesuch"), "is not a board"),
        (_set("positions", []), "positions must be a non-empty list"),
        (_set("made", None), "made must be an object"),
        (_position("moves", ["z9 Rns"]), "position 3: move 1"),
        (_position("moves", "a1 Rns"), "position 3: moves must be a list"),
        (_position("value", -1), "position 3: value must be 1 (won) or 0 (drawn)"),
        (_position("value", True), "position 3: value must be"),
        (_position("value", 1.0), "position 3: value must be"),
        (_position("values", "+"), "position 3: values must be a string of"),
        (_position("values", None), "position 3: values must be a string of"),
        (lambda d: d["positions"][3].update(value=1, values="+" * len(d["positions"][3]["values"])), "no move loses"),
        (lambda d: d["positions"][3].update(values=d["positions"][3]["values"].replace("+", "=")), "is not the best"),
    ],
)
def test_a_malformed_set_is_refused_naming_the_file(tmp_path: Path, change: Any, words: str) -> None:
    path = _mutated(tmp_path, change)
    with pytest.raises(CarnacError, match=re.escape(str(path))) as caught:
        load_endgames(path)
    assert words in str(caught.value)


def test_files_that_are_not_sets_are_refused(tmp_path: Path) -> None:
    for text in (b"[1, 2]", b"{not json", b"\xff\xfe", b"[" * 100_000):
        path = tmp_path / "x.json"
        path.write_bytes(text)
        with pytest.raises(CarnacError, match=re.escape(str(path))):
            load_endgames(path)
    with pytest.raises(CarnacError, match="the endgame set"):
        load_endgames(tmp_path / "missing.json")
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "fifo.json")
        with pytest.raises(CarnacError, match=r"fifo\.json"):
            load_endgames(tmp_path / "fifo.json")  # refused, never waited on
    with pytest.raises(CarnacError, match="unknown endgame set 'nonesuch'"):
        load_endgames("nonesuch")


def test_the_worst_move_counts_every_position_and_the_best_none(petit: EndgameSet) -> None:
    worst = endgame_errors(_Oracle(petit, worst=True), endgames=petit)
    assert worst.all.errors == worst.all.positions == len(petit.positions)
    assert worst.all.share == 1.0 and worst.all.interval[1] == pytest.approx(1.0) and worst.all.interval[0] > 0.9
    assert worst.won.positions + worst.drawn.positions == len(petit.positions)
    best = endgame_errors(_Oracle(petit, worst=False), endgames=petit)
    assert best.all.errors == 0 and best.all.share == 0.0 and best.all.interval[0] == 0.0
    assert best.won_to_loss == 0 and 0 < best.all.interval[1] < 0.1


def test_random_errs_sometimes_and_the_same_seed_gives_the_same_moves(petit: EndgameSet) -> None:
    first = endgame_errors("random", "petit_menec", seed=3)
    assert first == endgame_errors("random", "petit_menec", seed=3)
    assert first != endgame_errors("random", "petit_menec", seed=4)
    assert 0 < first.all.errors < first.all.positions
    summary = first.to_dict()
    assert summary["set"] == "petit_menec-v1" and summary["all"]["positions"] == len(petit.positions)
    low, high = summary["all"]["interval_95"]
    assert low < summary["all"]["share"] < high


def test_bad_agents_and_seeds_are_refused(petit: EndgameSet) -> None:
    with pytest.raises(CarnacError, match="nonesuch"):
        endgame_errors("nonesuch", "petit_menec")
    with pytest.raises(CarnacError, match="seed"):
        endgame_errors("random", "petit_menec", seed=-1)

    class Cheat:
        def act(self, state: GameState) -> int:
            return -5

    with pytest.raises(CarnacError, match="position 0 of petit_menec-v1, which is not a legal move"):
        endgame_errors(Cheat(), endgames=petit)


def test_the_cli_prints_the_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "eg"
    args = ["evaluate", "greedy", "--endgames", "--board", "petit_menec,small", "--seed", "1", "--no-progress"]
    assert main([*args, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    expected = format_endgame_table([endgame_errors("greedy", b, seed=1) for b in ("petit_menec", "small")])
    assert expected in printed
    lines = printed.splitlines()
    assert lines[0].split() == ["agent", "board", "(set)", "errors:", "all", "won", "positions", "drawn", "positions"]
    assert lines[1].startswith("greedy") and "petit_menec (petit_menec-v1)" in lines[1]
    assert "small (small-v1)" in lines[2]
    stored = json.loads((out / "endgames.json").read_text())
    assert [r["board"] for r in stored] == ["petit_menec", "small"]
    assert main(["evaluate", "greedy", "--endgames", "--board", "nonesuch", "--no-progress"]) == 2


@pytest.mark.slow
def test_a_hand_checked_position() -> None:
    """The values a set stores come from :func:`solved_values`; on a position small enough to
    check by hand they are the hand's. A 2 x 3 board (dolmens of 3, the game ends on the last
    placement), Red to place the last megalith::

        R R .      c1: red on top closes Red's row (a dolmen of 3): won; white on top: no dolmen, drawn
        W W .      c2: red on top: no dolmen, drawn; white on top closes White's row: lost
    """
    from carnac_env.core.notation import action_to_text
    from carnac_env.evaluate.endgames.make import solved_values

    state = GameState.from_diagram("custom", ["RR.", "WW."], supply=1, rows=2, cols=3, last_tilt=False)
    value, values = solved_values(state, 1)
    by_move = {action_to_text(state.board, a, 0): v for a, v in zip(state.legal_actions(), values)}
    expected = {"c1 Rns": 1, "c1 Rew": 1, "c1 Wns": 0, "c1 Wew": 0, "c2 Rns": 0, "c2 Rew": 0}
    expected |= {"c2 Wns": -1, "c2 Wew": -1}
    assert value == 1 and by_move == expected


@pytest.mark.slow
def test_regenerating_positions_gives_the_stored_values() -> None:
    """The solver, run again on the first positions of every set, gives the stored value of every
    move, and its own best move never loses value (an error rate of 0)."""
    from carnac_env.evaluate.endgames.make import solved_values
    from carnac_env.solve import solve

    for board in BOARDS:
        endgames = load_endgames(board)
        left = endgames.made["megaliths_left"][1]
        for position in endgames.positions[:3]:
            value, values = solved_values(position.state, left)
            assert (value, tuple(values)) == (position.value, position.values), board
            best = solve(position.state, max_megaliths_left=left).best_action
            assert position.value_of(best) == position.value


def test_the_leaderboard_and_the_model_cards_show_the_stored_rates() -> None:
    """docs/cards/endgames.json holds every built-in agent on every board's newest set, and each
    shipped model's card repeats az's rows on the boards that model plays by default."""
    from carnac_env.models import MODELS_DIR, default_model, shipped_models

    root = ROOT
    stored = json.loads((root / "docs" / "cards" / "endgames.json").read_text(encoding="utf-8"))
    rows = {(r["agent"], r["board"]): r for r in stored["results"]}
    for agent in ("random", "greedy", "mcts", "az"):
        for board in BOARDS:
            assert rows[(agent, board)]["set"] == load_endgames(board).id, (agent, board)
    page = (root / "docs" / "leaderboard.md").read_text(encoding="utf-8")
    assert "## Endgame error rates" in page
    for name in shipped_models():
        card = json.loads((MODELS_DIR / f"{name}.json").read_text(encoding="utf-8"))
        boards = [b for b, board in BOARDS.items() if default_model(board) == name]
        entries = card["endgame_errors"]["boards"]
        assert sorted(entries) == sorted(f"{b}: {a}" for b in boards for a in ("az", "az:sims=0")), name
        for b in boards:
            assert entries[f"{b}: az"]["all"] == rows[("az", b)]["all"]
