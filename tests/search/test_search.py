"""The one compiled search (carnac_env.search): its game helpers against the core, the turn-order
backup, the selections, the evaluator protocol (and docs/search.md's worked example), reuse,
determinism, whole golden trees, the completed-Q transform and sequential halving by hand, and
the Gumbel root against mctx's where mctx is installed."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from _frameworks import require
from _paths import ROOT
from _scripts import load_script

from carnac_env.batch import BatchGame
from carnac_env.batch import rules as batch_rules
from carnac_env.batch.rng import seed_state
from carnac_env.batch.rules import play
from carnac_env.batch.state import new_state
from carnac_env.core.boards import BOARDS, make_board
from carnac_env.core.game import OVER, RESPOND, GameState
from carnac_env.core.observation import legal_mask, observation_planes
from carnac_env.errors import CarnacError
from carnac_env.search import (
    PUCT,
    UCT,
    Evaluator,
    Gumbel,
    Leaves,
    Mixed,
    Network,
    Playouts,
    Search,
    gumbel,
    halving_schedule,
    playouts,
    selection,
)
from carnac_env.search.tree import FIELDS, TreeArrays, backup, compact, new_tree, swap_edges

GOLDEN = ROOT / "tests" / "golden_search" / "trees.json"
golden = load_script("tests/golden_search/regenerate.py")


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
        value, _ = playouts.playout_value(engine.kernel, 0, work, 0, 5, seed_state(3))
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
        winner, _, _ = playouts.playout(work, 0, seed_state(seed), np.zeros(0, np.int32))
        assert arrays.phase[0] == OVER
        results.append(winner)
        batch_rules.copy_game(engine.kernel, 0, work, 0)
        assert playouts.playout(work, 0, seed_state(seed), np.zeros(0, np.int32))[0] == winner
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
def test_golden_search_trees() -> None:
    """Whole trees of fixed searches (position, evaluator, selection, seed, lanes, budget, reuse):
    every node and every visited edge. tests/golden_search/regenerate.py writes the file; this
    test only reads it."""
    expected = json.loads(GOLDEN.read_text())
    trees = golden.golden_trees()
    assert sorted(trees) == sorted(expected)
    for name, tree in trees.items():
        want = expected[name]
        assert tree["root"] == want["root"], name
        assert len(tree["nodes"]) == len(want["nodes"]) and len(tree["edges"]) == len(want["edges"]), name
        got_nodes, want_nodes = np.array(tree["nodes"]), np.array(want["nodes"])
        got_edges, want_edges = np.array(tree["edges"]), np.array(want["edges"])
        integers = [0, 1, 3, 4, 5]  # player, winner, visits, count, tried
        np.testing.assert_array_equal(got_nodes[:, integers], want_nodes[:, integers], err_msg=name)
        np.testing.assert_allclose(got_nodes[:, 2], want_nodes[:, 2], rtol=0, atol=1e-9, err_msg=name)
        integers = [0, 1, 2, 3, 7]  # node, place, action, visits, child
        np.testing.assert_array_equal(got_edges[:, integers], want_edges[:, integers], err_msg=name)
        np.testing.assert_allclose(got_edges[:, 4:7], want_edges[:, 4:7], rtol=0, atol=1e-9, err_msg=name)


def test_the_golden_trees_cover_every_part() -> None:
    """The cases reach what they are meant to: every evaluator and selection, lanes, reuse, a
    restricted root, finished games and a player acting twice."""
    trees = json.loads(GOLDEN.read_text())
    kinds = {golden.CASES[name][3] for name in trees} | {golden.CASES[name][4] for name in trees}
    assert {"playouts", "constant", "hash", "mixed", "uct", "puct", "gumbel", "gumbel-noise"} <= kinds
    assert any(golden.CASES[name][6] > 1 for name in trees) and any(golden.CASES[name][7] for name in trees)
    twice = finished = 0
    for name, tree in trees.items():
        nodes = tree["nodes"]
        finished += sum(node[1] != batch_rules.NOT_OVER for node in nodes)
        twice += sum(nodes[e[7]][0] == nodes[e[0]][0] for e in tree["edges"])
        root = tree["root"]
        through_edges = sum(e[3] for e in tree["edges"] if e[0] == root)
        if golden.CASES[name][7] is None:  # a fresh root: every visit went through an edge
            assert nodes[root][3] == through_edges == golden.CASES[name][5], name
        else:  # a reused root also counts the visit that reached it as a leaf
            assert through_edges <= nodes[root][3] <= through_edges + 1, name
    assert finished > 0 and twice > 0


# ----------------------------------------------------------------------------- the completed-Q transform
def _hand_node(priors, logits, visits, totals, value, noise=None):
    """A tree of one expanded root with the given edges (and children for the visited ones)."""
    count = len(priors)
    tree, a = new_tree(1, count + 1, count, 4)
    a.root[0] = 0
    a.size[0] = 1 + count
    a.used[0] = count
    a.count[0, 0] = count
    a.value[0, 0] = value
    a.prior[0, :count] = priors
    a.logit[0, :count] = logits
    a.n[0, :count] = visits
    a.w[0, :count] = totals
    a.noise[0, :count] = 0.0 if noise is None else noise
    a.action[0, :count] = np.arange(count)
    a.child[0, :count] = np.arange(1, count + 1)
    a.visits[0, 0] = sum(visits)
    return tree, a


def test_completed_q_by_hand() -> None:
    # prior .5 .3 .2; visits 2 0 1; means +0.5 (unvisited) -0.5; the network's value 0.5
    tree, _ = _hand_node([0.5, 0.3, 0.2], [0.0, 1.0, 2.0], [2, 0, 1], [1.0, 0.0, -0.5], 0.5)
    mixed, lowest, highest, most, total = gumbel.completed_values(tree, 0, 0)
    # the visited edges' prior-weighted mean: (0.5 * 0.5 + 0.2 * -0.5) / 0.7 = 3/14; mixed with
    # the network's value over 1 + 3 visits: (0.5 + 3 * 3/14) / 4 = 2/7
    assert mixed == pytest.approx(2 / 7)
    assert (lowest, highest, most, total) == (-0.5, 0.5, 2, 3)
    # sigma(q) = (maxvisit_init + most) * value_scale * (q - lowest) / (highest - lowest)
    scale = gumbel.sigma_scale(lowest, highest, most, 0.1, 50.0)
    assert scale == pytest.approx((50 + 2) * 0.1 / 1.0)
    sigma = np.array([5.2 * 1.0, 5.2 * (2 / 7 + 0.5), 0.0])
    scores = np.array([0.0, 1.0, 2.0]) + sigma
    policy = np.zeros(3)
    gumbel.improved_policy(tree, 0, 0, 0.1, 50.0, policy)
    np.testing.assert_allclose(policy, np.exp(scores) / np.exp(scores).sum(), rtol=1e-6)
    root = np.zeros(3)
    tree, _ = _hand_node([0.5, 0.3, 0.2], [0.0, 1.0, 2.0], [2, 0, 1], [1.0, 0.0, -0.5], 0.5, noise=[0.25, -1.0, 0.5])
    gumbel.gumbel_root_scores(tree, 0, 0, 0.1, 50.0, root)
    np.testing.assert_allclose(root, np.array([0.25, -1.0, 0.5]) + scores, rtol=1e-6)


def test_completed_q_without_visits_is_the_network_value() -> None:
    tree, _ = _hand_node([0.6, 0.4], [0.5, -0.5], [0, 0], [0.0, 0.0], -0.25)
    mixed, lowest, highest, most, total = gumbel.completed_values(tree, 0, 0)
    assert (mixed, lowest, highest, most, total) == (-0.25, -0.25, -0.25, 0, 0)
    policy = np.zeros(2)
    gumbel.improved_policy(tree, 0, 0, 0.1, 50.0, policy)  # all q equal: the prior's softmax
    np.testing.assert_allclose(policy, np.exp([0.5, -0.5]) / np.exp([0.5, -0.5]).sum(), rtol=1e-6)


def test_gumbel_interior_selection_by_hand() -> None:
    # the edge whose visit share most lacks behind the improved policy: policy - n / (1 + N)
    tree, _ = _hand_node([0.5, 0.3, 0.2], [0.0, 1.0, 2.0], [2, 0, 1], [1.0, 0.0, -0.5], 0.5)
    policy = np.zeros(3)
    gumbel.improved_policy(tree, 0, 0, 0.1, 50.0, policy)
    want = int(np.argmax(policy - np.array([2, 0, 1]) / 4))
    rule = Gumbel(16, 0.1, 50.0).parameters()
    assert selection.select_edge(tree, 0, 0, rule, False, 0, False) == want


# ----------------------------------------------------------------------------- sequential halving
def test_halving_schedule_by_hand() -> None:
    # 4 actions, 10 simulations: ceil(log2 4) = 2 rounds; round 1 gives each of the 4 one visit
    # (10 // (2 * 4) = 1), round 2 each of the best 2 two (10 // (2 * 2) = 2), then the 2 go on
    assert halving_schedule(4, 10).tolist() == [0, 0, 0, 0, 1, 1, 2, 2, 3, 3]
    # 16 actions, 32 simulations (4 rounds): 16 x 1 visit, 8 x 1, then 4 x 2
    assert halving_schedule(16, 32).tolist() == [0] * 16 + [1] * 8 + [2] * 4 + [3] * 4
    # 3 actions, 8 simulations (2 rounds): 3 x 1 (8 // 6), then 2 x 2 (8 // 4), then 2 x 2, cut at 8
    assert halving_schedule(3, 8).tolist() == [0, 0, 0, 1, 1, 2, 2, 3]
    # one action takes every simulation
    assert halving_schedule(1, 4).tolist() == [0, 1, 2, 3]


# ----------------------------------------------------------------------------- the tree's fields
def test_the_tree_fields_are_declared_once() -> None:
    assert TreeArrays._fields == tuple(f.name for f in FIELDS)
    tree, a = new_tree(2, 5, 9, 3, lanes=2)
    shapes = {"node": (2, 5), "edge": (2, 9), "tree": (2,), "lane": (2, 2), "path": (2, 2, 3)}
    for f in FIELDS:
        array = getattr(a, f.name)
        assert array.shape == shapes[f.kind] and array.dtype == np.dtype(f.dtype), f.name
    # swap_edges exchanges every edge field, whatever they are
    edge_fields = [f.name for f in FIELDS if f.kind == "edge"]
    for k, name in enumerate(edge_fields):
        getattr(a, name)[1, :] = np.arange(9) + 10 * k
    swap_edges(tree, 1, 2, 7)
    for k, name in enumerate(edge_fields):
        want = np.arange(9) + 10 * k
        want[[2, 7]] = want[[7, 2]]
        np.testing.assert_array_equal(getattr(a, name)[1], want, err_msg=name)
        np.testing.assert_array_equal(getattr(a, name)[0], 0, err_msg=name)


def test_compact_keeps_every_field_of_the_reachable_subtree() -> None:
    search = Search("small", Playouts(), UCT(1.0), seed=3)
    search.set_games([GameState("small")], reuse=True)
    search.run(300)
    a = search.arrays
    before = golden.whole_tree(search)
    root = before["root"]
    child = next(
        e[7] for e in before["edges"] if e[0] == root and e[3] == max(x[3] for x in before["edges"] if x[0] == root)
    )
    a.root[0] = child
    compact(search.tree, 0)
    after = golden.whole_tree(search)
    assert after["root"] == 0 and len(after["nodes"]) < len(before["nodes"])

    def subtree(tree: dict, node: int) -> list:
        edges = [e for e in tree["edges"] if e[0] == node]
        return [tree["nodes"][node], [(e[1:7], subtree(tree, e[7])) for e in edges]]

    assert subtree(after, 0) == subtree(before, child)


# ----------------------------------------------------------------------------- the evaluator protocol
class NetAsEvaluator(Evaluator):
    """A network behind the Python protocol: must give the same trees as the built-in Network."""

    def __init__(self, net) -> None:
        self.net = net
        self.calls: list[int] = []

    def evaluate(self, leaves: Leaves) -> tuple[np.ndarray, np.ndarray]:
        self.calls.append(len(leaves))
        return self.net.forward(leaves.observations, supply_scale=leaves.board.megaliths)


@pytest.mark.parametrize(("lanes", "rule"), [(1, "puct"), (4, "gumbel")])
def test_a_python_evaluator_gives_the_same_trees_as_the_built_in_network(lanes: int, rule: str) -> None:
    states = [random_state("small", k, k) for k in (1, 4)]
    trees = []
    for evaluator in (Network(golden.HashNet()), NetAsEvaluator(golden.HashNet())):
        selection_ = PUCT(1.5) if rule == "puct" else Gumbel(8)
        search = Search("small", evaluator, selection_, trees=2, seed=6, lanes=lanes)
        search.set_games(states)
        search.run(24)
        trees.append([golden.whole_tree(search, t) for t in range(2)])
    assert trees[0] == trees[1]


class Recorder(Evaluator):
    """Checks what it receives against the core, and values every leaf 0.25."""

    def __init__(self) -> None:
        self.seen = 0

    def evaluate(self, leaves: Leaves) -> tuple[np.ndarray, np.ndarray]:
        states = leaves.states()
        assert len(states) == len(leaves) == leaves.observations.shape[0] == leaves.masks.shape[0]
        for k, state in enumerate(states):
            assert not state.is_over
            np.testing.assert_array_equal(leaves.observations[k], observation_planes(state, state.to_act))
            np.testing.assert_array_equal(leaves.masks[k], legal_mask(state))
            assert leaves.players[k] == state.to_act
        self.seen += len(leaves)
        return np.zeros((len(leaves), leaves.board.num_actions)), np.full(len(leaves), 0.25)


def test_the_leaves_are_the_positions_the_tree_reached() -> None:
    recorder = Recorder()
    search = Search("petit_menec", recorder, PUCT(1.5), trees=3, seed=1, lanes=3)
    search.set_games([random_state("petit_menec", k, 20 + k) for k in (0, 5, 9)])
    search.run(30)
    assert recorder.seen >= 3 + 3 * 30 - 3 * 5  # the roots, then nearly every simulation (finished games need none)
    a = search.arrays
    evaluated = (a.count[:, : a.size.max()] > 0) & (np.arange(a.size.max()) > 0)
    assert np.all(a.value[:, : a.size.max()][evaluated] == np.float32(0.25))


def test_playouts_implement_the_protocol_too() -> None:
    state = random_state("small", 6, 3)
    engine = BatchGame(state.board, num_envs=2)
    engine.set_state(1, state)
    work, _ = new_state(state.board, 1)
    rng = np.random.default_rng(5)
    leaves = Leaves(
        state.board,
        np.zeros((1, 5, 8, 9), np.int8),
        np.zeros((1, 165), bool),
        engine.kernel,
        np.array([1]),
        rng,
        engine._arrays,
    )
    logits, values = Playouts(3).evaluate(leaves)
    x = seed_state(int(np.random.default_rng(5).integers(2**63)))
    want, _ = playouts.playout_value(engine.kernel, 1, work, 0, 3, x)
    assert logits.shape == (1, 165) and not logits.any()
    assert values[0] == np.float32(want)
    assert engine.get_state(1) == state


def test_bad_evaluators_are_clear_errors() -> None:
    class Short(Evaluator):
        def evaluate(self, leaves):
            return np.zeros((len(leaves), 3)), np.zeros(len(leaves))

    class Words(Evaluator):
        def evaluate(self, leaves):
            return "logits", "values"

    search = Search("small", Short(), PUCT())
    search.set_games([GameState("small")])
    with pytest.raises(CarnacError, match=r"logits of shape \(1, 3\); expected \(1, 165\)"):
        search.run(2)
    search = Search("small", Words(), PUCT())
    search.set_games([GameState("small")])
    with pytest.raises(CarnacError, match="not numbers"):
        search.run(2)
    with pytest.raises(CarnacError, match="evaluate"):
        Search("small", object(), PUCT())  # type: ignore[arg-type]
    with pytest.raises(NotImplementedError, match="evaluate"):
        Evaluator().evaluate(None)  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- docs/search.md's example
def _docs_example() -> str:
    text = (ROOT / "docs" / "search.md").read_text(encoding="utf-8")
    section = text.split("## Writing an evaluator", 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def test_the_worked_evaluator_example_runs_and_values_leaves_by_greedy_playouts() -> None:
    namespace: dict = {}
    exec(compile(_docs_example(), "docs/search.md", "exec"), namespace)
    search = namespace["search"]
    evaluator = namespace["GreedyPlayouts"]()
    assert search.root(0).visits.sum() == namespace["SIMS"]
    a = search.arrays
    values = a.value[0, 1 : a.size[0]][a.count[0, 1 : a.size[0]] > 0]
    assert len(values) and set(np.unique(values)) <= {-1.0, 0.0, 1.0}  # whole games' results
    # its value of a position is a greedy game's result: with one megalith left, Red (to place)
    # completes the dolmen and wins
    state = GameState.from_diagram(
        "petit_menec", ["RR.WW.", "......", "......", "......", "......", "......"], supply=1, last_tilt=False
    )
    check = Search(state.board, evaluator, PUCT(), seed=0)
    check.set_games([state])
    check.run(0)
    assert check.root_value(0) == 1.0


# ----------------------------------------------------------------------------- against mctx
class FixedNet:
    """The same logits (a fixed random vector) and value for every position."""

    def __init__(self, logits: np.ndarray, value: float) -> None:
        self.logits = logits.astype(np.float32)
        self.value = value

    def forward(self, obs: np.ndarray, supply_scale: float | None = None) -> tuple[np.ndarray, np.ndarray]:
        n = obs.shape[0]
        return np.repeat(self.logits[None], n, axis=0), np.full(n, self.value, np.float32)


@pytest.mark.parametrize(("considered", "sims", "noise"), [(16, 64, True), (8, 40, True), (4, 17, False)])
def test_the_gumbel_root_matches_mctx(considered: int, sims: int, noise: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """A depth-one search (every root action ends the game, so both searches are deterministic
    given the Gumbel noise): the same visits, improved policy and action as
    ``mctx.gumbel_muzero_policy`` on the same logits, root value and noise."""
    mctx = require("mctx", "the jax CI entry")
    jax = require("jax", "the jax CI entry")
    jnp = jax.numpy
    # one megalith left and no last tilt: each placement ends the game; Red completes a dolmen only on c1
    state = GameState.from_diagram(
        "petit_menec", ["RR.WW.", ".W..R.", "......", "..RW..", "......", "W....R"], supply=1, last_tilt=False
    )
    legal = np.asarray(state.legal_actions())
    results = np.array([after(state, int(a)).result().reward(0) for a in legal], np.float32)
    actions = state.board.num_actions
    rng = np.random.default_rng(considered)
    logits = rng.normal(size=actions).astype(np.float32)
    gumbel = (rng.gumbel(size=actions) if noise else np.zeros(actions)).astype(np.float32)
    value = 0.2

    search = Search(state.board, Network(FixedNet(logits, value)), Gumbel(considered, noise=False))
    search.set_games([state])
    search.expand_roots()
    a = search.arrays
    a.noise[0, : len(legal)] = gumbel[legal]  # the root's edges are in action order
    search.run(sims)
    ours_actions, ours_policy = search.policy(0)
    ours_visits = search.root(0).visits
    ours_action = search.gumbel_action(0)

    reward = np.zeros(actions, np.float32)
    reward[legal] = results

    def recurrent_fn(params, rng_key, action, embedding):
        out = mctx.RecurrentFnOutput(
            reward=jnp.asarray(reward)[action],
            discount=jnp.zeros_like(action, dtype=jnp.float32),  # the game is over after the move
            prior_logits=jnp.zeros((1, actions), jnp.float32),
            value=jnp.zeros(1, jnp.float32),
        )
        return out, embedding

    root = mctx.RootFnOutput(
        prior_logits=jnp.asarray(logits[None]), value=jnp.asarray([value], jnp.float32), embedding=jnp.zeros(1)
    )
    mask = np.zeros((1, actions), bool)
    mask[0, legal] = True
    monkeypatch.setattr(jax.random, "gumbel", lambda key, shape, dtype=jnp.float32: jnp.asarray(gumbel[None], dtype))
    output = mctx.gumbel_muzero_policy(
        params=(),
        rng_key=jax.random.PRNGKey(0),
        root=root,
        recurrent_fn=recurrent_fn,
        num_simulations=sims,
        invalid_actions=jnp.asarray(~mask),
        max_num_considered_actions=considered,
        gumbel_scale=1.0,
    )
    theirs_visits = np.asarray(output.search_tree.summary().visit_counts[0])[legal]
    theirs_policy = np.asarray(output.action_weights[0])[legal]
    np.testing.assert_array_equal(ours_actions, legal)
    np.testing.assert_array_equal(ours_visits, theirs_visits)
    np.testing.assert_allclose(ours_policy, theirs_policy, rtol=1e-4, atol=1e-6)
    assert ours_action == int(output.action[0])
    assert (ours_visits > 0).sum() == min(considered, len(legal))


def test_halving_matches_mctx() -> None:
    mctx_halving = require("mctx._src.seq_halving", "the jax CI entry")
    for considered in (1, 2, 3, 4, 7, 16, 64):
        for sims in (1, 5, 16, 33, 100, 200):
            want = list(mctx_halving.get_sequence_of_considered_visits(considered, sims))
            assert halving_schedule(considered, sims).tolist() == want, (considered, sims)
