"""Panel versions: the v2 panels (issue 29's ladder above mcts) load and check, name frozen
agents only, are the default for their boards, open their games as measured; v1 stays selectable."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from carnac_env import models
from carnac_env.agents import parse_spec
from carnac_env.arena import run_arena
from carnac_env.cli import main
from carnac_env.errors import CarnacError
from carnac_env.evaluate import PANEL_DIR, default_panel_id, evaluate, evaluation_games, load_panel, panel_ids

V2 = ("small-v2", "medium-v2")
#: The panels with az generations among their members: the v2 panels, the first panel of a
#: board that had none before (petit_menec-v1), the panels one generation up (small-v3,
#: medium-v3, petit_menec-v2, with general-g1 and general-g2 at az's default search), and
#: those one more up on every board (small-v4, medium-v4, petit_menec-v3 and the v2 panels of
#: the four bigger boards, with general-g2 and general-g4).
GENERATION_PANELS = sorted(
    {*V2, *(p for p in panel_ids() if any(m.spec.startswith("az") for m in load_panel(p, None).members))}
)


def _quiet(_: str) -> None:
    pass


@pytest.mark.parametrize("panel_id", GENERATION_PANELS)
def test_generation_panels_load_and_reach_above_mcts(panel_id: str) -> None:
    panel = load_panel(panel_id, None)
    assert panel.anchor == "random" and panel.id == panel_id
    # the board's default panel is its newest, itself one with generations (v4 on small and medium)
    default = load_panel(default_panel_id(panel.board.name), None)
    assert default.id in GENERATION_PANELS and default.version >= panel.version
    ratings = {m.spec: m for m in panel.members}
    assert ratings["random"].elo == ratings["random"].ci_low == ratings["random"].ci_high == 0.0
    generations = [s for s in ratings if s.startswith("az")]
    assert generations, f"{panel_id} has no az generation"
    # an az generation is rated above the panel's strongest mcts (the intervals are gaps to
    # random, lopsided downwards, so the ratings themselves are compared)
    best_mcts = max(m.elo for s, m in ratings.items() if s.startswith("mcts"))
    assert max(ratings[s].elo for s in generations) > best_mcts
    # the games were played from openings, and evaluations open theirs the same way by default
    data = json.loads((PANEL_DIR / f"{panel_id}.json").read_text())
    assert panel.default_openings == data["measured"]["openings"] > 0
    assert f"--openings {panel.default_openings} " in data["measured"]["command"]
    # report seed: another seed than the round robin's, and than general-g1's selection seed (1)
    assert panel.default_seed not in (data["measured"]["seed"], 1)


@pytest.mark.parametrize("panel_id", GENERATION_PANELS)
def test_generation_panel_members_are_fixed_agents(panel_id: str) -> None:
    """Every az member names a frozen generation (never plain az, whose default model changes),
    and every search member names its budget."""
    for member in load_panel(panel_id, None).members:
        name, options = parse_spec(member.spec)
        if name == "az":
            assert options.get("model") in models.generations(), member.spec
        if name == "mcts":
            assert "sims" in options, member.spec


def test_the_newest_is_the_default_and_older_versions_stay_selectable() -> None:
    assert {"small-v1", "medium-v1", *V2, "small-v3", "medium-v3", "petit_menec-v2"} <= set(panel_ids())
    assert default_panel_id("petit_menec") == "petit_menec-v3"
    for board in ("kerlescan", "large", "kermario", "le_menec"):
        assert default_panel_id(board) == f"{board}-v2"
        assert load_panel(f"{board}-v1", board).version == 1
    for board in ("small", "medium"):
        assert default_panel_id(board) == f"{board}-v4"
        assert load_panel(None, board).id == f"{board}-v4"
        assert load_panel(f"{board}-v3", board).version == 3
        assert load_panel(f"{board}-v2", board).version == 2
        old = load_panel(f"{board}-v1", board)
        assert old.version == 1 and old.default_openings == 0 and old.default_seed == 1
        # a v1 evaluation still starts every game from the empty board
        assert all(game.opening == () for game in evaluation_games("greedy", old, 2, old.default_seed))
    new = load_panel(None, "small")
    games = evaluation_games("greedy", new, 4, new.default_seed, new.default_openings)
    assert all(len(game.opening) == new.default_openings for game in games)


def test_every_built_in_board_has_a_default_panel_above_mcts() -> None:
    """Issue 29's ladder: each of the seven built-in boards rates agents on a panel whose top
    members are frozen az generations: general-g2 and general-g4 on every board now, their
    intervals profile likelihood-ratio ones (the older panels keep their bootstrap intervals)."""
    from carnac_env.core.boards import BOARDS

    for board in BOARDS:
        panel = load_panel(None, board)
        assert panel.id == default_panel_id(board) and panel.id in GENERATION_PANELS, board
        assert panel.board.name == board
        specs = [m.spec for m in panel.members]
        assert specs == ["random", "greedy", "mcts:sims=2000", "az:model=general-g2", "az:model=general-g4"]
        data = json.loads((PANEL_DIR / f"{panel.id}.json").read_text())
        assert "profile likelihood-ratio" in data["measured"]["rating_method"]
        assert all(m.ci_low <= m.elo <= m.ci_high for m in panel.members), panel.id
    for board in ("kerlescan", "large", "kermario", "le_menec"):
        specs = [m.spec for m in load_panel(f"{board}-v1", board).members]
        assert specs == ["random", "greedy", "mcts:sims=2000", "az:model=general-g1", "az:model=general-g2"]


def test_a_round_robin_from_openings_gives_a_panel_that_opens_its_games(tmp_path: Path) -> None:
    run_arena(["random", "greedy"], tmp_path / "arena", board="small", games=4, seed=0, openings=2,
              progress=False, echo=_quiet)  # fmt: skip
    path = tmp_path / "two-v1.json"
    assert main(["panel", str(tmp_path / "arena"), "--name", "two", "--version", "1", "--command", "test",
                           "--games", "2", "--seed", "3", "--out", str(path)]) == 0  # fmt: skip
    data = json.loads(path.read_text())
    assert data["defaults"] == {"games": 2, "seed": 3, "openings": 2} and data["measured"]["openings"] == 2
    panel = load_panel(path, "small")
    assert panel.default_openings == 2
    card = evaluate("random", board="small", panel=path, out=tmp_path / "e", progress=False, echo=_quiet)
    assert card["openings"] == 2 and "--openings 2" in card["command"]
    # an explicit 0 still plays from the empty board
    card = evaluate("random", board="small", panel=path, openings=0, out=tmp_path / "e0", progress=False, echo=_quiet)
    assert "openings" not in card and "--openings" not in card["command"]


@pytest.mark.parametrize("bad", [-1, 1.5, True, "4", 10**6])
def test_bad_default_openings_are_refused(tmp_path: Path, bad: Any) -> None:
    data = json.loads((PANEL_DIR / "small-v2.json").read_text())
    data["defaults"]["openings"] = bad
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(CarnacError, match=r"defaults\.openings"):
        load_panel(path, None)


@pytest.mark.slow
def test_az_on_the_default_small_panel_rates_above_mcts(tmp_path: Path) -> None:
    """A short evaluation on the default (v4) panel of small: az lands above the panel's mcts."""
    card = evaluate("az", board="small", games=4, out=tmp_path / "az", progress=False, echo=_quiet)
    assert card["panel"]["id"] == "small-v4" and card["openings"] == 4
    panel = load_panel("small-v4", "small")
    mcts = next(m for m in panel.members if m.spec.startswith("mcts"))
    assert card["rating"]["elo"] > mcts.elo
    assert card["rating"]["ci_low"] < card["rating"]["elo"] < card["rating"]["ci_high"]


