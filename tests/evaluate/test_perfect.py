"""carnac_env.evaluate.perfect: an agent's moves over whole games judged against perfect play.

The judge is checked against a brute-force minimax of the core rules (tests/_minimax.py) on tiny
boards where every move of every game can be judged; the agent that plays the solver's moves
throws nothing away; the same seed gives the same judged moves; the command line prints and
writes the result and refuses what it would ignore; bad input is refused before a game is played.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _minimax import brute

from carnac_env.arena.openings import random_opening
from carnac_env.arena.runner import play_game
from carnac_env.cli import main
from carnac_env.core.boards import make_board
from carnac_env.core.game import GameState
from carnac_env.core.notation import action_to_text
from carnac_env.errors import CarnacError
from carnac_env.evaluate.perfect import OPENING_PLIES, perfect_game_seed, perfect_play_errors

TINY = make_board("custom", rows=3, cols=4, megaliths=5, min_dolmen=2)


def brute_judged(board, agent: str, games: int, seed: int, left: int) -> list[tuple[int, int, str]]:
    """The judged moves as the brute-force minimax sees them: the same games replayed (same seeds)."""
    memo: dict = {}
    moves = []
    for game in range(games):
        opening = tuple(random_opening(board, OPENING_PLIES, seed, game))
        actions = play_game(board, agent, agent, perfect_game_seed(seed, agent, game), opening=opening).actions()
        state = GameState(board)
        for ply, action in enumerate(actions):
            if ply >= len(opening) and state.supply <= left:
                value = brute(state, memo)[0]
                child = state.copy()
                child.apply(action)
                reached = brute(child, memo)[0]
                played = reached if child.to_act == state.to_act else -reached
                moves.append((value, played, action_to_text(board, action, state.to_act)))
            state.apply(action)
    return moves


@pytest.mark.parametrize("agent", ["random", "greedy"])
def test_every_judged_move_has_the_brute_force_values(agent: str) -> None:
    result = perfect_play_errors(agent, TINY, games=6, seed=3, megaliths_left=TINY.megaliths)
    want = brute_judged(TINY, agent, 6, 3, TINY.megaliths)
    assert list(result.moves) == want
    assert len(want) >= 6 * 4  # every move after the opening is judged
    if agent == "random":
        assert result.all.errors > 0  # random play throws positions away: the test can fail


def test_the_cut_judges_only_the_moves_made_with_at_most_that_many_megaliths_left() -> None:
    board = make_board("custom", rows=3, cols=4, megaliths=6, min_dolmen=2)
    every = perfect_play_errors("random", board, games=4, seed=1, megaliths_left=6)
    cut = perfect_play_errors("random", board, games=4, seed=1, megaliths_left=2)
    assert 0 < len(cut.moves) < len(every.moves)
    assert brute_judged(board, "random", 4, 1, 2) == list(cut.moves)


def test_the_shares_count_won_and_drawn_positions_and_leave_lost_ones_out() -> None:
    result = perfect_play_errors("random", TINY, games=8, seed=0, megaliths_left=TINY.megaliths)
    won = [m for m in result.moves if m[0] == 1]
    drawn = [m for m in result.moves if m[0] == 0]
    assert result.won.positions == len(won) and result.drawn.positions == len(drawn)
    assert result.all.positions == len(won) + len(drawn) < len(result.moves)  # some positions were lost
    assert result.won.errors == sum(1 for v, p, _ in won if p < 1)
    assert result.drawn.errors == sum(1 for v, p, _ in drawn if p < 0)
    assert all(p <= v for v, p, _ in result.moves)  # no move gains value against perfect play
    row = result.to_dict()
    assert row["judged"] == len(result.moves) and row["all"]["errors"] == result.all.errors


def test_a_solve_past_the_node_limit_leaves_its_moves_unjudged() -> None:
    every = perfect_play_errors("random", TINY, games=3, seed=4, megaliths_left=5)
    none = perfect_play_errors("random", TINY, games=3, seed=4, megaliths_left=5, node_limit=1)
    assert every.unjudged == 0 and len(every.moves) > 0
    # only the positions solved within one node (the last megalith's, scored in place) keep their moves
    assert none.unjudged > len(none.moves) and none.unjudged + len(none.moves) == len(every.moves)
    assert set(none.moves) <= set(every.moves)
    assert none.to_dict()["unjudged"] == none.unjudged and none.to_dict()["node_limit"] == 1


def test_the_result_does_not_depend_on_what_the_thread_solved_before() -> None:
    """The solver keeps its table between calls; a measurement starts from an empty one, so the
    node counts, and so the moves left unjudged under a limit, are the same however it is run."""
    first = perfect_play_errors("random", TINY, games=4, seed=7, megaliths_left=5, node_limit=300)
    again = perfect_play_errors("random", TINY, games=4, seed=7, megaliths_left=5, node_limit=300)
    assert 0 < first.unjudged < first.unjudged + len(first.moves)
    assert (again.moves, again.unjudged) == (first.moves, first.unjudged)


def test_the_agent_that_plays_the_solvers_moves_throws_nothing_away() -> None:
    result = perfect_play_errors("az:sims=0:solve=5", "petit_menec", games=3, seed=0, megaliths_left=5)
    assert result.all.positions > 0 and result.all.errors == 0


def test_the_same_seed_gives_the_same_judged_moves() -> None:
    first = perfect_play_errors("mcts:sims=30", TINY, games=3, seed=5, megaliths_left=4)
    again = perfect_play_errors("mcts:sims=30", TINY, games=3, seed=5, megaliths_left=4)
    other = perfect_play_errors("mcts:sims=30", TINY, games=3, seed=6, megaliths_left=4)
    assert first.moves == again.moves and first.moves != other.moves


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"games": 0}, "games=0"),
        ({"megaliths_left": 0}, "megaliths_left=0"),
        ({"megaliths_left": 6}, "megaliths_left=6"),
        ({"seed": -1}, "seed=-1"),
        ({"node_limit": -5}, "node_limit=-5"),
        ({"table_mb": 0}, "table_mb=0"),
        ({"agent": "nonesuch"}, "nonesuch"),
        ({"agent": ""}, "''"),
        ({"board": "nowhere"}, "nowhere"),
    ],
)
def test_bad_input_is_refused_naming_the_value(kwargs: dict, named: str) -> None:
    args = {"agent": "random", "board": TINY, **kwargs}
    with pytest.raises(CarnacError) as error:
        perfect_play_errors(args.pop("agent"), **args)
    assert named in str(error.value)


def test_the_cli_prints_and_writes_the_result(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "perfect"
    args = ["evaluate", "random", "--perfect", "--board", "3x4:megaliths=5,min_dolmen=2", "--games", "3"]
    assert main([*args, "--megaliths-left", "5", "--seed", "2", "--out", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    row = json.loads((out / "perfect.json").read_text())
    assert row["agent"] == "random" and row["games"] == 3 and row["megaliths_left"] == 5 and row["seed"] == 2
    assert f"{row['all']['errors']} of {row['all']['positions']} moves threw the value away" in printed
    want = perfect_play_errors("random", TINY, games=3, seed=2, megaliths_left=5).to_dict()
    assert {k: v for k, v in row.items() if k not in ("seconds", "board")} == {
        k: v for k, v in want.items() if k not in ("seconds", "board")
    }


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        (["--panel", "medium-v1"], "--panel"),
        (["--endgames"], "--endgames"),
        (["--workers", "2"], "--workers"),
        (["--openings", "2"], "--openings"),
        (["--megaliths-left", "30"], "--megaliths-left 30"),
    ],
)
def test_the_cli_refuses_what_perfect_would_ignore(extra: list[str], named: str, tmp_path: Path, capsys) -> None:
    out = tmp_path / "never"
    assert main(["evaluate", "random", "--perfect", "--no-progress", "--out", str(out), *extra]) == 2
    assert named in capsys.readouterr().err and not out.exists()


def test_the_cli_refuses_a_bad_spec_before_making_the_folder(tmp_path: Path, capsys) -> None:
    out = tmp_path / "never"
    assert main(["evaluate", "nonesuch", "--perfect", "--no-progress", "--out", str(out)]) == 2
    assert "nonesuch" in capsys.readouterr().err and not out.exists()


def test_megaliths_left_without_perfect_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["evaluate", "random", "--megaliths-left", "5", "--no-progress"]) == 2
    assert "--megaliths-left is an option of --perfect" in capsys.readouterr().err
