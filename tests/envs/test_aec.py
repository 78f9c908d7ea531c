"""The PettingZoo AEC environment: API conformance, turn order, observations, rewards,
errors, copies and rendering."""

from __future__ import annotations

import copy
import os
import pickle
import subprocess
import sys
import textwrap
from typing import get_type_hints

import numpy as np
import pytest
from _strategies import ANY_ACTION
from hypothesis import given, settings
from hypothesis import strategies as st
from pettingzoo.test import api_test, render_test, seed_test

import carnac_env
from carnac_env.core import BOARDS, legal_mask, observation_planes
from carnac_env.core.observation import NUM_PLANES, PLANE_NAMES
from carnac_env.envs.infos import AECInfo, info_dolmen_slots
from carnac_env.errors import CarnacError

NAMES = sorted(BOARDS)


def _medium(**kwargs):
    return carnac_env.raw_env(board="medium", **kwargs)


def _c4(env) -> int:
    return env.unwrapped.parse_action("c4 Rns")


def _matches(info: dict, typed: type, where: str) -> None:
    """``info`` has exactly the keys of the TypedDict ``typed``, each of the declared type."""
    hints = get_type_hints(typed)
    assert set(info) == set(hints), f"{where}: keys {sorted(info)}, {typed.__name__} declares {sorted(hints)}"
    for key, kind in hints.items():
        assert isinstance(info[key], kind) and (kind is not int or type(info[key]) is not bool), f"{where}: {key}"


def test_infos_are_their_typed_dict_at_every_step() -> None:
    """infos[agent] carries AECInfo's keys and types from reset to the end of the game (filled in then)."""
    env = carnac_env.env(board="petit_menec")
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    ended = False
    for step, agent in enumerate(env.agent_iter()):
        for name in env.agents:  # a finished agent's entry goes once it has stepped None
            _matches(env.unwrapped.infos[name], AECInfo, f"step {step}, {name}")
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            winner = env.unwrapped.game.result().winner
            assert env.unwrapped.infos[agent]["winner"] == (-1 if winner is None else winner)
            ended = True
        env.step(None if terminated or truncated else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert env.unwrapped.game.is_over and ended


# --------------------------------------------------------------------------- PettingZoo's own tests
@pytest.mark.parametrize("name", NAMES)
def test_api(name: str) -> None:
    api_test(carnac_env.env(board=name), num_cycles=60)
    api_test(carnac_env.raw_env(board=name), num_cycles=60)


@pytest.mark.parametrize("name", NAMES)
def test_seed(name: str) -> None:
    seed_test(lambda render_mode=None: carnac_env.env(board=name, render_mode=render_mode), num_cycles=30)


@pytest.mark.parametrize("name", NAMES)
def test_render(name: str) -> None:
    render_test(lambda render_mode=None: carnac_env.env(board=name, render_mode=render_mode))


# --------------------------------------------------------------------------- metadata and spaces
def test_metadata_and_agents() -> None:
    env = carnac_env.env()
    assert env.metadata["name"] == "carnac_v0"
    env.reset()
    assert env.possible_agents == ["player_0", "player_1"]
    assert env.agents == ["player_0", "player_1"]
    assert env.agent_selection == "player_0"  # Red moves first


@pytest.mark.parametrize("name", NAMES)
def test_spaces_are_cached_and_shaped(name: str) -> None:
    board = BOARDS[name]
    env = carnac_env.env(board=name)
    env.reset(seed=1)
    for agent in env.possible_agents:
        assert env.observation_space(agent) is env.observation_space(agent)
        assert env.action_space(agent) is env.action_space(agent)
        assert env.action_space(agent).n == board.rows * board.cols * 4 + 5
        space = env.observation_space(agent)
        assert space["observation"].shape == (board.rows, board.cols, NUM_PLANES)
        assert space["observation"].dtype == np.int8
        assert space["action_mask"].shape == (board.rows * board.cols * 4 + 5,)
        assert space["action_mask"].dtype == np.int8
    assert env.observation_space("player_0") is env.unwrapped.observation_space("player_1")
    raw = carnac_env.raw_env(board=name)
    assert raw.observation_space("player_0") is raw.observation_space("player_0")


def test_observations_lie_in_their_space_through_a_game() -> None:
    env = carnac_env.env(board="small")
    env.reset(seed=2)
    rng = np.random.default_rng(2)
    for agent in env.agent_iter():
        obs, _, terminated, truncated, _ = env.last()
        space = env.observation_space(agent)
        assert obs["observation"].dtype == np.int8 and obs["action_mask"].dtype == np.int8
        assert space.contains(obs), agent
        assert set(np.unique(obs["observation"][:, :, :8])) <= {0, 1}
        if terminated or truncated:
            env.step(None)
            continue
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))


