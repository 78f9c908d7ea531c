"""carnac_env.analysis: the learned agent's view of a position and of a game.

The numbers are checked against the network and the az agent themselves: the priors are the
softmax of the network's logits over the legal moves, the value its value, the search's choice
the move ``az`` plays; a review's curve is Red's expected score at every ply (also where the
same player acts twice), its mistakes the biggest drops of the mover's expected score.
"""

from __future__ import annotations

import dataclasses
import inspect
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from _games import random_game

from carnac_env.analysis import Analyst, Review, analyse, default_model, expected_score, review
from carnac_env.analysis.review import MISTAKE_DROP
from carnac_env.core.game import PLACE, RESPOND, GameState
from carnac_env.core.notation import action_to_text
from carnac_env.core.observation import observation_planes
from carnac_env.core.record import GameRecord
from carnac_env.errors import CarnacError


def positions(record: GameRecord) -> list[GameState]:
    state = GameState(record.board)
    out = [state.copy()]
    for action in record.actions():
        state.apply(action)
        out.append(state.copy())
    return out


def network_outputs(net, state: GameState) -> tuple[np.ndarray, float]:
    """The network's logits and value for ``state``, called as the search calls it."""
    obs = observation_planes(state, state.to_act)[None]
    if "board" in inspect.signature(net.forward).parameters and getattr(net, "reads_rules", False):
        logits, values = net.forward(obs, supply_scale=state.board.megaliths, board=state.board)
    else:
        logits, values = net.forward(obs, supply_scale=state.board.megaliths)
    return logits[0], float(values[0])


def test_expected_score_is_the_value_on_a_win_draw_loss_scale():
    assert expected_score(1.0) == 1.0 and expected_score(-1.0) == 0.0 and expected_score(0.0) == 0.5
    assert expected_score(0.5) == 0.75 and expected_score(2.0) == 1.0  # clipped


@pytest.mark.parametrize("board", ["petit_menec", "medium"])
def test_the_raw_view_is_the_networks_own_numbers(board):
    record = random_game(board, seed=4)
    analyst = Analyst(board, sims=0)
    for state in positions(record)[:12]:
        view = analyst.evaluate(state)
        logits, value = network_outputs(analyst.net, state)
        legal = state.legal_actions()
        priors = np.exp(logits[legal] - logits[legal].max())
        priors /= priors.sum()
        got = {m.action: m.policy for m in view.moves}
        assert sorted(got) == sorted(legal)
        assert np.allclose([got[a] for a in legal], priors, atol=1e-5)
        assert view.value == pytest.approx(value, abs=1e-5)
        mine = expected_score(value)
        assert view.expected == pytest.approx((mine, 1 - mine) if state.to_act == 0 else (1 - mine, mine))
        assert sum(view.expected) == pytest.approx(1.0)
        assert view.best == legal[int(np.argmax(logits[legal]))]  # az:sims=0's move
        assert view.search_value is None and not view.searched


def test_the_searched_view_is_the_az_agents_search():
    from carnac_env.agents.az import AZAgent

    record = random_game("medium", seed=2)
    analyst = Analyst("medium", sims=64)
    agent = AZAgent(sims=64)
    for state in positions(record)[3:40:6]:
        view = analyst.evaluate(state)
        assert view.best == agent.choose(state)  # the agent's preferred move is the move az plays
        visits = [m.visits for m in view.moves]
        assert visits == sorted(visits, reverse=True) and view.moves[0].action == view.best
        assert sum(m.share for m in view.moves) == pytest.approx(1.0)
        assert sum(visits) >= 64
        assert view.search_expected is not None and sum(view.search_expected) == pytest.approx(1.0)
        assert view.summary().count("%") >= 3


def test_an_analysis_is_deterministic_and_leaves_the_position_alone():
    state = positions(random_game("small", seed=5))[9]
    before = state.copy()
    first, second = analyse(state, sims=48), analyse(state, sims=48)
    assert first.to_dict() == second.to_dict()
    assert state == before


