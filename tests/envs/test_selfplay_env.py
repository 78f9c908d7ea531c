"""The AEC-to-single-agent self-play adapter (carnac_env.envs.selfplay), tested from the rules.

Carnac's turns repeat: after a tilt the tilter places; after a decline the placer places
again; so the learner may act twice in a row and so may its opponent, and the game's last
move may be either's. The adapter must hand the learner every turn that is its own and the
result of the game on its last step whoever moved last.
"""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import carnac_env
from carnac_env.core import legal_mask, observation_planes
from carnac_env.core.actions import decline_action, place_action, tilt_action
from carnac_env.core.game import PLACE, RESPOND
from carnac_env.core.observation import TO_ACT
from carnac_env.envs.gym import CarnacEnv
from carnac_env.envs.selfplay import OpponentPool, SelfPlayEnv
from carnac_env.errors import CarnacError, IllegalActionError, UnknownOptionError

SMALL = carnac_env.make_board("small")
CENTRE = 2 * SMALL.cols + 3  # c3 of the 5 x 8 board: a megalith there can tilt every way


class Scripted:
    """A policy opponent that records its calls and answers with ``choose(game)``."""

    def __init__(self, env: SelfPlayEnv, choose) -> None:
        self.env, self.choose, self.calls = env, choose, []

    def __call__(self, observation, action_mask):
        self.calls.append((observation, action_mask))
        return self.choose(self.env.game)


def first_placement(game) -> int:
    return next(a for a in game.legal_actions() if a < SMALL.squares * 4)


def random_episode(env: SelfPlayEnv, seed: int, options=None):
    """One episode with a seeded random learner: (observations, rewards, infos, moves per step)."""
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed, options=options)
    observations, rewards, infos, moves = [obs], [], [info], []
    done = False
    while not done:
        before = len(env.aec.unwrapped.history)
        obs, reward, done, truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        assert not truncated
        observations.append(obs)
        rewards.append(reward)
        infos.append(info)
        moves.append(len(env.aec.unwrapped.history) - before)
    return observations, rewards, infos, moves


def test_the_learner_places_again_after_the_opponent_declines() -> None:
    env = SelfPlayEnv("small", seat=0)
    opponent = Scripted(env, lambda game: decline_action(SMALL))
    env.set_opponent(opponent)
    obs, info = env.reset(seed=0)
    assert env.game.to_act == 0 and env.game.phase == PLACE and not opponent.calls
    obs, reward, done, _, info = env.step(place_action(SMALL, CENTRE, 0))
    # The opponent declined once; the turn is the learner's again, to place.
    assert len(opponent.calls) == 1 and env.aec.unwrapped.history[-1] == decline_action(SMALL)
    assert env.game.to_act == 0 and env.game.phase == PLACE and not done and reward == 0.0
    assert (obs[..., TO_ACT] == 1).all()
    np.testing.assert_array_equal(info["action_mask"], legal_mask(env.game, 0))
    assert not info["action_mask"][SMALL.squares * 4 :].any()  # a placement: no tilt, no decline


def test_the_learner_tilts_then_places_two_turns_in_a_row() -> None:
    env = SelfPlayEnv("small", seat=1)
    opponent = Scripted(env, lambda game: place_action(SMALL, CENTRE, 0) if game.phase == PLACE else -1)
    env.set_opponent(opponent)
    env.reset(seed=0)
    assert len(opponent.calls) == 1 and env.game.phase == RESPOND and env.game.to_act == 1
    obs, _, done, _, _ = env.step(tilt_action(SMALL, 1))  # east
    assert len(opponent.calls) == 1  # the tilter places next: the opponent did not move
    assert env.game.to_act == 1 and env.game.phase == PLACE and not done
    assert (obs[..., TO_ACT] == 1).all()
    np.testing.assert_array_equal(obs, observation_planes(env.game, 1))


def test_the_opponent_tilts_then_places_within_one_learner_step() -> None:
    env = SelfPlayEnv("small", seat=0)

    def tilt_or_place(game):
        return tilt_action(SMALL, 1) if game.phase == RESPOND else place_action(SMALL, CENTRE + 1, 0)

    opponent = Scripted(env, tilt_or_place)
    env.set_opponent(opponent)
    env.reset(seed=0)
    _, _, done, _, info = env.step(place_action(SMALL, CENTRE - 2, 0))
    assert len(opponent.calls) == 2  # tilt, then its own placement
    assert env.aec.unwrapped.history[-2:] == [tilt_action(SMALL, 1), place_action(SMALL, CENTRE + 1, 0)]
    assert env.game.to_act == 0 and env.game.phase == RESPOND and not done
    assert info["action_mask"][decline_action(SMALL)] == 1


def test_the_opponent_places_again_after_the_learner_declines() -> None:
    env = SelfPlayEnv("small", seat=1)
    opponent = Scripted(env, first_placement)
    env.set_opponent(opponent)
    env.reset(seed=0)
    for turn in range(1, 4):
        assert len(opponent.calls) == turn and env.game.phase == RESPOND and env.game.to_act == 1
        env.step(decline_action(SMALL))