# --------------------------------------------------------------------------- turn order
def test_tilt_means_the_same_agent_acts_again() -> None:
    env = _medium()
    env.reset()
    env.step(_c4(env))
    assert env.agent_selection == "player_1"
    env.step(env.parse_action("tilt N"))
    assert env.agent_selection == "player_1"
    mask = env.observe("player_1")["action_mask"]
    assert mask[: 70 * 4].any() and not mask[70 * 4 :].any()  # it places next


def test_decline_means_the_placer_acts_again() -> None:
    env = _medium()
    env.reset()
    for placement in ("d4 Rns", "h6 Wew", "b6 Rew"):
        assert env.agent_selection == "player_0"
        env.step(env.parse_action(placement))
        assert env.agent_selection == "player_1"
        env.step(env.parse_action("decline"))
    assert env.agent_selection == "player_0"
    assert env.game.supply == 25 and not env.game.lying


def test_untiltable_placement_passes_to_the_opponent_placement() -> None:
    env = carnac_env.raw_env(board="custom", rows=2, cols=2)
    env.reset()
    env.step(0)
    assert env.agent_selection == "player_1"
    mask = env.observe("player_1")["action_mask"]
    assert not mask[16:].any() and mask[4:16].all()


def test_mask_is_zero_for_the_agent_not_to_act_and_all_ones_once_over() -> None:
    """During the game only the agent to act has legal actions; once it is over both masks are
    all ones (Pgx's convention: a policy fed the last observation never meets an empty mask),
    though no action is legal any more (only None is taken)."""
    env = carnac_env.env(board="medium")
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for agent in env.agent_iter():
        obs, _, terminated, truncated, _ = env.last()
        other = "player_1" if agent == "player_0" else "player_0"
        assert not env.observe(other)["observation"][:, :, 7].any()
        if terminated or truncated:
            assert obs["action_mask"].all() and env.observe(other)["action_mask"].all()
            assert not env.unwrapped.legal_actions()
            with pytest.raises(CarnacError, match="None"):
                env.unwrapped.step(int(np.flatnonzero(obs["action_mask"])[0]))
            env.step(None)
            continue
        assert not env.observe(other)["action_mask"].any()
        assert obs["observation"][:, :, 7].all()
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))


@pytest.mark.parametrize("name", NAMES)
def test_observation_and_mask_match_the_core(name: str) -> None:
    env = carnac_env.env(board=name)
    env.reset(seed=5)
    rng = np.random.default_rng(5)
    for agent in env.agent_iter():
        obs, _, terminated, truncated, _ = env.last()
        game = env.unwrapped.game
        player = env.possible_agents.index(agent)
        np.testing.assert_array_equal(obs["observation"], observation_planes(game, player))
        np.testing.assert_array_equal(obs["action_mask"], legal_mask(game, player))
        if terminated or truncated:
            env.step(None)
            continue
        assert list(np.flatnonzero(obs["action_mask"])) == game.legal_actions()
        assert env.unwrapped.legal_actions() == game.legal_actions()
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))


# --------------------------------------------------------------------------- Markov observation
def legal_from_observation(obs: np.ndarray) -> list[int]:
    """The legal actions computed from the observation alone (and the board size)."""
    rows, cols, _ = obs.shape
    if not obs[:, :, 7].any():
        return []
    base = rows * cols * 4
    pending = np.argwhere(obs[:, :, 4])
    if len(pending) == 0:
        empty = (obs[:, :, 2] == 0) & (obs[:, :, 3] == 0)
        return [s * 4 + o for s in np.flatnonzero(empty.reshape(-1)) for o in range(4)]
    (r, c) = pending[0]
    lands = obs[:, :, 5] | obs[:, :, 6]
    out = []
    for d, (dr, dc) in enumerate(((-1, 0), (0, 1), (1, 0), (0, -1))):
        r2, c2 = r + 2 * dr, c + 2 * dc
        if 0 <= r2 < rows and 0 <= c2 < cols and lands[r + dr, c + dc] and lands[r2, c2]:
            out.append(base + d)
    return [*out, base + 4]


@pytest.mark.parametrize("name", ["small", "petit_menec", "kermario"])
def test_observation_determines_the_legal_actions_and_tilt_colours(name: str) -> None:
    env = carnac_env.raw_env(board=name)
    env.reset()
    rng = np.random.default_rng(11)
    while env.agents and not all(env.terminations.values()):
        agent = env.agent_selection
        obs = env.observe(agent)
        legal = env.game.legal_actions()
        assert legal_from_observation(obs["observation"]) == legal
        assert list(np.flatnonzero(obs["action_mask"])) == legal
        planes = obs["observation"]
        assert (planes[:, :, 8] == env.game.supply).all()
        if env.game.phase == 1:
            # planes 5 and 6 predict the colours a tilt shows, relative to the observer
            direction = int(rng.choice([a - env.board.squares * 4 for a in legal[:-1]] or [4]))
            if direction < 4:
                first, second, _ = env.game.tilt_targets()[direction]
                own = planes.reshape(-1, NUM_PLANES)[first, 5] == 1
                env.step(env.board.squares * 4 + direction)
                after = env.observe(agent)["observation"].reshape(-1, NUM_PLANES)
                plane = 0 if own else 1
                assert after[first, plane] == after[second, plane] == 1
                continue
        env.step(int(rng.choice(legal)))