def test_a_finished_game_shows_its_result():
    record = random_game()
    final = positions(record)[-1]
    view = analyse(final)
    winner = final.result().winner
    red = 0.5 if winner is None else float(winner == 0)
    assert view.final and view.expected == (red, 1 - red) and view.moves == () and view.best is None
    assert view.summary().startswith("game over") and view.svg().startswith("<svg")
    data = view.to_dict()
    assert data["moves"] == [] and data["no_moves"] == "the game is over: there are no moves to weigh"
    assert analyse(positions(record)[3], sims=0).to_dict()["no_moves"] is None


def test_the_review_is_reds_expected_score_at_every_ply():
    record = random_game(seed=1)
    analyst = Analyst(record.board, sims=32, solve=0)
    done = analyst.review(record, mistakes=3)
    states = positions(record)
    assert len(done.red) == len(record.moves) + 1 == len(done.positions)
    twice = 0
    for i, state in enumerate(states[:-1]):
        _, value = network_outputs(analyst.net, state)
        mine = expected_score(value)
        assert done.red[i] == pytest.approx(mine if state.to_act == 0 else 1 - mine, abs=1e-5), i
        if i and states[i - 1].to_act == state.to_act:
            twice += 1  # the same player acted twice in a row: the curve still takes Red's side
    assert twice, "the test game should have a player acting twice in a row"
    winner = states[-1].result().winner
    assert done.red[-1] == (0.5 if winner is None else float(winner == 0)) and done.over


def test_the_mistakes_are_the_biggest_drops_where_the_agent_preferred_another_move():
    from carnac_env.agents.az import AZAgent

    record = random_game(seed=1)
    done = review(record, sims=32, mistakes=3, solve=0, search="all")
    states = positions(record)
    drops = done.drops()
    actions = record.actions()
    qualify = [
        (d, i + 1)
        for i, d in enumerate(drops)
        if len(states[i].legal_actions()) > 1 and d > MISTAKE_DROP and done.positions[i].best != actions[i]
    ]
    expected = sorted(qualify, key=lambda x: (-x[0], x[1]))[:3]
    assert expected, "the test game should have a move to list"
    assert [m.ply for m in done.mistakes] == [ply for _, ply in expected]
    agent = AZAgent(sims=32)
    for m in done.mistakes:
        mover = states[m.ply - 1].to_act
        assert m.player == mover and m.action == actions[m.ply - 1]
        before = done.red[m.ply - 1] if mover == 0 else 1 - done.red[m.ply - 1]
        assert m.before == pytest.approx(before) and m.drop == pytest.approx(drops[m.ply - 1])
        assert m.drop > MISTAKE_DROP and not m.agent_agrees
        assert m.best == agent.choose(states[m.ply - 1]) != m.action
        assert m.line().startswith(f"move {m.ply}, ") and "would have played it too" not in m.line()
    data = done.to_dict()
    assert done.sims == 32 and data["red"][0] == round(done.red[0], 4)
    assert data["threshold"] == MISTAKE_DROP == 0.10 and "10% of expected score" in data["threshold_text"]
    assert data["nothing_listed"] is None and [m["line"] for m in data["listed"]] == [m.line() for m in done.mistakes]


def test_the_agents_own_moves_are_never_mistakes_and_an_empty_list_says_so():
    """A game of the az agent's own moves (32 simulations), reviewed with the same search:
    whatever its value head thinks of them, none is listed, and the review says so plainly."""
    from carnac_env.agents.az import AZAgent

    agent, state, actions = AZAgent(sims=32), GameState("petit_menec"), []
    while not state.is_over:
        actions.append(int(agent.choose(state)))
        state.apply(actions[-1])
    done = Analyst("petit_menec", sims=32, solve=0).review(actions)
    assert max(done.drops()) > MISTAKE_DROP, "the test game should have a big drop on an agent's move"
    assert done.mistakes == () and done.agreed >= 1
    nothing = done.nothing_listed()
    assert nothing.startswith("no move lost more than 10% of expected score") and done.lines()[-1] == nothing
    data = done.to_dict()
    assert data["mistakes"] == [] and data["listed"] == [] and data["nothing_listed"] == nothing
    assert Analyst("petit_menec", sims=32, solve=0).review(actions, mistakes=0).nothing_listed() is None