@pytest.mark.parametrize("aec", ["raw", "wrapped"])
@pytest.mark.parametrize("seat", [0, 1])
def test_the_result_reaches_the_learner_whoever_moved_last(seat: int, aec: str) -> None:
    """Against random play, over many games: the last step's reward is the result for the
    learner's seat, also in the games the opponent ended (by its placement, tilt or decline)."""
    env = SelfPlayEnv(carnac_env.raw_env("small") if aec == "raw" else carnac_env.env(board="small"), seat=seat)
    last_movers = set()
    for seed in range(30):
        _, rewards, infos, moves = random_episode(env, seed)
        result = env.game.result()
        assert env.game.is_over
        assert rewards[-1] == result.reward(seat) and not any(rewards[:-1])
        assert infos[-1]["winner"] == (-1 if result.winner is None else result.winner)
        assert infos[-1]["action_mask"].all()  # all ones once over
        last_movers.add("opponent" if moves[-1] > 1 else "learner")
    assert last_movers == {"opponent", "learner"}  # both endings were met


@pytest.mark.parametrize("seat", [0, 1])
def test_it_plays_the_same_games_as_the_gymnasium_env(seat: int) -> None:
    """With a fixed seat and an agent opponent, the adapter and carnac_env/Carnac-v0 draw the same
    opponent seeds, so the same learner actions give the same games, step for step."""
    for seed in range(4):
        mine = random_episode(SelfPlayEnv("small", opponent="random", seat=seat), seed)
        theirs_env = CarnacEnv("small", opponent="random", seat=seat)
        rng = np.random.default_rng(seed)
        obs, info = theirs_env.reset(seed=seed)
        theirs = [obs]
        done = False
        while not done:
            obs, _, done, _, info = theirs_env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
            theirs.append(obs)
        assert len(mine[0]) == len(theirs)
        for a, b in zip(mine[0], theirs, strict=True):
            np.testing.assert_array_equal(a, b)


def test_masks_are_int8_everywhere_and_fit_gymnasiums_sampler() -> None:
    env = SelfPlayEnv("small", seat="alternate", mask_in_observation=True)
    seen = []

    def policy(observation, action_mask):
        player = env.game.to_act
        assert player != env.seat
        # The policy sees what the learner would see in its seat: its own planes and int8 mask.
        np.testing.assert_array_equal(observation["observation"], observation_planes(env.game, player))
        np.testing.assert_array_equal(action_mask, legal_mask(env.game, player))
        seen.append((observation, action_mask, player))
        return int(np.flatnonzero(action_mask)[0])

    env.set_opponent(policy)
    for game in range(2):
        obs, info = env.reset(seed=0 if game == 0 else None)  # seats 0 then 1
        done = False
        while not done:
            for mask in (obs["action_mask"], info["action_mask"], env.action_masks()):
                assert mask.dtype == np.int8
                np.testing.assert_array_equal(mask, legal_mask(env.game, env.seat))
            assert env.observation_space.contains(obs)
            action = env.action_space.sample(mask=info["action_mask"])  # Gymnasium's own idiom
            obs, _, done, _, info = env.step(action)
    assert {player for *_, player in seen} == {0, 1}
    for observation, action_mask, _ in seen:
        assert action_mask.dtype == np.int8 and observation["action_mask"].dtype == np.int8
        assert (observation["observation"][..., TO_ACT] == 1).all()
    env_bool = env.action_masks().astype(bool)
    assert env_bool.all()  # the episode is over: all ones


def test_seats_alternate_from_each_seeded_reset_and_can_be_drawn() -> None:
    env = SelfPlayEnv("small")
    seats = [env.reset(seed=5 if i == 0 else None)[1]["seat"] for i in range(4)]
    assert seats == [0, 1, 0, 1]
    assert env.reset(seed=6)[1]["seat"] == 0
    assert env.reset(options={"seat": 0})[1]["seat"] == 0  # one game's seat
    drawn = SelfPlayEnv("small", seat="random")
    assert {drawn.reset(seed=s)[1]["seat"] for s in range(20)} == {0, 1}


def test_seeding_replays_the_same_games() -> None:
    pool = OpponentPool(["random", "greedy"])

    def run(seed: int):
        env = SelfPlayEnv("small", opponent=pool, seat="random")
        out = []
        for game in range(3):
            observations, rewards, infos, _ = random_episode(env, seed + game)
            out.append((infos[0]["seat"], repr(env.opponent), np.stack(observations), rewards))
        return out

    first, again, other = run(0), run(0), run(100)
    for a, b in zip(first, again, strict=True):
        assert a[:2] == b[:2] and a[3] == b[3]
        np.testing.assert_array_equal(a[2], b[2])
    assert any(a[:2] != c[:2] or a[2].shape != c[2].shape or (a[2] != c[2]).any() for a, c in zip(first, other))


