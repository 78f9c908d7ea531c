"""The board symmetries map observations, masks, actions and game states consistently.

The central check plays random games and, at every position and for every transform,
compares "transform the inputs" with "transform the game state and ask the core":
observations, masks, legal actions, and the state reached by playing the transformed
action in the transformed position.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from carnac_env.core import GameState, make_board
from carnac_env.core.actions import tilt_colours
from carnac_env.core.observation import legal_mask, observation_planes
from carnac_env.core.symmetry import (
    AXIS_SWAPPING,
    SHAPE_KEEPING,
    TRANSFORMS,
    augment,
    inverse,
    symmetries,
    symmetry,
    transform_action,
    transform_mask,
    transform_observation,
    transform_state,
)
from carnac_env.errors import CarnacError

# (board name, rules): non-square official boards, a square official one, small custom ones
# (square and not, a one-row board where north/south tilts never fit).
BOARDS = [
    ("small", {}),
    ("petit_menec", {}),
    ("kermario", {}),
    ("custom", {"rows": 4, "cols": 4, "megaliths": 12}),
    ("custom", {"rows": 3, "cols": 5, "megaliths": 10}),
    ("custom", {"rows": 1, "cols": 6, "megaliths": 5}),
    ("custom", {"rows": 5, "cols": 5, "megaliths": 20, "last_tilt": False}),
]
IDS = [f"{name}-{rules.get('rows', '')}x{rules.get('cols', '')}" for name, rules in BOARDS]


def _random_states(board, rules, games: int, seed: int):
    """Every position (including the final one) of a few random games; declines are frequent."""
    rng = random.Random(seed)
    for _ in range(games):
        state = GameState(board, **rules)
        while True:
            yield state.copy()
            if state.is_over:
                break
            state.apply(rng.choice(state.legal_actions()))


def test_transform_sets():
    assert symmetries("small") == SHAPE_KEEPING
    assert symmetries("petit_menec") == TRANSFORMS
    assert symmetries((3, 3)) == TRANSFORMS
    assert symmetries(make_board("custom", rows=2, cols=7)) == SHAPE_KEEPING
    assert len(set(TRANSFORMS)) == 8


@pytest.mark.parametrize(("board", "rules"), BOARDS, ids=IDS)
def test_transforms_commute_with_the_rules(board, rules):
    """obs(T s) == T obs(s), mask(T s) == T mask(s), T(legal) == legal(T s), T(s.a) == (T s).(T a)."""
    b = make_board(board, **rules)
    rng = random.Random(1)
    checked = 0
    for state in _random_states(board, rules, games=4, seed=len(IDS) + b.squares):
        for name in symmetries(b):
            t = symmetry(b, name)
            moved = transform_state(state, name)
            for player in (0, 1):
                np.testing.assert_array_equal(
                    observation_planes(moved, player), transform_observation(observation_planes(state, player), name)
                )
                np.testing.assert_array_equal(legal_mask(moved, player), t.mask(legal_mask(state, player)))
            legal = state.legal_actions()
            assert sorted(transform_action(b, a, name) for a in legal) == moved.legal_actions()
            assert moved.score_now() == state.score_now()
            if legal:
                # a transformed legal action is legal in the transformed position, and leads to
                # the transformed successor
                action = rng.choice(legal)
                after = state.copy()
                after.apply(action)
                moved.apply(transform_action(b, action, name))
                assert moved == transform_state(after, name), (name, state.diagram(), action)
                if after.is_over:
                    assert moved.result() == after.result()
            checked += 1
    assert checked > 50


@pytest.mark.parametrize(("board", "rules"), BOARDS, ids=IDS)
def test_round_trips(board, rules):
    b = make_board(board, **rules)
    actions = np.arange(b.num_actions)
    states = list(_random_states(board, rules, games=1, seed=5))
    obs = np.stack([observation_planes(s, s.to_act) for s in states])  # a batch (N, R, C, K)
    masks = np.stack([legal_mask(s) for s in states])
    for name in symmetries(b):
        t = symmetry(b, name)
        back = inverse(name)
        assert inverse(t) is t.inverse
        assert t.inverse.name == back
        assert sorted(t.actions.tolist()) == actions.tolist()  # a permutation
        assert all(transform_action(b, transform_action(b, a, name), back) == a for a in actions)
        np.testing.assert_array_equal(transform_observation(transform_observation(obs, name), back), obs)
        np.testing.assert_array_equal(transform_mask(b, transform_mask(b, masks, name), back), masks)
        for state in states[:: max(1, len(states) // 6)]:
            assert transform_state(transform_state(state, name), back) == state
        # the batched observation equals the per-position one
        np.testing.assert_array_equal(t.observation(obs)[3], t.observation(obs[3]))


def test_group_structure_on_a_square_board():
    """Compositions stay in the group, rot90 four times is the identity, and no two transforms agree."""
    b = make_board("petit_menec")
    tables = {name: symmetry(b, name).actions for name in TRANSFORMS}
    as_tuples = {name: tuple(table.tolist()) for name, table in tables.items()}
    assert len(set(as_tuples.values())) == 8
    for first in TRANSFORMS:
        for second in TRANSFORMS:
            composed = tuple(tables[second][tables[first]].tolist())
            assert composed in as_tuples.values()
    quarter = tables["rot90"]
    assert tuple(quarter[quarter[quarter[quarter]]].tolist()) == as_tuples["identity"]
    assert tuple(quarter[quarter].tolist()) == as_tuples["rot180"]


def test_direction_and_orientation_by_hand():
    """Spot checks of the documented meaning, independent of the tables' construction."""
    b = make_board("petit_menec")  # 6 x 6, tilts at 144..147, decline 148
    north, east, south, west, decline = 144, 145, 146, 147, 148
    assert transform_action(b, north, "flip_ns") == south
    assert transform_action(b, east, "flip_ns") == east
    assert transform_action(b, east, "flip_ew") == west
    assert transform_action(b, north, "rot90") == east
    assert transform_action(b, north, "rot270") == west
    assert transform_action(b, north, "transpose") == west
    assert transform_action(b, north, "anti_transpose") == east
    assert transform_action(b, decline, "rot90") == decline
    # square a1 (row 0, col 0), own colour on top, N/S long faces show the top colour: o = 0
    assert transform_action(b, 0 * 4 + 0, "flip_ew") == 5 * 4 + 0  # f1, same orientation
    assert transform_action(b, 0 * 4 + 0, "rot90") == 5 * 4 + 2  # f1, now E/W faces show the top
    assert transform_action(b, 0 * 4 + 3, "rot90") == 5 * 4 + 1  # colour bit kept, axis bit flipped
    assert transform_action(b, 1 * 4 + 1, "transpose") == 6 * 4 + 3  # b1 -> a2