def test_a_forced_move_is_never_a_mistake():
    board = "small"
    analyst = Analyst(board, sims=0, solve=0)
    record = random_game(board, seed=7)
    done = analyst.review(record, mistakes=1000)
    forced = {i + 1 for i, s in enumerate(positions(record)[:-1]) if len(s.legal_actions()) == 1}
    assert not forced & {m.ply for m in done.mistakes}


def test_search_all_searches_every_position_and_none_searches_none():
    record = random_game(seed=3)
    every = Analyst(record.board, sims=16, solve=0).review(record, search="all")
    assert all(p.searched for p in every.positions if not p.final) and every.sims == 16
    bare = Analyst(record.board, sims=16, solve=0).review(record, search="none")
    assert not any(p.searched for p in bare.positions) and bare.sims == 0
    assert every.red == bare.red  # the curve is the value head's either way


def test_pictures_are_wellformed_and_mark_the_agents_move():
    record = random_game(seed=1)
    states = positions(record)
    placing = next(s for s in states if s.phase == PLACE and s.placed > 2)
    responding = next(s for s in states if s.phase == RESPOND and len(s.legal_actions()) > 2)
    for state in (placing, responding):
        view = analyse(state, sims=32)
        svg = view.svg()
        root = ET.fromstring(svg)
        ns = "{http://www.w3.org/2000/svg}"
        heat = [r for r in root.iter(f"{ns}rect") if r.get("class") == "heat"]
        best = [r for r in root.iter(f"{ns}rect") if r.get("class") == "best"]
        assert len(best) == 1
        if state.phase == PLACE:
            assert len(heat) == sum(1 for k in state.kinds if k == 0)  # one per empty square
            assert view.move(view.best).text.split(" ")[1] in svg  # the orientation of the choice
        else:
            assert len(heat) == len(state.legal_actions())  # each tilt's landing, and the decline
        image = view.png()
        assert image.mode == "RGB" and image.width >= 400
    curve = review(record, sims=0, solve=0)
    root = ET.fromstring(curve.svg())
    points = [c for c in root.iter("{http://www.w3.org/2000/svg}circle") if c.get("class") == "point"]
    assert [int(c.get("data-step")) for c in points] == list(range(len(record.moves) + 1))
    marked = [c for c in root.iter("{http://www.w3.org/2000/svg}circle") if c.get("class") == "mistake"]
    assert len(marked) == len(curve.mistakes) > 0
    assert curve.png().size == (560, 240)
    assert isinstance(curve, Review) and curve._repr_svg_() == curve.svg()


def test_any_network_and_the_default_models_name():
    from carnac_env.models import cached, model_path

    net = cached(model_path("small"))
    view = analyse(GameState("medium"), net, sims=0)  # a network made for another board still reads it
    assert view.model == "small.npz" and len(view.moves) == GameState("medium").board.num_actions - 5
    assert analyse(GameState("medium"), "small", sims=0).model == "small"
    assert default_model(GameState("petit_menec").board)[1] == "general"


def test_default_model_reads_either_answer_of_model_for(monkeypatch):
    """carnac_env.models.model_for gives (net, own) where each board has its own model and
    (net, name) where one general model plays every board: both name the network."""
    import carnac_env.models as models

    board = GameState("kermario").board
    net, _ = models.model_for(board)
    monkeypatch.setattr(models, "model_for", lambda b: (net, "general"))
    assert default_model(board) == (net, "general")
    monkeypatch.setattr(models, "model_for", lambda b: (net, False))
    assert default_model(board)[1] == net.board_name
    monkeypatch.setattr(models, "model_for", lambda b: (net, True))
    assert default_model(board)[1] == "kermario"


def test_no_verdict_where_the_analysis_does_not_solve():
    view = analyse(GameState("petit_menec"), sims=0)  # 14 megaliths left: not solved
    assert view.solved is None and view.verdict is None and view.to_dict()["solved"] is None
    solved = dataclasses.replace(view, solved="win in 9")
    assert solved.summary().endswith("solved: win in 9") and "Solved: win in 9" in solved.svg()
    assert review(random_game(), sims=0, solve=0).solved is None
    late = positions(random_game())[-3]
    assert late.supply <= 7 and Analyst("petit_menec", sims=0, solve=0).evaluate(late).verdict is None