def test_planes_on_a_hand_built_position() -> None:
    env = _medium()
    env.reset(options={"moves": ["a1 Rns", "decline", "c3 Rew"]})
    # Red placed c3 with red on top and red on the east/west faces; White to respond.
    assert env.agent_selection == "player_1"
    white = env.observe("player_1")["observation"]
    red = env.observe("player_0")["observation"]
    c3 = (2, 2)
    assert white[c3][4] == red[c3][4] == 1 and white[:, :, 4].sum() == 1
    # For White, a tilt E or W shows the opponent's colour (red): plane 6 on b3, a3, d3, e3.
    for square in ((2, 0), (2, 1), (2, 3), (2, 4)):
        assert white[square][6] == 1 and white[square][5] == 0
        assert red[square][5] == 1 and red[square][6] == 0
    # A tilt N or S shows white: c2, c1, c4, c5 (c1 is free; a1 does not block).
    for square in ((1, 2), (0, 2), (3, 2), (4, 2)):
        assert white[square][5] == 1 and red[square][6] == 1
    assert white[:, :, 5].sum() == 4 and white[:, :, 6].sum() == 4
    assert white[:, :, 7].all() and not red[:, :, 7].any()
    assert (white[:, :, 8] == 26).all() and (red[:, :, 8] == 26).all()
    # planes 0-3 from the contract
    assert red[0, 0, 0] == 1 and white[0, 0, 1] == 1 and red[0, 0, 2] == 1
    assert red[c3][0] == 1 and red[c3][2] == 1 and red[c3][3] == 0


def test_two_histories_same_observation_same_future() -> None:
    first, second = _medium(), _medium()
    first.reset(options={"moves": ["d4 Rns", "decline", "f6 Wew", "decline", "b2 Rns", "tilt S"]})
    second.reset(options={"moves": ["f6 Wew", "decline", "d4 Rns", "decline", "b2 Rns", "tilt S"]})
    for agent in ("player_0", "player_1"):
        a, b = first.observe(agent), second.observe(agent)
        np.testing.assert_array_equal(a["observation"], b["observation"])
        np.testing.assert_array_equal(a["action_mask"], b["action_mask"])
    assert first.agent_selection == second.agent_selection == "player_1"
    for move in ("h2 Wns", "tilt W", "j7 Rew", "decline"):
        first.step(first.parse_action(move))
        second.step(second.parse_action(move))
        np.testing.assert_array_equal(
            first.observe(first.agent_selection)["observation"], second.observe(second.agent_selection)["observation"]
        )


def test_plane_names_documented() -> None:
    assert len(PLANE_NAMES) == NUM_PLANES == 9
    assert PLANE_NAMES[:4] == ("own colour", "opponent colour", "standing", "lying")


# --------------------------------------------------------------------------- rewards and infos
def _play_out(env, rng) -> list[tuple[str, float, dict]]:
    seen = []
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        seen.append((agent, reward, dict(info), terminated))
        if terminated or truncated:
            env.step(None)
        else:
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return seen


def sizes(info: dict) -> list[int]:
    """The dolmen sizes in an info (the fixed-length array without its zero padding)."""
    return [int(size) for size in info["dolmens"] if size]


def assert_info_shape(info: dict, board) -> None:
    """The same keys, types and shapes at every step (what Tianshou's buffers need)."""
    assert set(info) == {"dolmens", "score", "winner"}
    assert info["dolmens"].dtype == np.int16 and info["dolmens"].shape == (info_dolmen_slots(board),)
    assert type(info["score"]) is int and type(info["winner"]) is int and info["winner"] in (-1, 0, 1)


def test_rewards_only_at_the_end_and_infos() -> None:
    env = carnac_env.env(board="petit_menec")
    env.reset(seed=4)
    seen = _play_out(env, np.random.default_rng(4))
    playing = [s for s in seen if not s[3]]
    assert all(reward == 0 for _, reward, _, _ in playing)
    for _, _, info, _ in seen:
        assert_info_shape(info, env.unwrapped.board)
    assert all(not sizes(info) and info["score"] == 0 and info["winner"] == -1 for _, _, info, _ in playing)
    final = {agent: (reward, info) for agent, reward, info, done in seen if done}
    assert set(final) == {"player_0", "player_1"}
    result = env.unwrapped.game.result()
    for player, agent in enumerate(("player_0", "player_1")):
        reward, info = final[agent]
        assert reward == result.reward(player)
        assert sizes(info) == sorted(sizes(info), reverse=True) == list(result.dolmens[player])
        assert info["score"] == result.scores[player]
        assert info["winner"] == (-1 if result.winner is None else result.winner)
    assert {final["player_0"][0], final["player_1"][0]} in ({1, -1}, {0})