def test_colours_of_a_tilt_follow_the_orientation_bit():
    """Placing with a swapped axis bit makes the rotated tilt show the same colour."""
    for mover in (0, 1):
        for o in range(4):
            top, ns, ew = tilt_colours(mover, o)
            top2, ns2, ew2 = tilt_colours(mover, o ^ 2)
            assert (top2, ns2, ew2) == (top, ew, ns)


def test_pending_megalith_moves_with_its_colours():
    state = GameState("petit_menec")
    state.place(2 * 6 + 1, 2)  # b3, own colour on top, east/west long faces show it
    assert state.pending_colours == (2, 1)  # tilting N/S shows White, E/W Red
    turned = transform_state(state, "rot90")
    assert turned.pending == 1 * 6 + 3  # (row 2, col 1) -> (row 1, col 3): d2
    assert turned.pending_colours == (1, 2)
    east = state.tilt_targets()[1]  # covers c3 and d3 with Red
    south = turned.tilt_targets()[2]  # rot90 takes east to south: d3 and d4
    assert east == (2 * 6 + 2, 2 * 6 + 3, 1)
    assert south == (2 * 6 + 3, 3 * 6 + 3, 1)


def test_augment_stacks_every_copy():
    b = make_board("small")
    state = GameState(b)
    state.apply((3 * 8 + 1) * 4 + 0)  # place on b4 (row 3, col 1)
    obs = observation_planes(state, state.to_act)[None]
    mask = legal_mask(state)[None]
    actions = np.array([b.squares * 4 + 0])
    out_obs, out_masks, out_actions = augment(b, obs, mask, actions)
    assert out_obs.shape == (4, *obs.shape[1:])
    assert out_masks.shape == (4, b.num_actions)
    assert out_actions.tolist() == [transform_action(b, int(actions[0]), t) for t in SHAPE_KEEPING]
    for i, name in enumerate(SHAPE_KEEPING):
        assert out_masks[i, out_actions[i]] == mask[0, actions[0]]
        np.testing.assert_array_equal(out_obs[i], transform_observation(obs[0], name))
    only_obs, none_masks, none_actions = augment(b, obs)
    assert only_obs.shape[0] == 4 and none_masks is None and none_actions is None


def test_errors_name_the_problem():
    with pytest.raises(CarnacError, match=r"rot90.*only identity, flip_ns, flip_ew, rot180"):
        symmetry("small", "rot90")
    with pytest.raises(CarnacError, match="unknown transform 'spin'"):
        transform_action("small", 0, "spin")
    with pytest.raises(CarnacError, match="unknown transform"):
        inverse("spin")
    with pytest.raises(CarnacError, match="out of range"):
        transform_action("small", 165, "flip_ns")
    with pytest.raises(CarnacError, match="must be an integer"):
        transform_action("small", 1.5, "flip_ns")
    with pytest.raises(CarnacError, match="does not fit a 5 x 8 board"):
        symmetry("small", "flip_ns").observation(np.zeros((7, 10, 9), dtype=np.int8))
    with pytest.raises(CarnacError, match="does not fit a 5 x 8 board"):
        transform_mask("small", np.zeros(100), "flip_ns")
    with pytest.raises(CarnacError, match="5 x 8 board"):
        transform_state(GameState("medium"), symmetry("small", "flip_ns"))
    with pytest.raises(CarnacError, match="transpose"):
        transform_observation(np.zeros((5, 8, 9)), "transpose")
    with pytest.raises(CarnacError, match="actions run from 0 to 164"):
        symmetry("small", "rot180").action_array(np.array([0, 200]))


@pytest.mark.parametrize("name", AXIS_SWAPPING)
def test_axis_swaps_on_a_square_board_change_the_axis_bit_only(name):
    t = symmetry("petit_menec", name)
    places = t.actions[: 36 * 4]
    assert np.all((places & 1) == (np.arange(36 * 4) & 1))
    assert np.all((places & 2) != (np.arange(36 * 4) & 2))