# --------------------------------------------------------------------------- against perfect play
def _mover_result(state: GameState, mover: int) -> int:
    """The exact result of ``state`` for ``mover`` (the solver's, or the end's)."""
    from carnac_env.solve import solve

    if state.is_over:
        return state.result().reward(mover)
    value = solve(state, max_megaliths_left=state.supply).result
    return value if state.to_act == mover else -value


@pytest.mark.slow  # the solver's first compile
def test_a_verdict_is_the_solvers_result_and_n_counts_the_movers_moves_on_its_line():
    from carnac_env.analysis import verdict
    from carnac_env.solve import solve

    seen = set()
    for seed in (1, 2, 3):
        for state in positions(random_game("small", seed=seed)):
            if state.is_over or state.supply > 5:
                continue
            known = verdict(state)
            assert known is not None and known.to_act == state.to_act
            assert known.result == solve(state, max_megaliths_left=state.supply).result
            assert state.why_illegal(known.best) is None
            assert _mover_result(_after(state, known.best), state.to_act) == known.result
            # the line: legal moves to the end, ending in the verdict, with N the mover's moves
            walk, made = state.copy(), 0
            for action in known.line:
                assert walk.why_illegal(action) is None
                made += walk.to_act == state.to_act
                walk.apply(action)
            assert walk.is_over and walk.result().reward(state.to_act) == known.result
            assert known.line[0] == known.best
            # shown to a person in notation, each move for the player who makes it
            walk, texts = state.copy(), []
            for action in known.line:
                texts.append(action_to_text(state.board, action, walk.to_act))
                walk.apply(action)
            data = known.to_dict()
            assert data["line"] == texts == list(known.line_texts) and data["line_actions"] == list(known.line)
            if known.result:
                assert known.moves == made >= 1
                assert known.text == f"{'win' if known.result > 0 else 'loss'} in {made}"
            else:
                assert known.moves is None and known.text == "draw"
            seen.add(known.result)
    assert seen >= {1, -1}


def _after(state: GameState, action: int) -> GameState:
    after = state.copy()
    after.apply(action)
    return after


@pytest.mark.slow
def test_a_verdict_depends_on_the_position_alone_and_gives_up_as_unknown():
    from carnac_env.analysis import verdict
    from carnac_env.solve import solve

    states = [s for s in positions(random_game("small", seed=2)) if not s.is_over and s.supply <= 6]
    first = [verdict(s) for s in states]
    for s in reversed(states):  # the solver's own table in this thread, filled in another order
        solve(s, max_megaliths_left=s.supply)
    assert [verdict(s) for s in reversed(states)][::-1] == first
    hard = states[0]
    assert verdict(hard, nodes=1) is None  # gave up: no verdict, not a guess
    assert Analyst("small", sims=0, solve_nodes=1).evaluate(hard).solved is None
    shallow = Analyst("small", sims=0, solve=hard.supply - 1).evaluate(hard)
    assert shallow.verdict is None  # more megaliths left than the analysis solves
    view = Analyst("small", sims=0).evaluate(hard)
    assert view.verdict == first[0] and view.solved == first[0].text
    assert view.summary().endswith(f"solved: {first[0].line_text()}")
    assert view.to_dict()["verdict"]["text"] == first[0].text
    svg = view.svg()
    ET.fromstring(svg)
    assert ("Solved: " in svg) and (svg.count('class="solved-best"') == (1 if first[0].result >= 0 else 0))
    assert view.png().mode == "RGB"
    with pytest.raises(CarnacError, match="finished game"):
        verdict(positions(random_game("small", seed=2))[-1])
    with pytest.raises(CarnacError, match="solve"):
        Analyst("small", sims=0, solve=-1)
    with pytest.raises(CarnacError, match="nodes"):
        verdict(hard, nodes=0)