def test_the_ratings_plot_draws_an_interval_that_misses_its_rating(tmp_path: Path) -> None:
    """The small-v2 round robin's bootstrap put random's interval 0.1 above its centred rating
    (it lost every game); the plot once refused that and `carnac arena` exited 1 at the end."""
    pytest.importorskip("matplotlib")
    from carnac_env.arena.ratings import plot_ratings

    results = {
        "agents": ["random", "greedy"],
        "ratings": {
            "random": {"elo": -941.2, "ci_low": -941.1, "ci_high": -742.9},
            "greedy": {"elo": 941.2, "ci_low": 742.9, "ci_high": 941.1},
        },
    }
    assert plot_ratings(results, tmp_path / "ratings.png")
    assert (tmp_path / "ratings.png").read_bytes().startswith(b"\x89PNG")


@pytest.mark.parametrize("panel_id", panel_ids())
def test_profile_intervals_of_every_published_panel_contain_its_ratings(panel_id: str) -> None:
    """Refitted from the panel's own measured games, every member's rating is the published one,
    and its profile likelihood-ratio interval (what new panels publish) contains it, where the
    older panels' bootstrap intervals sometimes did not."""
    from carnac_env.arena.ratings import bradley_terry

    data = json.loads((PANEL_DIR / f"{panel_id}.json").read_text())
    agents = [m["spec"] for m in data["members"]]
    refit = bradley_terry(agents, data["measured"]["pairs"], anchor=data["anchor"], interval="likelihood")
    for member in data["members"]:
        rating = refit[member["spec"]]
        assert rating["elo"] == pytest.approx(member["elo"], abs=0.11)
        assert rating["ci_low"] <= rating["elo"] <= rating["ci_high"], (member["spec"], rating)