def test_the_pool_keeps_its_first_members_and_the_newest_snapshots() -> None:
    pool = OpponentPool(["random"], size=2)
    snapshots = [lambda obs, mask, i=i: int(np.flatnonzero(mask)[i % 2]) for i in range(3)]
    for snapshot in snapshots:
        pool.add(snapshot)
    assert pool.members == ["random", snapshots[1], snapshots[2]] and len(pool) == 3
    env = SelfPlayEnv("small", opponent=pool)
    met = set()
    for seed in range(30):
        env.reset(seed=seed)
        met.add(id(env.opponent.given))
    assert met == {id(m) for m in pool.members}
    env.add_opponent("greedy")  # the env's pool is the caller's pool
    assert pool.members[-1] == "greedy" and len(pool) == 3


def test_a_snapshot_added_while_training_is_met_at_the_next_reset() -> None:
    pool = OpponentPool()
    env = SelfPlayEnv("small", opponent=pool, seat=0)
    with pytest.raises(CarnacError, match="pool is empty"):
        env.reset(seed=0)
    calls = []
    pool.add(lambda obs, mask: calls.append(1) or int(np.flatnonzero(mask)[0]))
    env.reset(seed=0)
    env.step(place_action(SMALL, CENTRE, 0))
    assert calls  # the only member answered the placement


def test_illegal_actions_lose_or_raise() -> None:
    env = SelfPlayEnv("small", seat=0)
    env.reset(seed=0)
    _, reward, done, _, info = env.step(decline_action(SMALL))  # nothing to decline
    assert (reward, done, info["illegal_action"], info["winner"]) == (-1.0, True, True, 1)
    assert info["action_mask"].all() and "decline" in env.forfeit
    with pytest.raises(CarnacError, match="game is over"):
        env.step(0)
    strict = SelfPlayEnv("small", seat=0, illegal_action="raise")
    strict.reset(seed=0)
    with pytest.raises(IllegalActionError, match="illegal"):
        strict.step(decline_action(SMALL))
    assert strict.aec.unwrapped.history == [] and not strict.forfeit
    for bad in (-1, SMALL.num_actions, 1.5, "a1"):
        with pytest.raises(CarnacError, match="action space"):
            strict.step(bad)


def test_an_opponent_that_fails_takes_the_learners_move_back() -> None:
    env = SelfPlayEnv("small", seat=0, opponent=lambda obs, mask: SMALL.num_actions - 1)  # declines
    env.reset(seed=0)
    env.step(place_action(SMALL, CENTRE, 0))  # tiltable: the decline is legal
    before = list(env.aec.unwrapped.history)
    env.set_opponent(lambda obs, mask: 0)  # a placement, when it must respond
    env.reset(seed=0, options={"moves": before})
    with pytest.raises(CarnacError, match="illegal action 0"):
        env.step(place_action(SMALL, CENTRE + 2, 0))
    assert env.aec.unwrapped.history == before and env.game.to_act == 0


def test_bad_options_are_refused() -> None:
    with pytest.raises(CarnacError, match="seat"):
        SelfPlayEnv("small", seat=2)
    with pytest.raises(CarnacError, match="opponent must be"):
        SelfPlayEnv("small", opponent=42)
    with pytest.raises(CarnacError, match="opponent must be"):
        OpponentPool(["random", 3.5])
    with pytest.raises(CarnacError, match="list of opponents"):
        OpponentPool("random")
    with pytest.raises(CarnacError, match="size"):
        OpponentPool(["random"], size=0)
    with pytest.raises(CarnacError, match="OpponentPool cannot be a member"):
        OpponentPool([OpponentPool(["random"])])
    with pytest.raises(UnknownOptionError, match="frameskip"):
        SelfPlayEnv("small", frameskip=4)
    with pytest.raises(CarnacError, match="illegal_action"):
        SelfPlayEnv("small", illegal_action="ignore")
    with pytest.raises(CarnacError, match="set them on the AEC env"):
        SelfPlayEnv(carnac_env.env(board="small"), rows=4)
    with pytest.raises(CarnacError, match="carnac AEC env"):
        SelfPlayEnv(object())
    with pytest.raises(CarnacError, match="add_opponent needs an OpponentPool"):
        SelfPlayEnv("small").add_opponent("random")
    env = SelfPlayEnv("small")
    with pytest.raises(CarnacError, match="call reset"):
        env.step(0)
    with pytest.raises(CarnacError, match="unknown reset option"):
        env.reset(options={"opponent": "greedy"})
    with pytest.raises(CarnacError, match="seat"):
        env.reset(options={"seat": 3})


@pytest.mark.parametrize("kwargs", [{}, {"observation": "image"}, {"mask_in_observation": True}])
def test_gymnasiums_checker_passes(kwargs, capsys) -> None:
    env = SelfPlayEnv("small", opponent=OpponentPool(["random", "greedy"]), **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env, skip_render_check=True)  # no spec to build other render modes from
    capsys.readouterr()
    assert isinstance(env, gym.Env)