@pytest.mark.slow
def test_the_review_marks_the_moves_that_threw_a_solved_result_away():
    """A game where a won position is thrown away on purpose: the review names that move and
    the solver's move there, and every blunder it lists is a real drop of the mover's result."""
    rng = np.random.default_rng(11)
    state, actions = GameState("small"), []
    thrown = None
    while not state.is_over:
        legal = [int(a) for a in state.legal_actions()]
        action = legal[rng.integers(len(legal))]
        if thrown is None and state.supply <= 5 and _mover_result(state, state.to_act) == 1:
            worse = [a for a in legal if _mover_result(_after(state, a), state.to_act) < 1]
            if worse:
                action, thrown = worse[0], len(actions) + 1
        actions.append(action)
        state.apply(action)
    assert thrown is not None
    done = Analyst("small", sims=0).review(actions, search="none")
    assert done.solved is not None and len(done.solved) == len(actions) + 1
    states = [GameState("small")]
    for a in actions:
        states.append(_after(states[-1], a))
    for i, text in enumerate(done.solved):
        if text is not None:
            assert not states[i].is_over and states[i].supply <= 7
        assert text == done.positions[i].solved
    blunders = {b.ply: b for b in done.blunders}
    assert thrown in blunders
    b = blunders[thrown]
    assert b.before == 1 and b.after < 1 and b.best == done.positions[thrown - 1].verdict.best
    assert _mover_result(_after(states[thrown - 1], b.best), b.player) == 1
    for ply, player in enumerate(done.players, start=1):  # exactly the moves that lost something
        if done.solved[ply - 1] is None:
            continue
        drop = _mover_result(states[ply], player) < _mover_result(states[ply - 1], player)
        assert (ply in blunders) == drop
    assert any("against perfect play" in line for line in done.lines())
    data = done.to_dict()
    assert data["blunders"][0]["line"] == done.blunders[0].line() and data["solved"] == list(done.solved)
    # the blunders come first, each with the solver's move in notation
    words = done.lines()
    first_mistake = min((words.index(m.line()) for m in done.mistakes), default=len(words))
    assert all(words.index(b.line()) < first_mistake for b in done.blunders)
    assert [x["kind"] for x in data["listed"][: len(done.blunders)]] == ["blunder"] * len(done.blunders)
    listed = data["listed"][[x["ply"] for x in data["listed"]].index(thrown)]
    assert listed["best_text"] == b.best_text == action_to_text(states[0].board, b.best, b.player)
    assert f"; {b.best_text} kept it" in listed["line"]


def test_bad_input_is_a_clear_error():
    with pytest.raises(CarnacError, match="board 'small'"):
        Analyst("medium", sims=0).evaluate(GameState("small"))
    with pytest.raises(CarnacError, match="neither a file nor a shipped model"):
        Analyst("medium", "no-such-model")
    with pytest.raises(CarnacError, match="not a network"):
        Analyst("medium", object())
    with pytest.raises(CarnacError, match="needs the board"):
        review([1, 2, 3])
    with pytest.raises(CarnacError, match="move 2 of the game"):
        Analyst("small", sims=0).review([0, 0])
    with pytest.raises(CarnacError, match="search"):
        Analyst("small", sims=0).review([], search="everything")


def test_the_command_writes_the_replay_and_the_curve(tmp_path):
    path = tmp_path / "game.json"
    random_game().save(path)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "carnac_env.analysis",
            str(path),
            "--sims",
            "16",
            "--html",
            str(tmp_path / "game.html"),
            "--svg",
            str(tmp_path / "curve.svg"),
            "--png",
            str(tmp_path / "curve.png"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Red's expected score (value head of general)")
    assert 'id="analysis-data"' in (tmp_path / "game.html").read_text(encoding="utf-8")
    assert (tmp_path / "curve.svg").read_text().startswith("<svg") and (tmp_path / "curve.png").stat().st_size
    bad = subprocess.run(
        [sys.executable, "-m", "carnac_env.analysis", str(tmp_path / "missing.json")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 2 and bad.stderr.startswith("carnac: error:") and "Traceback" not in bad.stderr