def test_win_and_loss_rewards_on_a_known_game() -> None:
    env = carnac_env.env(board="custom", rows=1, cols=3, megaliths=3, min_dolmen=3)
    # Red places a1 (red on top), White declines, Red places b1 (red on top; a tilt would need
    # c1 and d1), then White places the last megalith on c1 with red on top: a red row of 3.
    env.reset(options={"moves": ["a1 Rns", "decline", "b1 Rns"]})
    assert env.agent_selection == "player_1"
    env.last()
    env.step(env.unwrapped.parse_action("c1 Rns"))
    rewards = {}
    for agent in env.agent_iter():
        _, reward, terminated, _, info = env.last()
        assert terminated
        rewards[agent] = (reward, info)
        env.step(None)
    assert rewards["player_0"][0] == 1 and rewards["player_1"][0] == -1
    assert sizes(rewards["player_0"][1]) == [3] and rewards["player_0"][1]["score"] == 103
    assert sizes(rewards["player_1"][1]) == [] and rewards["player_1"][1]["score"] == 0
    assert rewards["player_0"][1]["winner"] == rewards["player_1"][1]["winner"] == 0


def test_draw_rewards() -> None:
    env = carnac_env.env(board="custom", rows=2, cols=2, megaliths=2, min_dolmen=3)
    env.reset()
    env.step(0)
    env.step(env.unwrapped.parse_action("b2 Wns"))
    final = {}
    for agent in env.agent_iter():
        _, reward, terminated, _, info = env.last()
        assert terminated
        final[agent] = reward
        assert sizes(info) == [] and info["score"] == 0 and info["winner"] == -1
        env.step(None)
    assert final == {"player_0": 0, "player_1": 0}


def test_reset_into_a_finished_game_delivers_the_rewards() -> None:
    """A game replayed to its end through reset(options={"moves": ...}) is over: both agents
    must see their final rewards from last(), as after stepping to the end."""
    moves = ["a1 Rns", "decline", "b1 Rns", "c1 Rns"]
    env = carnac_env.env(board="custom", rows=1, cols=3, megaliths=3)
    env.reset(options={"moves": moves})
    final = {}
    for agent in env.agent_iter():
        _, reward, terminated, _, info = env.last()
        assert terminated
        final[agent] = (reward, sizes(info))
        env.step(None)
    assert final == {"player_0": (1, [3]), "player_1": (-1, [])}


def test_observations_are_fresh_arrays() -> None:
    """observe() returns arrays the caller may keep or change: a later step does not alter a
    kept observation, and changing one does not alter the environment's next one."""
    env = _medium()
    env.reset()
    kept = env.observe("player_0")
    saved = {k: v.copy() for k, v in kept.items()}
    env.step(_c4(env))
    np.testing.assert_array_equal(kept["observation"], saved["observation"])
    np.testing.assert_array_equal(kept["action_mask"], saved["action_mask"])
    mine = env.observe("player_1")
    reference = observation_planes(env.game, 1), legal_mask(env.game, 1)
    mine["observation"][:] = 7
    mine["action_mask"][:] = 1
    again = env.observe("player_1")
    np.testing.assert_array_equal(again["observation"], reference[0])
    np.testing.assert_array_equal(again["action_mask"], reference[1])


# --------------------------------------------------------------------------- illegal actions
def _snapshot(env) -> tuple:
    return (
        env.game.copy(),
        list(env.history),
        env.agent_selection,
        dict(env.rewards),
        dict(env._cumulative_rewards),
        dict(env.terminations),
    )


@pytest.mark.parametrize(
    ("setup", "action_text", "fragments"),
    [
        ([], "tilt N", ["tilt N", "must place"]),
        ([], "decline", ["decline", "must place"]),
        (["c4 Rns", "decline"], "c4 Wew", ["c4 Wew", "standing"]),
        (["c4 Rns", "tilt N"], "c3 Rns", ["c3", "lying"]),
        (["c4 Rns"], "e5 Rns", ["e5", "tilt or decline", "c4"]),
        (["a1 Rns"], "tilt N", ["tilt N", "leave the board"]),
        (["b1 Rns", "decline", "a1 Rns"], "tilt E", ["tilt E", "b1", "not empty"]),
    ],
)
def test_raw_step_illegal_action(setup: list[str], action_text: str, fragments: list[str]) -> None:
    env = _medium()
    env.reset(options={"moves": setup})
    action = env.parse_action(action_text)
    before = _snapshot(env)
    with pytest.raises(ValueError) as info:
        env.step(action)
    message = str(info.value)
    assert str(action) in message
    for fragment in fragments:
        assert fragment in message, (fragment, message)
    assert _snapshot(env) == before


@pytest.mark.parametrize("bad", [-1, 285, 2.5, "c4 Rns"])
def test_raw_step_out_of_range(bad: object) -> None:
    env = _medium()
    env.reset()
    before = _snapshot(env)
    with pytest.raises(ValueError, match="illegal"):
        env.step(bad)
    assert _snapshot(env) == before


