"""The one compiled search (carnac_env.search): its game helpers against the core, the turn-order
backup, the rules, the evaluators, reuse, determinism and golden trees."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import numpy as np
import pytest

from carnac_env.batch import BatchGame
from carnac_env.batch import playouts as batch_playouts
from carnac_env.batch import rules as batch_rules
from carnac_env.batch.rng import seed_state
from carnac_env.batch.rules import play
from carnac_env.batch.state import new_state
from carnac_env.core.boards import BOARDS, make_board
from carnac_env.core.game import OVER, RESPOND, GameState
from carnac_env.errors import CarnacError
from carnac_env.search import PUCT, UCT, Gumbel, Mixed, Network, Playouts, Search, halving_schedule
from carnac_env.search.tree import backup, new_tree

GOLDEN = Path(__file__).parent / "golden_search" / "trees.json"


def random_state(board: str, plies: int, seed: int) -> GameState:
    rng = random.Random(seed)
    state = GameState(board)
    for _ in range(plies):
        if state.is_over:
            break
        state.apply(rng.choice(state.legal_actions()))
    return state


def after(state: GameState, action: int) -> GameState:
    state = state.copy()
    state.apply(action)
    return state


class ConstantNet:
    """A network stub: uniform logits and the same value for every position (for the player to act)."""

    def __init__(self, value: float = 0.0) -> None:
        self.value = value
        self.calls = 0

    def forward(self, obs: np.ndarray, supply_scale: float | None = None) -> tuple[np.ndarray, np.ndarray]:
        self.calls += 1
        n, rows, cols, _ = obs.shape
        return np.zeros((n, rows * cols * 4 + 5), np.float32), np.full(n, self.value, np.float32)


class PriorNet(ConstantNet):
    """Logits that strongly prefer one action."""

    def __init__(self, action: int) -> None:
        super().__init__(0.0)
        self.action = action

    def forward(self, obs: np.ndarray, supply_scale: float | None = None) -> tuple[np.ndarray, np.ndarray]:
        logits, values = super().forward(obs)
        logits[:, self.action] = 8.0
        return logits, values


# ----------------------------------------------------------------------------- the game helpers
@pytest.mark.parametrize("board", sorted(BOARDS))
def test_compiled_legal_actions_and_copies_agree_with_the_core(board: str) -> None:
    b = make_board(board)
    engine = BatchGame(b, num_envs=1, seed=0)
    other, _ = new_state(b, 2)
    out = np.zeros(b.num_actions, np.int32)
    rng = random.Random(board)
    for _ in range(3):
        state = GameState(b)
        while not state.is_over:
            engine.set_state(0, state)
            count = batch_rules.legal_actions(engine.kernel, 0, out)
            assert out[:count].tolist() == state.legal_actions()
            batch_rules.copy_game(engine.kernel, 0, other, 1)
            assert batch_rules.same_game(engine.kernel, 0, other, 1)
            assert batch_rules.winner_of(other, 1) == batch_rules.NOT_OVER
            action = rng.choice(state.legal_actions())
            ended = play(other, 1, action)
            state.apply(action)
            assert ended == state.is_over
            if not ended:
                assert not batch_rules.same_game(engine.kernel, 0, other, 1)
        winner = state.result().winner
        assert batch_rules.winner_of(other, 1) == (-1 if winner is None else winner)


def test_playout_values_are_for_the_player_to_act() -> None:
    # one empty square and one megalith left: whoever places it, Red wins
    rows = ["RRRR.W", "WWWRWR", "RWRWWR", "WWWWWR", "WWRRRR", "RWRRRR"]
    for player in (0, 1):
        state = GameState.from_diagram("petit_menec", rows, supply=1, last_tilt=False, megaliths=40, to_act=player)
        engine = BatchGame(state.board, num_envs=1)
        engine.set_state(0, state)
        work, _ = new_state(state.board, 1)
        value, _ = batch_playouts.playout_value(engine.kernel, 0, work, 0, 5, seed_state(3))
        assert value == (1.0 if player == 0 else -1.0)
        assert engine.get_state(0) == state  # the playouts ran in the work slot


def test_playouts_are_uniform_random_legal_games_and_reproducible() -> None:
    state = random_state("small", 6, 1)
    engine = BatchGame(state.board, num_envs=1)
    engine.set_state(0, state)
    work, arrays = new_state(state.board, 1)
    results = []
    for seed in range(40):
        batch_rules.copy_game(engine.kernel, 0, work, 0)
        winner, _, _ = batch_playouts.playout(work, 0, seed_state(seed), np.zeros(0, np.int32))
        assert arrays.phase[0] == OVER
        results.append(winner)
        batch_rules.copy_game(engine.kernel, 0, work, 0)
        assert batch_playouts.playout(work, 0, seed_state(seed), np.zeros(0, np.int32))[0] == winner
    assert len(set(results)) > 1


# ----------------------------------------------------------------------------- the backup
def test_backup_takes_sides_by_the_chooser_of_each_edge_not_by_depth() -> None:
    # Red places, White tilts, White places again (the same player twice), Red places; the leaf
    # value 0.5 is White's
    tree, a = new_tree(1, 8, 16, 8)
    players = [0, 1, 1, 0]
    for depth, player in enumerate(players):
        a.player[0, depth] = player
        a.path_node[0, 0, depth] = depth
        a.path_edge[0, 0, depth] = depth
    a.depth[0, 0] = 4
    a.leaf[0, 0] = 4
    backup(tree, 0, 0, 0.5, 1, False)
    assert a.w[0, :4].tolist() == [-0.5, 0.5, 0.5, -0.5]
    assert a.n[0, :4].tolist() == [1, 1, 1, 1]
    assert a.visits[0, :5].tolist() == [1, 1, 1, 1, 1]


def test_edge_values_are_for_their_chooser_when_a_player_moves_twice() -> None:
    # Red has placed on an open board; White responds (and after a tilt places next: a second
    # move in a row). Every evaluated position is worth +1 to its player to act, so the total an
    # edge holds for its chooser is, over the positions evaluated below it, +1 for each where the
    # chooser acts and -1 for each where the other player does: checked node by node.
    state = GameState("medium")
    state.apply(4 * 33)
    assert state.phase == RESPOND and state.to_act == 1
    for lanes in (1, 8):
        search = Search("medium", Network(ConstantNet(1.0)), PUCT(1.5), lanes=lanes)
        search.set_games([state])
        search.run(300)
        _check_edge_totals(search)


def _check_edge_totals(search: Search) -> None:
    a = search.arrays
    twice = 0

    def edges(node: int) -> range:
        first = int(a.first[0, node])
        return range(first, first + max(int(a.count[0, node]), 0))

    def total(node: int) -> float:
        """Sum of the evaluations in ``node``'s subtree, for ``node``'s player (itself: +1)."""
        nonlocal twice
        inner = 0.0
        for e in edges(node):
            child = int(a.child[0, e])
            if a.n[0, e] == 0:
                continue
            assert a.winner[0, child] == batch_rules.NOT_OVER  # too early for a finished game
            same = a.player[0, child] == a.player[0, node]
            twice += bool(same)
            below = total(child)
            assert a.w[0, e] == pytest.approx(below if same else -below)
            assert a.n[0, e] == a.visits[0, child]
            inner += a.w[0, e]
        return 1.0 + inner

    root = int(a.root[0])
    total(root)
    assert twice > 0
    assert a.visits[0, root] == 300 == search.root(0).visits.sum()


# ----------------------------------------------------------------------------- playout search (UCT)
def test_uct_finds_the_dolmen_on_the_last_megalith() -> None:
    state = GameState.from_diagram(
        "petit_menec", ["RR.WW.", "......", "......", "......", "......", "......"], supply=1, last_tilt=False
    )
    search = Search(state.board, Playouts(), UCT(1.0), seed=0)
    search.set_games([state])
    search.run(400)
    best = search.best_action(0, ties="value")
    assert after(state, best).is_over and after(state, best).result().winner == 0


def _minimax(state: GameState, player: int) -> int:
    if state.is_over:
        return state.result().reward(player)
    values = [_minimax(after(state, action), player) for action in state.legal_actions()]
    return max(values) if state.to_act == player else min(values)


def test_uct_tilts_and_then_wins_with_a_second_move_in_a_row() -> None:
    # White responds to Red's second-last megalith: tilting it east lets White place the last
    # one (a second move in a row) and win; declining lets Red place it and win.
    rows = ["WW.RWW", "RRWWRR", "WWRRWW", "RRW...", "WWRRWW", "RRWWRR"]
    state = GameState.from_diagram("petit_menec", rows, supply=2, last_tilt=False, megaliths=34)
    state.apply(21 * 4)
    assert state.phase == RESPOND and state.to_act == 1
    values = {action: _minimax(after(state, action), 1) for action in state.legal_actions()}
    assert sorted(values.values()) == [-1, 1]
    for seed in range(3):
        search = Search(state.board, Playouts(), UCT(1.0), seed=seed)
        search.set_games([state])
        search.run(300)
        action = search.best_action(0, ties="value")
        assert values[action] == 1
        edges = search.root(0)
        assert edges.values[list(edges.actions).index(action)] > 0.5  # White's own view


def test_puct_follows_strong_priors() -> None:
    state = GameState("small")
    search = Search("small", Network(PriorNet(4 * 9 + 1)), PUCT(1.5))
    search.set_games([state])
    search.run(100)
    assert search.best_action(0) == 4 * 9 + 1
    assert search.root(0).visits.max() > 50


def test_a_search_is_deterministic_per_seed_and_leaves_its_roots_alone() -> None:
    state = random_state("small", 5, 2)
    before = state.copy()
    trees = []
    for seed in (7, 7, 8):
        search = Search("small", Playouts(2), UCT(1.0), seed=seed)
        search.set_games([state])
        search.run(500)
        trees.append({name: value.copy() for name, value in search.arrays._asdict().items()})
    for name in ("n", "w", "action", "child", "visits"):
        np.testing.assert_array_equal(trees[0][name], trees[1][name], err_msg=name)
    assert not all(np.array_equal(trees[0][k], trees[2][k]) for k in ("n", "w"))
    assert state == before


def test_batched_trees_equal_single_searches() -> None:
    states = [random_state("petit_menec", k, k) for k in (1, 4, 7)]
    together = Search("petit_menec", Network(ConstantNet(0.25)), PUCT(1.5), trees=3)
    together.set_games(states)
    together.run(40)
    for t, state in enumerate(states):
        alone = Search("petit_menec", Network(ConstantNet(0.25)), PUCT(1.5))
        alone.set_games([state])
        alone.run(40)
        np.testing.assert_array_equal(alone.root(0).visits, together.root(t).visits)
        np.testing.assert_allclose(alone.root(0).values, together.root(t).values)


def test_lanes_batch_the_leaves_of_one_tree_and_take_their_virtual_losses_back() -> None:
    state = random_state("small", 2, 3)
    net = ConstantNet(0.2)
    search = Search("small", Network(net), PUCT(1.5), lanes=8)
    search.set_games([state])
    search.run(160)
    assert net.calls <= 1 + 160 // 8 + 5  # about one batch per 8 simulations (a few collisions)
    assert search.root(0).visits.sum() == 160
    a = search.arrays
    # no virtual loss is left: every edge's mean is a mean of real values, in [-1, 1]
    used = a.n[0, : a.used[0]] > 0
    means = a.w[0, : a.used[0]][used] / a.n[0, : a.used[0]][used]
    assert np.all(np.abs(means) <= 1 + 1e-9)
    assert (a.count[0, : a.size[0]] != -2).all()  # no leaf left waiting
    # few actions (a response: tilts and declining): the lanes collide, the budget still holds
    respond = GameState("small")
    respond.apply(4 * 12)
    assert respond.phase == RESPOND
    search = Search("small", Network(ConstantNet(0.0)), Gumbel(16, noise=True), lanes=16, seed=2)
    search.set_games([respond])
    search.run(50)
    assert search.root(0).visits.sum() == 50
    assert search.gumbel_action(0) in respond.legal_actions()


def test_network_calls_are_one_batch_per_simulation_and_finished_games_need_none() -> None:
    net = ConstantNet()
    states = [random_state("small", k, k) for k in (2, 3, 4, 5)]
    search = Search("small", Network(net), PUCT(1.5), trees=4)
    search.set_games(states)
    search.run(20)
    assert net.calls == 1 + 20  # the roots, then one batch per round
    # one move from the end: every simulation ends the game, and the network is asked only once
    rows = ["RRRR.W", "WWWRWR", "RWRWWR", "WWWWWR", "WWRRRR", "RWRRRR"]
    last = GameState.from_diagram("petit_menec", rows, supply=1, last_tilt=False, megaliths=40)
    net = ConstantNet()
    search = Search(last.board, Network(net), PUCT(1.5))
    search.set_games([last])
    search.run(30)
    assert net.calls == 1
    assert search.root_value(0) == pytest.approx(1.0)


def test_mixed_values_blend_the_network_and_the_playouts() -> None:
    # the same first simulation (uniform priors: the same first leaf, the same playouts) with two
    # weights: the leaf's value is (1 - weight) * 0.5 + weight * (the playouts' mean)
    state = random_state("small", 3, 9)
    values = {}
    for weight in (1.0, 0.25, 0.0):
        search = Search("small", Mixed(ConstantNet(0.5), playouts=8, weight=weight), PUCT(1.5), seed=5)
        search.set_games([state])
        search.run(1)
        a = search.arrays
        assert a.value[0, a.root[0]] == pytest.approx(0.5)  # the root: the network alone
        values[weight] = float(a.value[0, 1])  # the first leaf
    playouts = values[1.0]
    assert values[0.0] == pytest.approx(0.5)
    assert values[0.25] == pytest.approx(0.75 * 0.5 + 0.25 * playouts)


# ----------------------------------------------------------------------------- Gumbel
@pytest.mark.parametrize(("considered", "sims"), [(16, 32), (16, 64), (4, 10), (1, 5), (2, 3), (8, 200)])
def test_halving_schedule(considered: int, sims: int) -> None:
    plan = halving_schedule(considered, sims)
    assert len(plan) == sims
    first = min(considered, sims)
    assert plan[:first].tolist() == [0] * first  # the first round visits `considered` actions
    # replaying the plan with a fixed ranking never asks for a visit count no action has
    visits = np.zeros(considered, int)
    for level in plan:
        candidates = np.flatnonzero(visits == level)
        assert len(candidates) or considered == 1
        visits[candidates[0] if len(candidates) else 0] += 1
    assert visits.sum() == sims


def test_gumbel_visits_only_the_considered_actions_and_improves_the_policy() -> None:
    state = GameState("small")
    net = PriorNet(4 * 17 + 2)
    search = Search("small", Network(net), Gumbel(considered=8, noise=True), seed=3)
    search.set_games([state])
    search.run(32)
    edges = search.root(0)
    assert (edges.visits > 0).sum() == 8
    actions, policy = search.policy(0)
    assert policy.sum() == pytest.approx(1.0) and (policy > 0).all()
    assert list(actions) == state.legal_actions()
    chosen = search.gumbel_action(0)
    assert edges.visits[list(edges.actions).index(chosen)] == edges.visits.max()
    # without noise the strong prior's action is considered and wins the halving
    plain = Search("small", Network(net), Gumbel(considered=8, noise=False))
    plain.set_games([state])
    plain.run(32)
    assert plain.gumbel_action(0) == 4 * 17 + 2


def test_gumbel_finds_a_forced_win() -> None:
    state = GameState.from_diagram(
        "petit_menec", ["RR.WW.", "......", "......", "......", "......", "......"], supply=1, last_tilt=False
    )
    search = Search(state.board, Network(ConstantNet()), Gumbel(considered=128, noise=False), seed=1)
    search.set_games([state])
    search.run(300)  # every one of the 124 placements is considered
    best = search.gumbel_action(0)
    assert after(state, best).result().winner == 0
    actions, policy = search.policy(0)
    wins = [a for a in actions if after(state, int(a)).result().winner == 0]
    winning = np.isin(actions, wins)
    assert policy[winning].min() > policy[~winning].max()  # every win above every other move
    assert policy[winning].sum() > 5 * winning.mean()  # far above the prior's share


# ----------------------------------------------------------------------------- reuse and width
def test_tree_reuse_continues_from_the_subtree_of_the_moves_played() -> None:
    state = GameState("small")
    search = Search("small", Playouts(), UCT(1.0), seed=2)
    search.set_games([state], reuse=True)
    search.run(600)
    a = search.arrays
    first = search.best_action(0, ties="value")
    # the most visited reply below the chosen move
    root = int(a.root[0])
    edge = int(a.first[0, root]) + list(a.action[0, a.first[0, root] : a.first[0, root] + a.count[0, root]]).index(
        first
    )
    child = int(a.child[0, edge])
    grand_first, grand_count = int(a.first[0, child]), int(a.count[0, child])
    assert grand_count > 0
    replies = a.action[0, grand_first : grand_first + grand_count]
    reply_visits = a.n[0, grand_first : grand_first + grand_count]
    reply = int(replies[np.argmax(reply_visits)])
    grandchild = int(a.child[0, grand_first + int(np.argmax(reply_visits))])
    carried = int(a.visits[0, grandchild])
    state.apply(first)
    state.apply(reply)
    search.set_games([state], reuse=True)
    assert int(search.arrays.root[0]) == grandchild
    search.run(300)
    assert int(search.arrays.visits[0, search.arrays.root[0]]) >= 300 + carried - 1
    # a position the tree never saw starts afresh
    search.set_games([GameState("small")], reuse=True)
    assert search.arrays.size[0] == 1


def test_root_width_keeps_the_visited_statistics() -> None:
    state = GameState("small")
    search = Search("small", Playouts(), UCT(1.0), seed=4)
    search.set_games([state])
    search.restrict_root(0, [0, 4, 8, 12])
    search.run(200)
    edges = search.root(0)
    assert edges.actions.tolist() == [0, 4, 8, 12] and edges.visits.sum() == 200
    with pytest.raises(CarnacError, match="not legal"):
        search.restrict_root(0, [9999])


def test_a_big_budget_grows_the_tree() -> None:
    search = Search("medium", Playouts(), UCT(1.0), seed=0)
    search.set_games([GameState("medium")])
    search.run(3000)
    assert search.root(0).visits.sum() == 3000
    assert search.arrays.size[0] > 1000


# ----------------------------------------------------------------------------- settings
def test_bad_settings_are_clear_errors() -> None:
    with pytest.raises(CarnacError, match="Gumbel"):
        Search("small", Playouts(), Gumbel())
    with pytest.raises(CarnacError, match="pair"):
        Search("small", Network(ConstantNet()), PUCT(), root_selection=Gumbel())
    with pytest.raises(CarnacError, match="evaluator"):
        Search("small", "playouts", UCT())  # type: ignore[arg-type]
    for bad in (float("nan"), float("inf"), -1.0, True):
        with pytest.raises(CarnacError):
            UCT(bad)
        with pytest.raises(CarnacError):
            PUCT(bad)
    with pytest.raises(CarnacError, match="considered"):
        Gumbel(considered=0)
    with pytest.raises(CarnacError, match="weight"):
        Mixed(ConstantNet(), weight=1.5)
    with pytest.raises(CarnacError, match="unfinished"):
        search = Search("petit_menec", Playouts(), UCT())
        over = random_state("petit_menec", 200, 0)
        search.set_games([over])
    search = Search("small", Playouts(), UCT())
    search.set_games([GameState("small")])
    with pytest.raises(CarnacError, match="sims"):
        search.run(-1)


# ----------------------------------------------------------------------------- golden trees
def _golden_cases() -> dict[str, dict]:
    cases = {}
    for name, (board, plies, seed, rule, sims) in {
        "uct-small-opening": ("small", 0, 0, "uct", 400),
        "uct-medium-early": ("medium", 4, 1000, "uct", 400),
        "uct-petit-respond": ("petit_menec", 9, 5, "uct", 300),
        "puct-small-uniform": ("small", 3, 2, "puct", 60),
        "gumbel-small-uniform": ("small", 3, 2, "gumbel", 32),
        "puct-medium-opening": ("medium", 0, 3, "puct", 80),
        "gumbel-medium-opening": ("medium", 0, 3, "gumbel", 48),
    }.items():
        state = random_state(board, plies, seed)
        if rule == "uct":
            search = Search(board, Playouts(), UCT(1.0), seed=seed)
        elif rule == "puct":
            search = Search(board, Network(ConstantNet(0.1)), PUCT(1.5), seed=seed)
        else:
            search = Search(board, Network(ConstantNet(0.1)), Gumbel(16, noise=True), seed=seed)
        search.set_games([state])
        search.run(sims)
        edges = search.root(0)
        visited = edges.visits > 0
        cases[name] = {
            "actions": edges.actions[visited].tolist(),
            "visits": edges.visits[visited].tolist(),
            "values": [round(float(v), 6) for v in edges.values[visited]],
        }
    return cases


def test_golden_search_trees() -> None:
    """Visit counts and values of fixed searches (position, seed, budget); regenerate with
    CARNAC_REGENERATE_GOLDEN=1 after a change that is meant to change the search."""
    cases = _golden_cases()
    if os.environ.get("CARNAC_REGENERATE_GOLDEN"):
        GOLDEN.write_text(json.dumps(cases, indent=1, sort_keys=True) + "\n")
    expected = json.loads(GOLDEN.read_text())
    assert sorted(cases) == sorted(expected)
    for name, case in cases.items():
        assert case["actions"] == expected[name]["actions"], name
        assert case["visits"] == expected[name]["visits"], name
        np.testing.assert_allclose(case["values"], expected[name]["values"], atol=1e-6, err_msg=name)
