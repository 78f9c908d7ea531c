"""The arena: schedule and seeds, results schema, ratings, workers and resuming after a kill."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from _held import start_held

from carnac_env.arena import (
    bradley_terry,
    format_table,
    game_seed,
    load_games,
    play_game,
    run_arena,
    schedule,
    split_agents,
)
from carnac_env.core.record import GameRecord
from carnac_env.errors import CarnacError

AGENTS = ["random", "greedy", "mcts:sims=20"]


def quiet(_: str) -> None:
    pass


def test_split_agents_keeps_options_together() -> None:
    assert split_agents("random,greedy,mcts:sims=200") == ["random", "greedy", "mcts:sims=200"]
    assert split_agents("random, mcts:sims=200,c=2 ,greedy") == ["random", "mcts:sims=200,c=2", "greedy"]


def test_schedule_alternates_seats_and_seeds_by_identity() -> None:
    games = schedule(["a", "b", "c"], 4, seed=0)
    assert len(games) == 3 * 4
    ab = [g for g in games if (g.a, g.b) == ("a", "b")]
    assert [g.seats for g in ab] == [("a", "b"), ("b", "a"), ("a", "b"), ("b", "a")]
    # a game's seed depends on its identity, not on the other agents or the order
    other = schedule(["a", "b"], 4, seed=0)
    assert [g.seed for g in other] == [g.seed for g in ab]
    assert game_seed(0, "a", "b", 1) != game_seed(1, "a", "b", 1)
    assert len({g.seed for g in games}) == len(games)


def test_play_game_record_replays() -> None:
    record = play_game("petit_menec", "greedy", "random", seed=3)
    assert record.result is not None
    assert record.replay().is_over
    assert play_game("petit_menec", "greedy", "random", seed=3).moves == record.moves


def test_pairs_of_agents_without_random_choices_are_reported_as_repeated(tmp_path: Path) -> None:
    """Two raw az policies choose the same move from the same position whatever the seed, so
    their 6 games are 2 (one per seating); random's games all differ."""
    printed: list[str] = []
    agents = ["az:sims=0", "az:sims=0:c=1.0"]
    results = run_arena(
        agents, tmp_path / "az", board="petit_menec", games=6, seed=0, progress=False, echo=printed.append
    )
    assert results["repeated"] == [{"a": agents[0], "b": agents[1], "games": 6, "distinct": 2}]
    assert "az:sims=0 vs az:sims=0:c=1.0 played 2 distinct games in 6" in "\n".join(printed)
    printed.clear()
    results = run_arena(
        ["random", "greedy"], tmp_path / "rg", board="small", games=6, seed=0, progress=False, echo=printed.append
    )
    assert results["repeated"] == []
    assert "repeated games" not in "\n".join(printed)