def test_wrapped_env_ends_the_game_with_minus_one_for_the_offender() -> None:
    env = carnac_env.env(board="medium")
    env.reset()
    env.last()
    env.step(env.unwrapped.parse_action("c4 Rns"))
    env.last()
    assert env.agent_selection == "player_1"
    env.step(env.unwrapped.parse_action("e5 Wns"))  # a placement while a tilt is pending
    final = {}
    for agent in env.agent_iter():
        _, reward, terminated, truncated, _ = env.last()
        assert terminated or truncated
        final[agent] = reward
        env.step(None)
    assert final["player_1"] == -1 and final["player_0"] == 0


def test_wrapped_env_asserts_out_of_bounds() -> None:
    env = carnac_env.env(board="medium")
    env.reset()
    env.last()
    with pytest.raises(AssertionError):
        env.step(285)


# --------------------------------------------------------------------------- construction errors
@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"board": "huge"}, "'huge'"),
        ({"board": "medium", "megaliths": 0}, "megaliths=0"),
        ({"board": "medium", "colour": "red"}, "'colour'"),
        ({"board": "custom", "rows": 0, "cols": 3}, "0 x 3"),
        ({"board": "medium", "render_mode": "rgb"}, "'rgb'"),
        ({"board": "medium", "render_mode": "window"}, "render_mode"),
    ],
)
def test_bad_construction(kwargs: dict, fragment: str) -> None:
    for factory in (carnac_env.env, carnac_env.raw_env):
        with pytest.raises(ValueError) as info:
            factory(**kwargs)
        assert fragment in str(info.value)


def test_bad_reset_moves() -> None:
    env = _medium()
    with pytest.raises(CarnacError, match=r"move 3 \('tilt N'\).*must place"):
        env.reset(options={"moves": ["c4 Rns", "decline", "tilt N"]})
    with pytest.raises(CarnacError, match=r"move 1 \('wobble'\)"):
        env.reset(options={"moves": ["wobble"]})


# --------------------------------------------------------------------------- copies and pickles
def _mid_game(factory):
    env = factory(board="small")
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    for _ in range(9):
        agent = env.agent_selection
        mask = env.observe(agent)["action_mask"]
        if hasattr(env, "last"):
            env.last()
        env.step(int(rng.choice(np.flatnonzero(mask))))
    return env


@pytest.mark.parametrize("factory", [carnac_env.raw_env, carnac_env.env])
@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_copies_keep_the_game_and_are_independent(factory, how: str) -> None:
    env = _mid_game(factory)
    game = env.unwrapped.game
    clone = copy.deepcopy(env) if how == "deepcopy" else pickle.loads(pickle.dumps(env))
    assert clone.unwrapped.game == game and clone.unwrapped.game is not game
    assert clone.unwrapped.history == env.unwrapped.history
    assert clone.agent_selection == env.agent_selection
    for agent in env.possible_agents:
        np.testing.assert_array_equal(clone.observe(agent)["observation"], env.observe(agent)["observation"])
    before = env.unwrapped.game.copy()
    history = list(env.unwrapped.history)
    # play the clone to the end; the original does not move
    rng = np.random.default_rng(9)
    for _agent in clone.agent_iter():
        obs, _, terminated, truncated, _ = clone.last()
        clone.step(None if terminated or truncated else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert clone.unwrapped.game.is_over
    assert env.unwrapped.game == before and env.unwrapped.history == history
    assert not env.unwrapped.game.is_over
    # and the original still plays on
    env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))


def test_record_and_replay_from_the_env() -> None:
    env = _mid_game(carnac_env.raw_env)
    record = env.record(seed=3)
    assert record.meta == {"seed": 3}
    assert record.replay() == env.game
    other = carnac_env.raw_env(board="small")
    other.reset(options={"moves": record})
    assert other.game == env.game and other.history == env.history
    assert other.agent_selection == env.agent_selection


# --------------------------------------------------------------------------- rendering
def test_ansi_render_shows_everything_needed() -> None:
    env = _medium(render_mode="ansi")
    env.reset(options={"moves": ["a1 Rns", "tilt E", "e5 Wew"]})
    text = env.render()
    assert isinstance(text, str)
    lines = text.splitlines()
    header = lines[0].split()
    assert header == list("abcdefghij")  # coordinates for the notation
    for row in range(1, 8):
        assert any(line.split() and line.split()[0] == str(row) for line in lines)
    assert "w--w" in lines[1] and "W" not in lines[1]  # a white lying megalith on b1, c1
    assert "[W]" in text  # the pending megalith, standing, white on top
    assert "Supply: 26" in text and "28" in text
    assert "player_0" in text and "tilt or decline" in text and "e5" in text
    env.step(env.parse_action("decline"))
    text = env.render()
    assert "[W]" not in text and " W" in text
    assert "player_1" in text and "place" in text


