"""Training settings are checked against memory when they are read, before anything is
allocated: the self-play searches (games x simulations x tree size, per search, so per worker),
the evaluation's searches, and custom boards at their largest (issue 32, "Budgets")."""

from __future__ import annotations

import numpy as np
import pytest

from carnac_env.core.boards import make_board
from carnac_env.core.game import GameState
from carnac_env.errors import CarnacError
from carnac_env.search import UCT, Playouts, Search
from carnac_env.search import search as search_module
from carnac_env.train.config import REPLAY_BUDGET, Config, replay_bytes, search_bytes
from carnac_env.train.mix import CUSTOM_LIMITS, largest_custom_board, random_board

LIMIT = search_module.TREE_BUDGET


def refused(**settings: object) -> str:
    with pytest.raises(CarnacError) as info:
        Config(**settings).check()
    return str(info.value)


def most_allowed(message: str, setting: str) -> int:
    return int(message.split(f"the most it allows is {setting}=")[1].split(";")[0].split(" ")[0])


def test_selfplay_searches_beyond_the_tree_budget_are_refused_when_the_settings_are_read():
    message = refused(board="le_menec", games=32, sims=100_000)
    assert "training setting sims=100000 needs 32 trees of 100000 simulations on board 'le_menec'" in message
    assert f"more than a search's limit of {LIMIT >> 20} MB" in message and "selfplay_shards" in message
    most = most_allowed(message, "sims")
    Config(board="le_menec", games=32, sims=most).check()  # the most it names fits, one more does not
    assert "sims=" in refused(board="le_menec", games=32, sims=most + 1)
    assert search_bytes(make_board("le_menec"), most, 32) <= LIMIT < search_bytes(make_board("le_menec"), most + 1, 32)
    # the trees are per search: more shards (one per worker) search fewer games each
    Config(board="le_menec", games=32, sims=most * 4, selfplay_shards=8).check()
    message = refused(board="general", games=4096, games_per_board=4096, sims=2000)
    assert "4096 trees of 2000 simulations" in message and "games_per_board" in message


def test_the_check_bounds_what_the_search_allocates():
    """What the settings check counts holds what a fresh search asks for (its own budget check)
    and what it allocates, on a built-in board and on the largest custom board."""
    for board, trees, sims in ((make_board("le_menec"), 3, 300), (largest_custom_board(), 2, 150)):
        search = Search(board, Playouts(), UCT(), trees=trees, seed=0)
        search.set_games([GameState(board) for _ in range(trees)])
        search.expand_roots()
        assert search.tree_bytes(sims) <= search_bytes(board, sims, trees)
        search.run(sims)
        assert sum(int(a.nbytes) for a in search.arrays) <= search_bytes(board, sims, trees)


def test_the_evaluation_searches_are_bounded_too():
    message = refused(board="le_menec", mcts_sims=10**6)
    assert "mcts_sims=1000000" in message and "reuses its tree" in message
    most = most_allowed(message, "mcts_sims")
    assert 2 * search_bytes(make_board("le_menec"), most, 1) <= LIMIT
    Config(board="le_menec", mcts_sims=most).check()
    message = refused(board="le_menec", eval_sims=100_000)
    assert "eval_sims=100000" in message and "on board 'le_menec'" in message
    Config(board="le_menec", eval_sims=most_allowed(message, "eval_sims")).check()
    # only the evaluated boards count, and nothing without evaluation
    Config(board="general", eval_boards="small", mcts_sims=200_000).check()  # too many for le_menec
    Config(board="le_menec", mcts_sims=10**6, eval_sims=100_000, eval_every=0).check()


def test_the_check_reads_the_searchs_own_budget(monkeypatch):
    Config().check()
    monkeypatch.setattr(search_module, "TREE_BUDGET", 1 << 16)
    assert "more than a search's limit of 0 MB" in refused()


def test_custom_boards_count_at_their_largest():
    largest = largest_custom_board()
    assert (largest.rows, largest.cols) == (CUSTOM_LIMITS["rows"][1], CUSTOM_LIMITS["cols"][1])
    rng = np.random.default_rng(5)
    for _ in range(300):
        board = random_board(rng)
        assert board.num_actions <= largest.num_actions and board.megaliths <= largest.megaliths
        assert board.squares <= largest.squares
    per = replay_bytes(1, ["custom"])
    assert per > replay_bytes(1, ["le_menec"])  # a custom board can be larger than every built-in one
    assert replay_bytes(1, ["petit_menec", "custom"]) == per
    # a mix with custom boards sizes its buffer for them: a buffer that fits petit_menec may not
    buffer = REPLAY_BUDGET // replay_bytes(1, ["petit_menec"])
    message = refused(board="general", mix="petit_menec:1,custom:1", buffer=buffer)
    assert f"{per} bytes a position" in message and f"buffer={REPLAY_BUDGET // per}" in message
    Config(board="general", mix="petit_menec:1,custom:1", buffer=REPLAY_BUDGET // per).check()
    # the self-play trees of custom boards are sized at the largest too
    message = refused(board="general", mix="petit_menec:1,custom:1", games_per_board=64, sims=20_000)
    assert f"on board 'custom' ({largest.rows} x {largest.cols})" in message


def test_the_command_line_refuses_before_creating_anything(tmp_path, capsys):
    pytest.importorskip("torch")
    from carnac_env.cli import main

    out = tmp_path / "run"
    assert main(["train", "--out", str(out), "--board", "le_menec", "--sims", "100000", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("carnac: error: train: training setting sims=100000") and "Traceback" not in err
    assert not out.exists()
