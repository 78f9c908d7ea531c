"""The Gymnasium vector env over the batched engine (carnac_env.vector_env)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, SyncVectorEnv

from carnac_env.core import legal_mask, observation_planes
from carnac_env.errors import CarnacError, IllegalActionError
from carnac_env.gym_env import CarnacEnv
from carnac_env.registration import ENV_ID, register_envs
from carnac_env.vector_env import CarnacVectorEnv

register_envs()
BACKENDS = ["auto", "numba"]  # one compiled engine (the numpy path was removed), under both names


class FirstLegal:
    """The single-env twin of the ``first_legal`` policy below."""

    def act(self, env) -> int:
        return min(env.unwrapped.game.legal_actions())


def first_legal(observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
    return np.argmax(action_mask, axis=1)


def learner_actions(mask: np.ndarray, step: int) -> np.ndarray:
    """A deterministic learner: the ((7 * step + i) mod count)-th legal action in env i."""
    actions = np.empty(len(mask), dtype=np.int64)
    for i, row in enumerate(mask):
        legal = np.flatnonzero(row)
        actions[i] = legal[(7 * step + 3 * i) % len(legal)]
    return actions


def random_actions(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return np.argmax(rng.random(mask.shape) * mask, axis=1)


def test_make_vec_uses_the_batched_env() -> None:
    envs = gym.make_vec(ENV_ID, num_envs=8, board="small", seat=1)
    assert isinstance(envs, CarnacVectorEnv)
    assert envs.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert envs.num_envs == 8
    assert envs.single_observation_space == CarnacEnv("small").observation_space
    assert envs.single_action_space == gym.spaces.Discrete(5 * 8 * 4 + 5)
    assert envs.observation_space.shape == (8, 5, 8, 9)
    obs, infos = envs.reset(seed=0)
    assert obs in envs.observation_space
    assert infos["action_mask"].shape == (8, 165) and infos["action_mask"].dtype == bool
    assert (infos["seat"] == 1).all()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("seat", [0, 1])
def test_matches_a_sync_vector_env_of_single_envs(seat: int, backend: str) -> None:
    """Same learner, same deterministic opponent: the batched vector env and Gymnasium's own
    SyncVectorEnv (SAME_STEP autoreset) over CarnacEnv agree on everything, step by step."""
    n = 6
    ours = CarnacVectorEnv(n, board="petit_menec", opponent=first_legal, seat=seat, backend=backend)
    theirs = SyncVectorEnv(
        [lambda: CarnacEnv("petit_menec", opponent=FirstLegal(), seat=seat) for _ in range(n)],
        autoreset_mode=AutoresetMode.SAME_STEP,
    )
    obs_a, info_a = ours.reset(seed=0)
    obs_b, info_b = theirs.reset(seed=0)
    np.testing.assert_array_equal(obs_a, obs_b)
    np.testing.assert_array_equal(info_a["action_mask"], info_b["action_mask"])
    episodes = 0
    for step in range(120):
        actions = learner_actions(info_a["action_mask"], step)
        obs_a, rew_a, term_a, trunc_a, info_a = ours.step(actions)
        obs_b, rew_b, term_b, trunc_b, info_b = theirs.step(actions)
        np.testing.assert_array_equal(obs_a, obs_b)
        np.testing.assert_array_equal(rew_a, rew_b)
        np.testing.assert_array_equal(term_a, term_b)
        np.testing.assert_array_equal(trunc_a, trunc_b)
        np.testing.assert_array_equal(info_a["action_mask"], info_b["action_mask"])
        np.testing.assert_array_equal(info_a["action_mask"], ours.action_masks())
        if term_a.any():
            episodes += int(term_a.sum())
            np.testing.assert_array_equal(info_a["_final_obs"], info_b["_final_obs"])
            for i in np.flatnonzero(term_a):
                np.testing.assert_array_equal(info_a["final_obs"][i], info_b["final_obs"][i])
                winner = info_b["final_info"]["winner"][i]
                expected = -1 if winner is None else int(winner[-1])
                assert info_a["final_info"]["winner"][i] == expected
    assert episodes >= 20


@pytest.mark.parametrize("seat", [0, 1, "random"])
def test_observations_and_masks_are_the_learners(seat) -> None:
    envs = CarnacVectorEnv(16, board="small", seat=seat)
    obs, infos = envs.reset(seed=1)
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(150):
        seats = infos["seat"]
        for i in range(16):
            state = envs.games.get_state(i)
            assert state.to_act == seats[i]
            np.testing.assert_array_equal(obs[i], observation_planes(state, int(seats[i])))
            np.testing.assert_array_equal(infos["action_mask"][i], legal_mask(state).astype(bool))
        obs, rewards, terminated, truncated, infos = envs.step(random_actions(infos["action_mask"], rng))
        assert not truncated.any()
        assert set(np.unique(rewards[terminated])) <= {-1.0, 0.0, 1.0}
        assert not rewards[~terminated].any()
        ended += int(terminated.sum())
    assert ended > 16
    if seat == "random":
        assert set(np.unique(envs.seats)) == {0, 1}


def test_final_obs_is_the_finished_position_seen_by_the_learner() -> None:
    envs = CarnacVectorEnv(8, board="petit_menec", seat=1)
    _, infos = envs.reset(seed=2)
    rng = np.random.default_rng(1)
    checked = 0
    while checked < 10:
        before = [envs.games.get_state(i) for i in range(8)]
        actions = random_actions(infos["action_mask"], rng)
        _obs, rewards, terminated, _, infos = envs.step(actions)
        for i in np.flatnonzero(terminated):
            final = infos["final_obs"][i]
            assert final.shape == (6, 6, 9) and not final[..., 7].any()  # no one to act
            # the learner's last placed/tilted/declined state leads to this final position
            assert final[..., :4].sum() >= before[i].board.megaliths - before[i].supply
            assert infos["final_info"]["winner"][i] in (-1, 0, 1)
            red_reward = {0: 1.0, 1: -1.0, -1: 0.0}[int(infos["final_info"]["winner"][i])]
            assert rewards[i] == -red_reward  # the learner is White
            checked += 1


def test_random_opponent_and_seats_are_deterministic_for_a_seed() -> None:
    def run(seed: int) -> list[np.ndarray]:
        envs = CarnacVectorEnv(8, board="small", seat="random")
        obs, infos = envs.reset(seed=seed)
        out = [obs, infos["seat"]]
        for step in range(60):
            obs, rewards, terminated, _, infos = envs.step(learner_actions(infos["action_mask"], step))
            out += [obs, rewards, terminated, infos["seat"]]
        return out

    first, again, other = run(5), run(5), run(6)
    assert all(np.array_equal(a, b) for a, b in zip(first, again))
    assert not all(np.array_equal(a, b) for a, b in zip(first, other))


def test_record_episode_statistics_wrapper() -> None:
    envs = gym.wrappers.vector.RecordEpisodeStatistics(CarnacVectorEnv(8, board="petit_menec"))
    _, infos = envs.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(60):
        _obs, _rewards, _terminated, _, infos = envs.step(random_actions(infos["action_mask"], rng))
        if "episode" in infos:
            done = infos["_episode"]
            assert set(np.unique(infos["episode"]["r"][done])) <= {-1.0, 0.0, 1.0}
            assert (infos["episode"]["l"][done] > 3).all()
            return
    raise AssertionError("no episode finished")


def test_custom_policy_sees_the_opponents_games_only() -> None:
    seen = []

    def policy(observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        seen.append(len(observation))
        assert observation.shape[1:] == (5, 8, 9) and action_mask.shape == (len(observation), 165)
        assert (observation[..., 7] == 1).all()  # seen by the opponent, who is to act
        return np.argmax(action_mask, axis=1)

    envs = CarnacVectorEnv(4, board="small", opponent=policy, seat=1)
    _, infos = envs.reset(seed=0)
    assert seen == [4]  # Red opens in all four games
    for step in range(10):
        _obs, _, _, _, infos = envs.step(learner_actions(infos["action_mask"], step))
    assert len(seen) > 1 and 0 < max(seen[1:]) <= 4


def test_bad_policy_output_is_reported() -> None:
    envs = CarnacVectorEnv(4, board="small", opponent=lambda obs, mask: np.zeros(2), seat=1)
    with pytest.raises(CarnacError, match="opponent policy must return 4 integer actions"):
        envs.reset(seed=0)


def test_illegal_learner_actions_raise_and_change_nothing() -> None:
    envs = CarnacVectorEnv(4, board="small", seat=0)
    _obs, infos = envs.reset(seed=0)
    envs.step(learner_actions(infos["action_mask"], 0))
    before = [envs.games.get_state(i) for i in range(4)]
    mask = envs.action_masks()
    actions = learner_actions(mask, 1)
    actions[2] = int(np.flatnonzero(~mask[2])[0])
    with pytest.raises(IllegalActionError, match=r"envs \[2\]"):
        envs.step(actions)
    assert [envs.games.get_state(i) for i in range(4)] == before
    np.testing.assert_array_equal(envs.action_masks(), mask)


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"seat": 2}, "seat"),
        ({"seat": False}, "seat"),
        ({"opponent": "greedy"}, "opponent"),
        ({"num_envs": 0}, "num_envs"),
        ({"board": "atlantis"}, "unknown board"),
        ({"backend": "gpu"}, "backend"),
    ],
)
def test_bad_arguments(kwargs: dict, fragment: str) -> None:
    with pytest.raises(CarnacError, match=fragment):
        CarnacVectorEnv(**{"num_envs": 2, **kwargs})


def test_step_before_reset_and_reset_options() -> None:
    envs = CarnacVectorEnv(2, board="small")
    with pytest.raises(CarnacError, match="reset"):
        envs.step(np.zeros(2, dtype=np.int64))
    with pytest.raises(CarnacError, match="options"):
        envs.reset(options={"seat": 1})


def test_a_board_where_the_learner_never_acts_is_reported() -> None:
    """One megalith, never tiltable on a 1x2 board: White would never act."""
    envs = CarnacVectorEnv(2, board="custom", rows=1, cols=2, megaliths=1, min_dolmen=1, seat=1)
    with pytest.raises(CarnacError, match="too small"):
        envs.reset(seed=0)