def test_ansi_render_at_the_end_shows_the_result() -> None:
    env = carnac_env.raw_env(board="custom", rows=1, cols=3, megaliths=3, render_mode="ansi")
    env.reset(options={"moves": ["a1 Rns", "decline", "b1 Rns", "c1 Rns"]})
    text = env.render()
    assert "Game over" in text and "Red" in text and "wins" in text and "103" in text


def test_ansi_render_of_a_vertical_lying_megalith_on_a_one_column_board() -> None:
    env = carnac_env.raw_env(board="custom", rows=5, cols=1, render_mode="ansi")
    env.reset(options={"moves": ["a1 Rns", "tilt S"]})
    lines = env.render().splitlines()
    assert "-" not in "\n".join(lines[:8]), "a north-south lying megalith is drawn as an east-west one"
    assert "|" in "\n".join(lines[:8])


def test_ansi_tilt_previews_cannot_be_mistaken_for_lying_megaliths() -> None:
    """The squares a tilt would cover are marked on empty squares; the marks must differ from
    the letters of lying megaliths (r, w), or a west-tilt preview reads as a white lying stone."""
    env = _medium(render_mode="ansi")
    env.reset(options={"moves": ["e4 Rns"]})
    board_lines = env.render().split("\n\n")[0].splitlines()[1:]
    cells = "".join(line[2:] for line in board_lines)
    assert "w" not in cells and "r" not in cells, "\n".join(board_lines)


def test_render_without_mode_warns_and_returns_none() -> None:
    env = _medium()
    env.reset()
    with pytest.warns(UserWarning):
        assert env.render() is None


def test_human_mode_prints(capsys, monkeypatch) -> None:
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    for display in ("DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER"):  # a headless machine
        monkeypatch.delenv(display, raising=False)
    env = carnac_env.env(board="small", render_mode="human")
    env.reset()
    capsys.readouterr()
    env.step(env.unwrapped.parse_action("c3 Rns"))
    out = capsys.readouterr().out
    assert "Supply: 27" in out and "[R]" in out
    assert "\x1b[" not in out  # no colour codes when stdout is not a terminal
    assert env.render() is None
    assert "Supply: 27" in capsys.readouterr().out


def test_no_gui_library_is_imported() -> None:
    code = textwrap.dedent(
        """
        import sys
        gui = ("pygame", "tkinter", "matplotlib", "PIL", "pyglet", "cv2")
        before = {m for m in gui if m in sys.modules}
        import carnac_env
        env = carnac_env.env(board="small", render_mode="human")
        env.reset(seed=0)
        for agent in env.agent_iter():
            obs, reward, terminated, truncated, info = env.last()
            if terminated or truncated:
                env.step(None)
            else:
                env.step(int(obs["action_mask"].nonzero()[0][0]))
        ansi = carnac_env.env(board="small", render_mode="ansi")
        ansi.reset()
        ansi.render()
        after = {m for m in gui if m in sys.modules}
        print("NEW:", sorted(after - before))
        """
    )
    # A headless machine: no display, no SDL driver chosen (the GUI tests set one in this process).
    headless = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER")}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120, env=headless
    )
    assert "NEW: []" in out.stdout, out.stdout[-500:]


def test_human_mode_window_choice(capsys, monkeypatch) -> None:
    # window=False prints text even where a window could open.
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    env = carnac_env.env(board="small", render_mode="human", window=False)
    env.reset()
    env.step(env.unwrapped.parse_action("c3 Rns"))
    assert "Supply: 27" in capsys.readouterr().out
    assert env.unwrapped._window is None
    # window=True opens the pygame window (SDL's dummy driver here) and close() closes it.
    pytest.importorskip("pygame")
    env = carnac_env.env(board="small", render_mode="human", window=True)
    env.reset()
    env.step(env.unwrapped.parse_action("c3 Rns"))
    assert capsys.readouterr().out == ""
    window = env.unwrapped._window
    assert window is not None and window.is_open
    env.close()
    assert not window.is_open and env.unwrapped._window is None


def test_bad_window_option() -> None:
    with pytest.raises(ValueError, match="window='yes'"):
        carnac_env.raw_env(window="yes")


# ---------------------------------------------------------------- bad inputs (issue 12) and fuzzing


def _first_legal(env) -> int:
    return int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0])


@pytest.mark.parametrize("wrapped", [False, True])
def test_a_0d_numpy_integer_array_is_an_action(wrapped: bool) -> None:
    env = carnac_env.env(board="small") if wrapped else carnac_env.raw_env(board="small")
    env.reset(seed=0)
    action = _first_legal(env)
    env.step(np.array(action))
    assert env.unwrapped.history == [action]
    env.step(np.array(_first_legal(env), dtype=np.int16))
    assert len(env.unwrapped.history) == 2


