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


@pytest.mark.parametrize("opponent", ["batched policy", "agent object"])
@pytest.mark.parametrize("seat", [0, 1])
def test_matches_a_sync_vector_env_of_single_envs(seat: int, opponent: str) -> None:
    """Same learner, same deterministic opponent: the batched vector env and Gymnasium's own
    SyncVectorEnv (SAME_STEP autoreset) over CarnacEnv agree on everything, step by step. The
    opponent is given to the vector env as a batched policy, or as the very agent object the
    single envs take (the one opponent protocol, act(env))."""
    n = 6
    ours = CarnacVectorEnv(
        n, board="petit_menec", opponent=first_legal if opponent == "batched policy" else FirstLegal(), seat=seat
    )
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
                expected = int(winner)
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


def test_an_agent_spec_is_an_opponent_and_replays_per_seed() -> None:
    """Any agent spec the single env takes works here too (re-seeded at every reset)."""

    def run(seed: int) -> list[np.ndarray]:
        envs = CarnacVectorEnv(3, board="petit_menec", opponent="greedy", seat=1)
        obs, infos = envs.reset(seed=seed)
        out = [obs]
        for step in range(25):
            obs, rewards, _, _, infos = envs.step(learner_actions(infos["action_mask"], step))
            out += [obs, rewards]
        return out

    first, again = run(1), run(1)
    assert all(np.array_equal(a, b) for a, b in zip(first, again))


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
        ({"opponent": 42}, "opponent"),
        ({"opponent": "nonsense"}, "unknown agent"),
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


# ---------------------------------------------------------------- faults and bad inputs (issue 12)


class FlakyPolicy:
    """``first_legal`` until ``fail`` is set; then it raises, or returns ``fail`` if an array."""

    def __init__(self) -> None:
        self.fail = None

    def __call__(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        if self.fail is None:
            return first_legal(observation, action_mask)
        if isinstance(self.fail, np.ndarray):
            return self.fail[: len(action_mask)]
        raise RuntimeError("policy crashed")


@pytest.mark.parametrize("failure", ["raise", "illegal", "shape"])
def test_an_opponent_failure_takes_the_learners_actions_back(failure: str) -> None:
    policy = FlakyPolicy()
    envs = CarnacVectorEnv(4, board="small", opponent=policy, seat="random")
    _obs, infos = envs.reset(seed=3)
    for step in range(3):
        _obs, _, _, _, infos = envs.step(learner_actions(infos["action_mask"], step))
    before = [envs.games.get_state(i) for i in range(4)]
    mask, seats = envs.action_masks(), envs.seats
    policy.fail = {"raise": "boom", "illegal": np.full(4, -1), "shape": np.zeros((4, 2), dtype=np.int64)}[failure]
    actions = learner_actions(mask, 3)
    with pytest.raises(RuntimeError if failure == "raise" else CarnacError) as caught:
        envs.step(actions)
    if failure != "raise":
        assert "taken back" in str(caught.value)
    assert [envs.games.get_state(i) for i in range(4)] == before
    np.testing.assert_array_equal(envs.action_masks(), mask)
    np.testing.assert_array_equal(envs.seats, seats)
    policy.fail = None
    _obs, _, _, _, infos = envs.step(actions)  # the same actions are legal again, and the batch goes on
    assert (infos["seat"] == envs.seats).all()


def test_seed_list_one_per_env() -> None:
    envs = CarnacVectorEnv(3, board="small", seat="random")
    a = envs.reset(seed=[1, 2, 3])[1]["seat"]
    assert (envs.reset(seed=[1, 2, 3])[1]["seat"] == a).all()
    draws = {tuple(envs.reset(seed=[s, 2, 3])[1]["seat"]) for s in range(12)}
    assert len(draws) > 1  # every seed in the list counts, not just the first
    for bad in ([1, 2], [], [1, 2, 3, 4]):
        with pytest.raises(CarnacError, match="one seed per env"):
            envs.reset(seed=bad)
    for bad in ([1, -2, 3], [1, None, 3], -1, "x", True):
        with pytest.raises(CarnacError, match="seed"):
            envs.reset(seed=bad)


def test_make_vec_render_mode_says_there_are_no_render_modes() -> None:
    with pytest.raises(CarnacError, match="no render modes"):
        gym.make_vec(ENV_ID, num_envs=2, board="small", render_mode="rgb_array")


def test_unknown_keywords_are_a_type_error() -> None:
    with pytest.raises(TypeError, match="unexpected keyword argument 'frameskip'"):
        CarnacVectorEnv(2, board="small", frameskip=4)


hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(deadline=None, max_examples=100)
@given(
    actions=st.one_of(
        st.lists(st.integers(-3, 170), min_size=0, max_size=5).map(np.array),
        st.lists(st.integers(0, 170), min_size=3, max_size=3).map(lambda v: np.array(v, dtype=np.int16)),
        st.lists(st.floats(0, 170), min_size=3, max_size=3).map(np.array),
        st.lists(st.booleans(), min_size=3, max_size=3).map(np.array),
        st.lists(st.integers(0, 170), min_size=3, max_size=3),
        st.integers(0, 170),
        st.none(),
        st.text(max_size=3),
    ),
    legal=st.booleans(),
)
def test_fuzz_vector_step_is_a_package_error_or_a_step(actions, legal: bool) -> None:
    envs = CarnacVectorEnv(3, board="small", seat="random")
    _obs, infos = envs.reset(seed=0)
    if legal:
        actions = learner_actions(infos["action_mask"], 0)
    before = [envs.games.get_state(i) for i in range(3)]
    mask = envs.action_masks()
    try:
        envs.step(actions)
    except CarnacError:
        assert [envs.games.get_state(i) for i in range(3)] == before
        np.testing.assert_array_equal(envs.action_masks(), mask)


@settings(deadline=None, max_examples=100)
@given(
    seed=st.one_of(
        st.none(),
        st.integers(-3, 2**64),
        st.booleans(),
        st.text(max_size=2),
        st.lists(st.one_of(st.integers(-2, 2**40), st.none(), st.booleans()), max_size=4),
    ),
    options=st.one_of(st.none(), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2)),
)
def test_fuzz_vector_reset_is_a_package_error_or_a_reset(seed, options) -> None:
    envs = CarnacVectorEnv(3, board="small", seat="random")
    _obs, infos = envs.reset(seed=0)
    envs.step(learner_actions(infos["action_mask"], 0))
    before = [envs.games.get_state(i) for i in range(3)]
    mask, seats = envs.action_masks(), envs.seats
    try:
        _obs, infos = envs.reset(seed=seed, options=options)
    except CarnacError:
        assert [envs.games.get_state(i) for i in range(3)] == before
        np.testing.assert_array_equal(envs.action_masks(), mask)
        np.testing.assert_array_equal(envs.seats, seats)
    else:
        np.testing.assert_array_equal(infos["action_mask"], envs.action_masks())