def test_openings_are_paired_by_seat_and_make_deterministic_agents_play_different_games(tmp_path: Path) -> None:
    from carnac_env.arena.openings import random_opening
    from carnac_env.core.boards import make_board

    board = make_board("petit_menec")
    games = schedule(["a", "b", "c"], 6, seed=5, openings=3, board=board)
    for pair in (("a", "b"), ("b", "c")):
        mine = [g for g in games if (g.a, g.b) == pair]
        # game k plays opening k // 2: each opening once from each seat, the same for every pair
        assert [g.opening for g in mine] == [tuple(random_opening(board, 3, 5, k // 2)) for k in range(6)]
        assert mine[0].opening == mine[1].opening != mine[2].opening
        assert mine[0].seats == mine[1].seats[::-1]
    assert random_opening(board, 3, 5, 0) == random_opening(board, 3, 5, 0) != random_opening(board, 3, 6, 0)
    agents = ["az:sims=0", "az:sims=0:c=1.0"]  # no random choices: without openings, 2 distinct games
    results = run_arena(
        agents, tmp_path / "o", board="petit_menec", games=6, seed=0, progress=False, echo=quiet, openings=4
    )
    assert results["repeated"] == []  # 3 openings x 2 seats: 6 distinct games
    lines = (tmp_path / "o" / "games.jsonl").read_text().splitlines()
    for k, line in enumerate(lines):
        record = GameRecord.from_json(line)
        assert record.meta["opening"] == {"index": k // 2, "plies": 4}
        assert record.replay().is_over
    settings = json.loads((tmp_path / "o" / "arena.json").read_text())
    assert settings["openings"] == 4
    with pytest.raises(CarnacError, match="openings"):  # the folder holds an arena with openings
        run_arena(agents, tmp_path / "o", board="petit_menec", games=6, seed=0, progress=False, echo=quiet)
    with pytest.raises(CarnacError, match="opening plies"):
        run_arena(agents, tmp_path / "x", board="petit_menec", games=2, progress=False, echo=quiet, openings=99)


def test_results_schema_and_files(tmp_path: Path) -> None:
    results = run_arena(AGENTS, tmp_path, board="petit_menec", games=4, seed=1, progress=False, echo=quiet)
    on_disk = json.loads((tmp_path / "results.json").read_text())
    assert on_disk == results
    assert results["agents"] == AGENTS
    assert len(results["pairs"]) == 3
    for pair in results["pairs"]:
        assert set(pair) >= {"a", "b", "wins_a", "wins_b", "draws"}
        assert pair["wins_a"] + pair["wins_b"] + pair["draws"] == 4
    assert set(results["ratings"]) == set(AGENTS)
    for rating in results["ratings"].values():
        assert set(rating) == {"elo", "ci_low", "ci_high"}
        assert rating["ci_low"] <= rating["elo"] <= rating["ci_high"]
    lines = (tmp_path / "games.jsonl").read_text().splitlines()
    assert len(lines) == 12
    for line in lines:
        record = GameRecord.from_json(line)
        record.replay()
        assert set(record.meta) >= {"agents", "pair", "game", "seats", "seed"}
        red, white = record.meta["agents"]
        assert record.meta["seats"] == {red: 0, white: 1}
    standings = results["standings"]
    assert sum(s["wins"] for s in standings.values()) == sum(s["losses"] for s in standings.values())


def test_likelihood_intervals_change_the_results_only(tmp_path: Path) -> None:
    """--interval likelihood: the same games and ratings, the profile intervals around each
    rating; a finished arena asked for the other kind rewrites results.json and plays nothing."""
    boot = run_arena(AGENTS, tmp_path, board="petit_menec", games=4, seed=1, progress=False, echo=quiet)
    games = (tmp_path / "games.jsonl").read_bytes()
    said: list[str] = []
    lik = run_arena(
        AGENTS, tmp_path, board="petit_menec", games=4, seed=1, progress=False, echo=said.append, interval="likelihood"
    )
    assert (tmp_path / "games.jsonl").read_bytes() == games
    assert any("nothing new to play" in line for line in said)
    assert json.loads((tmp_path / "results.json").read_text()) == lik
    assert lik["pairs"] == boot["pairs"] and lik["standings"] == boot["standings"]
    fitted = bradley_terry(AGENTS, lik["pairs"], interval="likelihood")
    assert lik["ratings"] == fitted
    assert lik["ratings"] != boot["ratings"]
    for name in AGENTS:
        assert lik["ratings"][name]["elo"] == boot["ratings"][name]["elo"]
        assert lik["ratings"][name]["ci_low"] < lik["ratings"][name]["elo"] < lik["ratings"][name]["ci_high"]
    assert "profile likelihood-ratio" in lik["rating_method"]
    assert "bootstrap" in boot["rating_method"] and "profile" not in boot["rating_method"]
    table = format_table(lik)
    assert "refits rarely went" not in table  # the bootstrap's at-the-edge words
    again = run_arena(AGENTS, tmp_path, board="petit_menec", games=4, seed=1, progress=False, echo=quiet)
    assert again == boot


def test_an_unknown_interval_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    out = tmp_path / "arena"
    with pytest.raises(CarnacError, match=r"interval must be 'bootstrap' or 'likelihood', got 'wald'"):
        run_arena(AGENTS[:2], out, board="petit_menec", games=2, progress=False, echo=quiet, interval="wald")
    assert not out.exists()


def test_bradley_terry_orders_and_separates() -> None:
    pairs = [
        {"a": "x", "b": "y", "wins_a": 40, "wins_b": 0, "draws": 0},
        {"a": "y", "b": "z", "wins_a": 30, "wins_b": 10, "draws": 0},
        {"a": "x", "b": "z", "wins_a": 40, "wins_b": 0, "draws": 0},
    ]
    ratings = bradley_terry(["x", "y", "z"], pairs, seed=0)
    assert ratings["x"]["elo"] > ratings["y"]["elo"] > ratings["z"]["elo"]
    assert ratings["x"]["ci_low"] > ratings["y"]["ci_high"]
    assert abs(sum(r["elo"] for r in ratings.values())) < 1.0
    assert bradley_terry(["x", "y", "z"], pairs, seed=0) == ratings  # seeded bootstrap
    even = bradley_terry(["p", "q"], [{"a": "p", "b": "q", "wins_a": 5, "wins_b": 5, "draws": 2}])
    assert even["p"]["elo"] == pytest.approx(0.0, abs=0.5)


def test_bradley_terry_scale_matches_the_closed_form() -> None:
    """Two players: the maximum-likelihood Elo gap is 400 * log10(wins / losses), where every
    pair's virtual draw counts half a win each way (PRIOR_DRAWS = 1): 30-10 gives
    400 * log10(30.5 / 10.5) = 185.2; the bare fit gives 400 * log10(3) = 190.8."""
    import math

    import numpy as np

    from carnac_env.arena import PRIOR_DRAWS
    from carnac_env.arena.ratings import _fit

    assert PRIOR_DRAWS == 1.0
    ratings = bradley_terry(["p", "q"], [{"a": "p", "b": "q", "wins_a": 30, "wins_b": 10, "draws": 0}])
    gap = ratings["p"]["elo"] - ratings["q"]["elo"]
    assert gap == pytest.approx(400 * math.log10(30.5 / 10.5), abs=0.11)
    assert round(gap, 1) == pytest.approx(185.2, abs=0.11)
    assert ratings["p"]["elo"] == pytest.approx(-ratings["q"]["elo"], abs=0.05)  # centred on 0
    theta = _fit(np.array([[0.0, 30.0], [10.0, 0.0]])) * (400 / math.log(10))
    assert theta[0] - theta[1] == pytest.approx(400 * math.log10(3), abs=1e-6)  # 190.85
    # the gap is the same with the roles swapped, and a draw-only record gives no gap
    swapped = bradley_terry(["q", "p"], [{"a": "q", "b": "p", "wins_a": 10, "wins_b": 30, "draws": 0}])
    assert swapped["p"]["elo"] - swapped["q"]["elo"] == pytest.approx(gap, abs=0.11)
    even = bradley_terry(["p", "q"], [{"a": "p", "b": "q", "wins_a": 0, "wins_b": 0, "draws": 8}])
    assert even["p"]["elo"] == even["q"]["elo"] == 0.0


def test_likelihood_intervals_match_the_one_opponent_closed_form() -> None:
    """Two players, one pinned at 0: nothing else to refit, so the profile likelihood-ratio
    interval of the gap is the one-parameter one that cards use (fit_against_anchors), and
    the mean-centred interval is half of it on each side."""
    from carnac_env.arena.ratings import fit_against_anchors

    pair = [{"a": "p", "b": "q", "wins_a": 30, "wins_b": 8, "draws": 2}]
    pinned = bradley_terry(["p", "q"], pair, anchor="q", interval="likelihood")
    alone = fit_against_anchors([(0.0, 30, 2, 8)])
    assert pinned["q"] == {"elo": 0.0, "ci_low": 0.0, "ci_high": 0.0}
    for key in ("elo", "ci_low", "ci_high"):
        assert pinned["p"][key] == pytest.approx(alone[key], abs=0.11)
    centred = bradley_terry(["p", "q"], pair, interval="likelihood")
    assert centred["p"]["ci_low"] == pytest.approx(alone["ci_low"] / 2, abs=0.11)
    assert centred["p"]["ci_high"] == pytest.approx(alone["ci_high"] / 2, abs=0.11)
    assert centred["q"]["ci_high"] == pytest.approx(-alone["ci_low"] / 2, abs=0.11)


def test_likelihood_intervals_contain_a_one_sided_rating() -> None:
    """A member that won almost every game (where the bootstrap's percentiles can sit below its
    rating): the profile interval contains it, is longer on the open side, and narrows when
    the member's record is closer."""
    pairs = [
        {"a": "top", "b": "mid", "wins_a": 119, "wins_b": 1, "draws": 0},
        {"a": "top", "b": "low", "wins_a": 120, "wins_b": 0, "draws": 0},
        {"a": "mid", "b": "low", "wins_a": 80, "wins_b": 40, "draws": 0},
    ]
    agents = ["low", "mid", "top"]
    boot = bradley_terry(agents, pairs, seed=0, anchor="low")
    lik = bradley_terry(agents, pairs, anchor="low", interval="likelihood")
    assert [lik[a]["elo"] for a in agents] == [boot[a]["elo"] for a in agents]  # the same fit
    for agent in ("mid", "top"):
        low, elo, high = lik[agent]["ci_low"], lik[agent]["elo"], lik[agent]["ci_high"]
        assert low < elo < high
    assert lik["top"]["ci_high"] - lik["top"]["elo"] > lik["top"]["elo"] - lik["top"]["ci_low"]
    closer = [dict(p, wins_a=90, wins_b=30) if p["a"] == "top" else p for p in pairs]
    tight = bradley_terry(agents, closer, anchor="low", interval="likelihood")
    assert tight["top"]["ci_high"] - tight["top"]["ci_low"] < lik["top"]["ci_high"] - lik["top"]["ci_low"]
    with pytest.raises(CarnacError, match=r"interval must be 'bootstrap' or 'likelihood', got 'wald'"):
        bradley_terry(agents, pairs, interval="wald")


def test_same_games_for_any_number_of_workers(tmp_path: Path) -> None:
    one = run_arena(AGENTS[:2], tmp_path / "one", board="petit_menec", games=4, workers=1, progress=False, echo=quiet)
    two = run_arena(AGENTS[:2], tmp_path / "two", board="petit_menec", games=4, workers=2, progress=False, echo=quiet)
    assert one == two
    assert (tmp_path / "one" / "games.jsonl").read_bytes() == (tmp_path / "two" / "games.jsonl").read_bytes()


def test_torn_last_line_is_replayed(tmp_path: Path) -> None:
    full = tmp_path / "full"
    run_arena(AGENTS[:2], full, board="petit_menec", games=4, progress=False, echo=quiet)
    lines = (full / "games.jsonl").read_text().splitlines(keepends=True)
    cut = tmp_path / "cut"
    cut.mkdir()
    (cut / "arena.json").write_bytes((full / "arena.json").read_bytes())
    (cut / "games.jsonl").write_text(lines[2] + lines[0] + lines[3][: len(lines[3]) // 2])
    run_arena(AGENTS[:2], cut, board="petit_menec", games=4, progress=False, echo=quiet)
    for name in ("games.jsonl", "results.json"):
        assert (cut / name).read_bytes() == (full / name).read_bytes()


def test_other_settings_in_the_same_folder_are_refused(tmp_path: Path) -> None:
    run_arena(AGENTS[:2], tmp_path, board="petit_menec", games=2, progress=False, echo=quiet)
    with pytest.raises(CarnacError, match="other settings"):
        run_arena(AGENTS[:2], tmp_path, board="petit_menec", games=3, progress=False, echo=quiet)


def test_the_model_files_agents_play_are_recorded_and_checked_on_resume(tmp_path: Path) -> None:
    """arena.json and results.json name each model-playing agent's file by sha256; the same spec
    over another file at the same path does not resume the folder."""
    import shutil

    from carnac_env.models import model_digest, model_path

    net = tmp_path / "net.npz"
    shutil.copyfile(model_path("general"), net)
    agents = ["greedy", f"az:sims=0:model={net}", "az:sims=0"]
    results = run_arena(agents, tmp_path / "a", board="petit_menec", games=2, progress=False, echo=quiet)
    general = model_digest(model_path("general"))
    expected = {agents[1]: {"model": str(net), "sha256": general}, agents[2]: {"model": "general", "sha256": general}}
    assert results["models"] == expected
    assert json.loads((tmp_path / "a" / "arena.json").read_text())["models"] == expected
    assert "models" not in run_arena(
        AGENTS[:2], tmp_path / "b", board="petit_menec", games=2, progress=False, echo=quiet
    )
    shutil.copyfile(model_path("general-g1"), net)  # another network at the same path: refused
    before = (tmp_path / "a" / "games.jsonl").read_bytes()
    with pytest.raises(CarnacError, match=r"other settings \(models: "):
        run_arena(agents, tmp_path / "a", board="petit_menec", games=2, progress=False, echo=quiet)
    assert (tmp_path / "a" / "games.jsonl").read_bytes() == before


def test_foreign_lines_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "games.jsonl"
    path.write_text('{"pair": ["x", "y"], "game": 0, "seed": 1}\n{"pair": ["x", "y"], "game": 1, "seed": 1}\n')
    with pytest.raises(CarnacError, match="not part of this arena"):
        load_games(path, {g.key: g for g in schedule(["random", "greedy"], 2, 0)})


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"agents": ["random"]}, "at least two agents"),
        ({"agents": ["random", "random"]}, "must differ"),
        ({"agents": ["random", "mcts:bogus=1"]}, "no option 'bogus'"),
        ({"games": 0}, "at least 1"),
        ({"board": "huge"}, "huge"),
    ],
)
def test_bad_arena_settings(tmp_path: Path, kwargs: dict, words: str) -> None:
    settings = {"agents": ["random", "greedy"], "board": "petit_menec", "games": 1, **kwargs}
    with pytest.raises(CarnacError, match=words):
        run_arena(out=tmp_path, progress=False, echo=quiet, **settings)


def _arena_command(out: Path, workers: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "carnac_env.cli",
        "arena",
        "--board",
        "petit_menec",
        "--agents",
        "random,greedy,mcts:sims=10",
        "--games",
        "6",
        "--seed",
        "5",
        "--workers",
        str(workers),
        "--out",
        str(out),
        "--no-progress",
    ]


def test_killed_arena_resumes_to_the_same_files(tmp_path: Path) -> None:
    reference = tmp_path / "reference"
    subprocess.run(_arena_command(reference, 2), check=True, capture_output=True, timeout=600)
    interrupted = tmp_path / "interrupted"
    # the arena stores 4 games, then waits to be killed (tests/_held.py): no race with its end
    command = _arena_command(interrupted, 1)
    process = start_held(command, 4, tmp_path / "held", stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=60)
    games = interrupted / "games.jsonl"
    assert not (interrupted / "results.json").exists()
    assert games.read_text().count("\n") == 4
    subprocess.run(_arena_command(interrupted, 2), check=True, capture_output=True, timeout=600)
    for name in ("games.jsonl", "results.json", "arena.json"):
        assert (interrupted / name).read_bytes() == (reference / name).read_bytes(), name
    lines = (interrupted / "games.jsonl").read_text().splitlines()
    assert len(lines) == len(set(lines)) == 18


# --------------------------------------------------------------------------- progress during games
def test_progress_counts_every_placement_and_a_full_boards_unplaced_megaliths() -> None:
    from carnac_env.core.boards import make_board

    crowded = make_board("small", rows=3, cols=3, megaliths=9)  # fills up before the supply runs out
    for board in (make_board("petit_menec"), crowded):
        calls: list[int] = []
        record = play_game(board, "random", "greedy", 0, on_progress=calls.append)
        state = record.replay()
        assert calls[: state.placed] == [1] * state.placed  # one call per placement, as it happens
        assert sum(calls) == board.megaliths
    assert state.placed < crowded.megaliths  # the crowded board did end early


@pytest.mark.parametrize("workers", [1, 2])
def test_the_bar_moves_during_games_and_ends_full(workers: int) -> None:
    from carnac_env.arena.run import GameBar
    from carnac_env.arena.runner import local_games
    from carnac_env.core.boards import make_board

    class Bar:  # tqdm's part of the interface, recorded
        def __init__(self, total: int, initial: int, **_: object) -> None:
            self.total, self.n, self.updates, self.labels = total, initial, [], []

        def update(self, n: int) -> None:
            self.n += n
            self.updates.append(n)

        def set_description_str(self, text: str) -> None:
            self.labels.append(text)

        def refresh(self) -> None:
            self.updates.append(0)

    board = make_board("petit_menec")
    games = schedule(["random", "greedy"], 2, seed=0)
    bar = GameBar(Bar, "arena", len(games), 0, board.megaliths)
    bar.live = True
    with local_games(board, games, workers, bar.placed) as finished:
        for _ in finished:
            bar.game_over()
    assert bar.bar.n == bar.bar.total == 2 * board.megaliths
    assert bar.bar.labels == ["arena 1/2 games", "arena 2/2 games"]
    if workers == 1:  # in this process: one update per placement
        assert bar.bar.updates.count(1) >= board.megaliths