def test_step_true_on_the_wrapped_env_is_a_package_error() -> None:
    env = carnac_env.env(board="small")
    env.reset(seed=0)
    before = env.unwrapped.game.copy()
    for bad in (True, False, np.True_, np.array(True)):
        with pytest.raises(CarnacError, match="bool"):
            env.step(bad)
    assert env.unwrapped.game == before and not any(env.terminations.values())


def test_observe_an_unknown_agent_names_the_agents() -> None:
    env = carnac_env.raw_env(board="small")
    env.reset()
    with pytest.raises(CarnacError, match=r"'player_2'.*player_0, player_1"):
        env.observe("player_2")


def test_step_after_both_agents_are_removed_is_a_clear_error() -> None:
    env = carnac_env.raw_env(board="custom", rows=1, cols=3, megaliths=3)
    env.reset(options={"moves": ["a1 Rns", "decline", "b1 Rns", "c1 Rns"]})
    for _ in env.agent_iter():
        env.step(None)
    assert env.agents == []
    with pytest.raises(CarnacError, match="reset"):
        env.step(None)
    with pytest.raises(CarnacError, match="reset"):
        env.step(0)
    env.reset()
    assert env.agents == ["player_0", "player_1"]


def test_a_done_agent_takes_only_none() -> None:
    env = carnac_env.raw_env(board="custom", rows=1, cols=3, megaliths=3)
    env.reset(options={"moves": ["a1 Rns", "decline", "b1 Rns", "c1 Rns"]})
    with pytest.raises(CarnacError, match="only action it may take is None"):
        env.step(0)
    assert env.agents == ["player_0", "player_1"]


@pytest.mark.parametrize("moves", ["a1 Rns", 5, 2.5, {"a1 Rns"}, b"a1"])
def test_reset_moves_must_be_a_list(moves) -> None:
    env = carnac_env.raw_env(board="small")
    env.reset(options={"moves": ["a1 Rns"]})
    before = (env.unwrapped.game.copy(), list(env.history))
    with pytest.raises(CarnacError, match="expected a list of moves"):
        env.reset(options={"moves": moves})
    assert (env.game, env.history) == before


@pytest.mark.parametrize("seed", [-1, "7", 1.5, True, [1, 2]])
def test_bad_seeds_are_package_errors_and_change_nothing(seed) -> None:
    env = carnac_env.raw_env(board="small")
    env.reset(options={"moves": ["a1 Rns"]})
    before = (env.game.copy(), list(env.history))
    with pytest.raises(CarnacError, match="seed"):
        env.reset(seed=seed)
    assert (env.game, env.history) == before


def test_unknown_keywords_are_a_type_error_naming_the_options() -> None:
    from carnac_env.errors import UnknownOptionError

    for make in (carnac_env.env, carnac_env.raw_env):
        with pytest.raises(TypeError, match="frameskip") as caught:
            make(board="small", frameskip=4)
        assert isinstance(caught.value, UnknownOptionError) and isinstance(caught.value, CarnacError)
        assert "min_dolmen" in str(caught.value)


def test_illegal_move_episodes_do_not_grow_pettingzoos_logger() -> None:
    from pettingzoo.utils.env_logger import EnvLogger

    env = carnac_env.env(board="small")
    EnvLogger.suppress_output()
    try:
        start = len(EnvLogger.mqueue)
        for episode in range(300):
            env.reset(seed=episode)
            illegal = int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"] == 0)[0])
            env.step(illegal)
            assert env.rewards[env.agent_selection] == -1 or any(env.terminations.values())
        assert len(EnvLogger.mqueue) == start
    finally:
        EnvLogger.unsuppress_output()


def _snapshot(env) -> tuple:
    raw = env.unwrapped
    return (
        raw.game.copy(),
        list(raw.history),
        raw.agent_selection,
        dict(raw.terminations),
        dict(raw.rewards),
        raw.observe(raw.agent_selection)["action_mask"].tobytes() if raw.agents else b"",
    )


@settings(deadline=None, max_examples=150)
@given(prefix=st.integers(0, 12), action=ANY_ACTION)
def test_fuzz_raw_step_is_a_package_error_or_a_move(prefix: int, action) -> None:
    """Any value given to raw_env.step: a legal move is played; anything else raises a
    CarnacError and changes nothing."""
    env = carnac_env.raw_env(board="small")
    env.reset()
    rng = np.random.default_rng(prefix)
    for _ in range(prefix):
        if env.game.is_over:
            break
        env.step(int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]))))
    before = _snapshot(env)
    try:
        env.step(action)
    except CarnacError:
        assert _snapshot(env) == before
    else:
        assert len(env.history) == len(before[1]) + 1 or env.game.is_over


