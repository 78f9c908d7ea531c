"""Long solves: a search saved and resumed (resumable.py), and a whole game cut and solved
leaf by leaf (whole_game.py, ``carnac solve``), each against the plain solver.

Their files are untrusted input: a checkpoint or a run file that does not fit the position,
the cut or the levers is refused with a message that names what is wrong.
"""

from __future__ import annotations

import io
import json
import random
from pathlib import Path

import numpy as np
import pytest
from _frameworks import require

from carnac_env.cli import main
from carnac_env.core.boards import make_board
from carnac_env.core.game import PLACE, GameState
from carnac_env.errors import CarnacError
from carnac_env.solve import clear_table, solve
from carnac_env.solve.resumable import LongSolve
from carnac_env.solve.whole_game import solve_game

pytestmark = pytest.mark.slow  # the solver's first compile takes a minute on a shared machine


def _endgame(left: int, seed: int) -> GameState:
    rng = random.Random(seed)
    while True:
        state = GameState("petit_menec")
        while not state.is_over and not (state.phase == PLACE and state.supply == left):
            state.apply(rng.choice(state.legal_actions()))
        if not state.is_over:
            return state


def _value_after(state: GameState, action: int) -> int:
    child = state.copy()
    child.apply(action)
    clear_table()
    value = solve(child, max_megaliths_left=child.supply).result
    return value if child.to_act == state.to_act else -value


@pytest.mark.parametrize("null_window", [False, True])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_search_saved_and_resumed_in_pieces_gets_the_plain_result(
    tmp_path: Path, seed: int, null_window: bool
) -> None:
    """Pieces of 2,000 nodes, each saved, loaded in a new object and (every other piece) with
    an empty table: the result is the plain solve's and the best move gets it (with null
    windows too, whose second search may begin in any piece)."""
    state = _endgame(6, seed)
    clear_table()
    plain = solve(state)
    clear_table()
    search = LongSolve(state, last_megalith=True, order=3, symmetry=True, two_tier=True, null_window=null_window)
    path = tmp_path / "leaf.npz"
    pieces = 0
    assert search.progress() == []  # not begun
    while not search.run(0.0, node_limit=2000):
        where = search.progress()
        assert where and all(1 <= begun <= count for begun, count in where)
        search.save(path)
        pieces += 1
        if pieces % 2:
            clear_table()
        search = LongSolve.load(path, state)
    assert pieces >= 3
    assert search.result == plain.result and search.progress() == []
    assert _value_after(state, search.best_action) == plain.result
    search.save(path)  # a finished search saves and loads as finished
    again = LongSolve.load(path, state)
    assert again.done and (again.result, again.best_action) == (search.result, search.best_action)


def _checkpoint(tmp_path: Path) -> tuple[GameState, Path, dict[str, np.ndarray]]:
    state = _endgame(5, 1)
    clear_table()
    search = LongSolve(state, last_megalith=True)
    search.run(0.0, node_limit=5000)
    assert not search.done
    path = tmp_path / "leaf.npz"
    search.save(path)
    with np.load(path) as npz:
        return state, path, {key: npz[key] for key in npz.files}


def _write(path: Path, arrays: dict[str, np.ndarray]) -> None:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    path.write_bytes(buffer.getvalue())


def test_a_checkpoint_that_does_not_fit_is_refused(tmp_path: Path) -> None:
    state, path, saved = _checkpoint(tmp_path)
    depth = int(saved["depth"])
    assert depth >= 2
    bad = tmp_path / "bad.npz"

    def refused(change: dict[str, np.ndarray], match: str, on: GameState = state) -> None:
        _write(bad, {**saved, **change})
        with pytest.raises(CarnacError, match=match):
            LongSolve.load(bad, on)

    refused({}, "another position", on=_endgame(5, 2))
    refused({"format": np.array("carnac-long-solve-0")}, "format")
    refused({"depth": np.array(10_000)}, "depth")
    refused({"levers": np.array(["nonesuch=1"])}, "unknown lever")
    refused({"stage": np.array(2)}, "stage 2")  # a null-window stage in a full-window search
    moves = saved["moves"].copy()
    moves[0, 0] = moves[0, 1]  # one legal action twice
    refused({"moves": moves}, "legal actions")
    frames = saved["frames"].copy()
    frames[0, 5] = 10_000  # the next move, past the list
    refused({"frames": frames}, "next move")
    frames = saved["frames"].copy()
    frames[1, 0] = 99  # a window no result search has
    refused({"frames": frames}, "window")
    frames = saved["frames"].copy()
    frames[1, 1] = -frames[1, 1]  # a window in range, but not the one the parent gives
    refused({"frames": frames}, "not one its parent gives")
    refused({"frames": saved["frames"].astype(np.float64)}, "frames")
    refused({"nodes": np.array(-5)}, "negative")
    _write(bad, {**saved, "moves": np.array([object()], dtype=object)})
    with pytest.raises(CarnacError, match="not a readable"):  # never unpickled
        LongSolve.load(bad, state)
    bad.write_bytes(path.read_bytes()[:100])
    with pytest.raises(CarnacError, match="not a readable"):
        LongSolve.load(bad, state)
    with pytest.raises(CarnacError, match="not a regular file"):
        LongSolve.load(tmp_path, state)


BOARDS = [(3, 3, 4), (3, 4, 5), (4, 4, 5)]


@pytest.mark.parametrize(("rows", "cols", "megaliths"), BOARDS)
@pytest.mark.parametrize("plies", [0, 1, 2, 3])
def test_the_whole_game_gets_the_plain_solve_of_the_start(
    tmp_path: Path, rows: int, cols: int, megaliths: int, plies: int
) -> None:
    """On small custom boards, cut at every depth, in small pieces on two threads: the start's
    value is the plain solve's, and along the line it gives, each position keeps it."""
    board = make_board("custom", rows=rows, cols=cols, megaliths=megaliths)
    start = GameState(board)
    clear_table()
    plain = solve(start, max_megaliths_left=megaliths).result
    answer = solve_game(board, tmp_path, plies, workers=2, chunk_nodes=2000, table_mb=1, progress=None)
    assert answer.finished and answer.value == plain and answer.interval == (plain, plain)
    assert answer.solved <= answer.leaves
    state = start
    for action in answer.line:
        sign = 1 if state.to_act == 0 else -1
        assert _value_after(state, action) == sign * plain
        state.apply(action)
    assert len(answer.line) >= plies  # to the cut, then the leaf's best move


def test_an_order_of_the_first_plies_changes_what_is_solved_first_not_the_value(tmp_path: Path) -> None:
    board = make_board("custom", rows=4, cols=4, megaliths=5)
    clear_table()
    plain = solve(GameState(board)).result

    def backwards(states: list[GameState]) -> list[dict[int, float]]:
        return [{action: float(action) for action in state.legal_actions()} for state in states]

    runs = {}
    for name, priors in (("kernel", None), ("backwards", backwards)):
        folder = tmp_path / name
        answer = solve_game(board, folder, 2, workers=1, table_mb=1, priors=priors, progress=None)
        assert answer.finished and answer.value == plain
        leaves = json.loads((folder / "game.json").read_text())["leaves"]
        runs[name] = [i for i, leaf in enumerate(leaves) if leaf["value"] is not None]
    assert runs["kernel"] != runs["backwards"]  # other leaves were needed, in another order


def test_a_run_stopped_early_goes_on_from_its_folder(tmp_path: Path) -> None:
    board = make_board("custom", rows=4, cols=4, megaliths=5)
    first = solve_game(board, tmp_path, 2, workers=2, pieces=3, chunk_nodes=500, table_mb=1, progress=None)
    assert not first.finished and first.value is None
    assert list(tmp_path.glob("leaf-*.npz")), "a leaf begun and not finished keeps its checkpoint"
    record = json.loads((tmp_path / "game.json").read_text())
    assert sum(leaf["nodes"] for leaf in record["leaves"]) == first.nodes > 0
    clear_table()
    plain = solve(GameState(board)).result
    again = solve_game(board, tmp_path, 2, workers=1, chunk_nodes=500, table_mb=1, progress=None)
    assert again.finished and again.value == plain and again.nodes > first.nodes


def test_a_run_file_that_does_not_fit_is_refused(tmp_path: Path) -> None:
    board = make_board("custom", rows=3, cols=3, megaliths=4)
    solve_game(board, tmp_path, 2, chunk_nodes=500, table_mb=1, progress=None)
    good = json.loads((tmp_path / "game.json").read_text())

    def refused(record: object, match: str, **options: object) -> None:
        (tmp_path / "game.json").write_text(json.dumps(record))
        with pytest.raises(CarnacError, match=match):
            solve_game(board, tmp_path, 2, table_mb=1, progress=None, **options)  # type: ignore[arg-type]

    refused({**good, "format": "other"}, "not a carnac-whole-game-1")
    refused({**good, "plies": 1}, "plies=1")
    refused({**good, "levers": {}}, "levers")
    leaves = [dict(leaf) for leaf in good["leaves"]]
    leaves[0]["value"] = 2
    refused({**good, "leaves": leaves}, "value 2")
    leaves = [dict(leaf) for leaf in good["leaves"]]
    leaves[0]["actions"] = [1, 2]
    refused({**good, "leaves": leaves}, "leaf 0 is not the position")
    solved = next(i for i, leaf in enumerate(good["leaves"]) if leaf["value"] is not None)
    refused({**good, "best_moves": {str(solved): 9999}}, "not legal")
    (tmp_path / "game.json").write_text("{")
    with pytest.raises(CarnacError, match="not JSON"):
        solve_game(board, tmp_path, 2, table_mb=1, progress=None)


def test_carnac_solve(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    args = ["solve", "3x3:megaliths=4", "--out", str(out), "--table-mb", "1", "--chunk-seconds", "1"]
    assert main(args) == 0
    printed = capsys.readouterr().out
    clear_table()
    value = solve(GameState(make_board("custom", rows=3, cols=3, megaliths=4))).result
    assert f"the first player's value is {value}" in printed
    assert main([*args[:2], "--out", str(tmp_path / "early"), "--hours", "0.000000000001", "--table-mb", "1"]) == 3
    assert "not proved yet" in capsys.readouterr().out
    assert main(["solve", "nonesuch", "--out", str(tmp_path / "x")]) == 2
    assert "nonesuch" in capsys.readouterr().err


def test_the_leaves_run_as_ray_tasks(tmp_path: Path) -> None:
    """With ``ray=...`` each piece is a Ray task that resumes from the checkpoint the driver
    keeps: the same value as the plain solve, and the run goes on from the folder."""
    require("ray", "the ray extra")
    board = make_board("custom", rows=3, cols=4, megaliths=5)
    clear_table()
    plain = solve(GameState(board)).result
    options = {"workers": 2, "chunk_nodes": 200, "table_mb": 1, "ray": "local", "progress": None}
    first = solve_game(board, tmp_path, 2, pieces=2, **options)  # type: ignore[arg-type]
    assert not first.finished and list(tmp_path.glob("leaf-*.npz"))
    answer = solve_game(board, tmp_path, 2, **options)  # type: ignore[arg-type]
    assert answer.finished and answer.value == plain and answer.nodes > first.nodes