@settings(deadline=None, max_examples=150)
@given(
    options=st.one_of(
        st.none(),
        st.dictionaries(
            st.sampled_from(["moves", "seat", "x"]),
            st.one_of(
                st.lists(
                    st.one_of(st.integers(-2, 170), st.sampled_from(["a1 Rns", "decline", "tilt N", "zz"])), max_size=4
                ),
                st.text(max_size=5),
                st.integers(),
                st.none(),
            ),
            max_size=2,
        ),
        st.integers(),
        st.text(max_size=4),
    ),
    seed=st.one_of(st.none(), st.integers(-5, 2**64), st.booleans(), st.text(max_size=2)),
)
def test_fuzz_raw_reset_is_a_package_error_or_a_new_game(options, seed) -> None:
    env = carnac_env.raw_env(board="small")
    env.reset(options={"moves": ["a1 Rns"]})
    before = _snapshot(env)
    try:
        env.reset(seed=seed, options=options)
    except CarnacError:
        assert _snapshot(env) == before
    else:
        assert env.agents == ["player_0", "player_1"]


# ---------------------------------------------------------------- PettingZoo's Parallel API


def test_parallel_api_through_turn_based_aec_to_parallel() -> None:
    """The documented route to PettingZoo's Parallel API (aec_to_parallel refuses: Carnac is
    not parallelizable). Each parallel step carries the action of the agent to act; the other
    agent's entry is ignored."""
    from pettingzoo.test import parallel_api_test
    from pettingzoo.utils.conversions import turn_based_aec_to_parallel

    parallel_api_test(turn_based_aec_to_parallel(carnac_env.env(board="small")), num_cycles=300)
    env = turn_based_aec_to_parallel(carnac_env.env(board="small"))
    observations, infos = env.reset(seed=3)
    rng = np.random.default_rng(3)
    total = dict.fromkeys(env.possible_agents, 0.0)
    for _ in range(200):
        actions = {}
        for agent, obs in observations.items():
            legal = np.flatnonzero(obs["action_mask"])
            actions[agent] = int(rng.choice(legal)) if len(legal) else 0
        observations, rewards, terminations, _, infos = env.step(actions)
        for agent, reward in rewards.items():
            total[agent] += reward
        if all(terminations.values()):
            break
    assert all(terminations.values())
    assert sorted(total.values()) in ([-1, 1], [0, 0])
    assert all(info["winner"] in (-1, 0, 1) for info in infos.values())


# ---------------------------------------------------------------- the public API the adapters use
def test_tracker_play_legal_and_forfeit_are_the_adapters_public_api() -> None:
    raw = carnac_env.raw_env(board="small")
    raw.reset(seed=0)
    action = raw.parse_action("c3 Rns")
    assert raw.tracker.is_legal(action) and not raw.tracker.is_legal(raw.parse_action("decline"))
    assert (raw.tracker.mask(0) == raw.observe("player_0")["action_mask"]).all()
    raw.play_legal(action)
    assert raw.history == [action] and raw.agent_selection == "player_1"
    before = raw.game.copy()
    raw.forfeit(-1)
    assert raw.game == before  # the game itself is left as it was
    assert raw.rewards == {"player_0": 0, "player_1": -1.0}
    assert all(raw.terminations.values()) and all(raw.truncations.values())
    with pytest.raises(CarnacError, match="done"):
        raw.forfeit(-1)


def test_the_wrapper_logs_an_illegal_move_with_the_standard_logging_module(caplog) -> None:
    env = carnac_env.env(board="small")
    env.reset(seed=0)
    with caplog.at_level("WARNING", logger="carnac_env.envs.wrappers"):
        env.step(env.unwrapped.parse_action("decline"))  # nothing to decline yet
    assert "Illegal move made" in caplog.text
    assert env.rewards[env.agent_selection] == -1 or env.rewards == {"player_0": -1.0, "player_1": 0}


def test_the_wrapper_enforces_the_call_order_as_pettingzoo_does() -> None:
    env = carnac_env.env(board="small")
    for read in ("agent_selection", "agents", "rewards", "terminations", "truncations", "infos", "num_agents"):
        with pytest.raises(AttributeError, match="before reset"):
            getattr(env, read)
    for call in (lambda: env.step(0), lambda: env.observe("player_0"), env.agent_iter):
        with pytest.raises(AssertionError, match="reset"):
            call()
    env.reset(seed=0)
    turns = iter(env.agent_iter())
    next(turns)
    with pytest.raises(AssertionError, match="need to call step"):
        next(turns)  # a turn that was not stepped
    assert str(env) == "carnac_v0"


@pytest.mark.parametrize("offender", [0, 1])
def test_a_forfeit_names_its_winner_in_the_infos(offender: int) -> None:
    """An illegal action through carnac_env.env() ends the game; both infos name the other agent
    as the winner (not -1, which means a draw or a game not over)."""
    env = carnac_env.env(board="small")
    env.reset(seed=0)
    if offender == 1:
        env.step(0)  # Red places; White is to respond
    agent = env.agent_selection
    assert agent == f"player_{offender}"
    mask = env.observe(agent)["action_mask"]
    env.step(int(np.flatnonzero(mask == 0)[0]))
    assert env.rewards[agent] == -1 and all(env.terminations.values())
    assert {name: info["winner"] for name, info in env.infos.items()} == dict.fromkeys(env.infos, 1 - offender)
