"""The Gymnasium vector env over the batched engine (carnac_env.envs.vector)."""

from __future__ import annotations

from typing import get_type_hints

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from hypothesis import given, settings
from hypothesis import strategies as st

from carnac_env.core import legal_mask, observation_planes
from carnac_env.envs.gym import CarnacEnv
from carnac_env.envs.infos import GymInfo, VectorInfo
from carnac_env.envs.registration import ENV_ID, register_envs
from carnac_env.envs.vector import CarnacVectorEnv
from carnac_env.errors import CarnacError, IllegalActionError

register_envs()


class FirstLegal:
    """The single-env twin of the ``first_legal`` policy below."""

    def act(self, state) -> int:
        return min(state.legal_actions())


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
    assert envs.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP  # Gymnasium's own vector envs' default
    assert envs.num_envs == 8
    assert envs.single_observation_space == CarnacEnv("small").observation_space
    assert envs.single_action_space == gym.spaces.Discrete(5 * 8 * 4 + 5)
    assert envs.observation_space.shape == (8, 5, 8, 9)
    obs, infos = envs.reset(seed=0)
    assert obs in envs.observation_space
    assert infos["action_mask"].shape == (8, 165) and infos["action_mask"].dtype == np.int8
    assert (infos["seat"] == 1).all()
    same = gym.make_vec(ENV_ID, num_envs=2, board="small", autoreset_mode=AutoresetMode.SAME_STEP)
    assert same.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP


# ----------------------------------------------------------------- one env behind every vectorization mode
def _vector(mode: str, autoreset: AutoresetMode, n: int, **options) -> gym.vector.VectorEnv:
    """``gymnasium.make_vec`` in ``mode``, the autoreset mode given the way that mode takes it."""
    if mode == "vector_entry_point":
        return gym.make_vec(ENV_ID, num_envs=n, vectorization_mode=mode, autoreset_mode=autoreset, **options)
    vector_kwargs = {"autoreset_mode": autoreset}
    return gym.make_vec(ENV_ID, num_envs=n, vectorization_mode=mode, vector_kwargs=vector_kwargs, **options)


def _same(a, b, where: str) -> None:
    """Two things a learner sees are the same: equal values, and arrays of the same dtype and shape."""
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b), where
        for k, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{where}[{k}]")
    elif isinstance(a, dict):
        assert isinstance(b, dict) and set(a) == set(b), f"{where}: keys {sorted(a)} != {sorted(b)}"
        for key in a:
            _same(a[key], b[key], f"{where}[{key!r}]")
    elif isinstance(a, np.ndarray) and a.dtype == object:
        assert isinstance(b, np.ndarray) and b.dtype == object and a.shape == b.shape, where
        for i, (x, y) in enumerate(zip(a, b)):
            assert (x is None) == (y is None), f"{where}[{i}]"
            if x is not None:
                _same(x, y, f"{where}[{i}]")
    else:
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype and a.shape == b.shape, f"{where}: {a.dtype}{a.shape} != {b.dtype}{b.shape}"
        np.testing.assert_array_equal(a, b, err_msg=where)


def _learner(mask: np.ndarray, step: int) -> np.ndarray:
    """A deterministic learner that now and then plays an illegal action (a forfeit under
    ``illegal_action="lose"``): the ((7 * step + 3 * i) mod count)-th legal action, else."""
    actions = learner_actions(mask, step)
    if step % 5 == 4:
        i = step % len(mask)
        illegal = np.flatnonzero(mask[i] == 0)
        if len(illegal):
            actions[i] = illegal[(step // 5) % len(illegal)]
    return actions


@pytest.mark.parametrize("autoreset", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP], ids=["next", "same"])
@pytest.mark.parametrize(
    "options",
    [
        {"seat": 1},
        {"seat": 0, "observation": "image", "mask_in_observation": True},
    ],
    ids=["planes", "image+mask"],
)
def test_every_vectorization_mode_is_the_same_env(autoreset: AutoresetMode, options: dict) -> None:
    """One seeded episode set through make_vec's three modes: our vector env, Gymnasium's
    SyncVectorEnv and AsyncVectorEnv over gymnasium.make's single env. With the same options
    (an agent object as the opponent, a time limit, forfeits by illegal actions, the image
    layout and the mask in the observation), the learner sees the same observations, rewards,
    terminations, truncations and infos (keys, dtypes and shapes), step by step."""
    n = 3
    kwargs = {"board": "petit_menec", "opponent": FirstLegal(), "max_episode_steps": 6, **options}
    modes = ("vector_entry_point", "sync", "async")
    envs = {mode: _vector(mode, autoreset, n, **kwargs) for mode in modes}
    try:
        assert isinstance(envs["vector_entry_point"].unwrapped, CarnacVectorEnv)
        for mode, env in envs.items():
            assert env.metadata["autoreset_mode"] == autoreset, mode
        first = {mode: env.reset(seed=0) for mode, env in envs.items()}
        for mode in modes[1:]:
            _same(first["vector_entry_point"], first[mode], f"reset, {mode}")
        seen = {"terminated": 0, "truncated": 0, "forfeits": 0}
        infos = first["vector_entry_point"][1]
        for step in range(60):
            actions = _learner(infos["action_mask"], step)
            results = {mode: env.step(actions) for mode, env in envs.items()}
            for mode in modes[1:]:
                _same(results["vector_entry_point"], results[mode], f"step {step}, {mode}")
            _obs, rewards, terminated, truncated, infos = results["vector_entry_point"]
            assert rewards.dtype == np.float64
            seen["terminated"] += int(terminated.sum())
            seen["truncated"] += int(truncated.sum())
            ended = infos.get("final_info", infos)
            forfeits = ended["illegal_action"] & (terminated | truncated)
            seen["forfeits"] += int(forfeits.sum())
            np.testing.assert_array_equal(ended["winner"][forfeits], 1 - ended["seat"][forfeits])  # named
        assert seen["terminated"] > 3 and seen["truncated"] > 3 and seen["forfeits"] > 0, seen
    finally:
        for env in envs.values():
            env.close()


@pytest.mark.parametrize("autoreset", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP], ids=["next", "same"])
def test_infos_are_their_typed_dict(autoreset: AutoresetMode) -> None:
    """Every key of the vector infos is one VectorInfo declares: the single env's (GymInfo's)
    keys stacked, each beside its mask, at every step; final_obs and final_info (itself the
    stacked keys) only under same-step autoreset, on a step where a game ended."""
    declared = set(get_type_hints(VectorInfo))
    stacked = {name for key in get_type_hints(GymInfo) for name in (key, f"_{key}")}
    assert stacked <= declared
    envs = CarnacVectorEnv(4, board="petit_menec", seat="random", autoreset_mode=autoreset)
    _obs, infos = envs.reset(seed=5)
    assert set(infos) == stacked
    finals = 0
    for step in range(30):
        _obs, _, terminated, truncated, infos = envs.step(learner_actions(infos["action_mask"], step))
        ended = terminated | truncated
        if autoreset == AutoresetMode.SAME_STEP and ended.any():
            finals += 1
            assert set(infos) == stacked | {"final_obs", "_final_obs", "final_info", "_final_info"}
            assert set(infos["final_info"]) == stacked
            np.testing.assert_array_equal(infos["_final_info"], ended)
        else:
            assert set(infos) == stacked
        assert set(infos) <= declared
        for key in get_type_hints(GymInfo):
            assert len(infos[key]) == 4 and infos[f"_{key}"].all(), key
    assert finals > 0 or autoreset == AutoresetMode.NEXT_STEP


def test_a_batched_policy_plays_as_its_agent_twin() -> None:
    """The vector env's batched policy form sits on top of the one opponent protocol: the same
    choices given as policy(obs, mask) or as an agent object give the same steps."""
    batched = CarnacVectorEnv(4, board="petit_menec", opponent=first_legal, seat=1)
    agent = CarnacVectorEnv(4, board="petit_menec", opponent=FirstLegal(), seat=1)
    first, second = batched.reset(seed=0), agent.reset(seed=0)
    _same(first, second, "reset")
    infos = first[1]
    for step in range(40):
        actions = learner_actions(infos["action_mask"], step)
        first, second = batched.step(actions), agent.step(actions)
        _same(first, second, f"step {step}")
        infos = first[4]


def test_make_vec_takes_what_make_takes() -> None:
    """Every option of gymnasium.make works in make_vec's default mode too."""
    envs = gym.make_vec(
        ENV_ID,
        num_envs=2,
        board="small",
        opponent="greedy",
        seat="random",
        illegal_action="raise",
        observation="image",
        image_scale=5,
        mask_in_observation=True,
        max_episode_steps=4,
    )
    obs, infos = envs.reset(seed=1)
    single = gym.make(ENV_ID, board="small", observation="image", image_scale=5, mask_in_observation=True)
    assert envs.single_observation_space == single.observation_space
    assert obs["observation"].shape == (2, 9, 25, 40) and obs["observation"].dtype == np.uint8
    with pytest.raises(IllegalActionError):
        envs.step(np.flatnonzero(~infos["action_mask"][0])[:1].repeat(2))
    truncations = np.zeros(2, dtype=bool)
    for step in range(4):
        _obs, _, terminations, truncations, infos = envs.step(learner_actions(infos["action_mask"], step))
    assert truncations.all() and not terminations.any()  # four learner steps: the time limit
    assert set(infos) >= set(get_type_hints(GymInfo))


def test_a_masked_policy_never_meets_an_empty_mask() -> None:
    """The CleanRL-style loop of issue 23 under next-step autoreset: masked logits over
    infos["action_mask"] stay finite, also on the observation after a game ends."""
    envs = gym.make_vec(ENV_ID, num_envs=8, board="petit_menec", seat="random")
    _obs, infos = envs.reset(seed=0)
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(64):
        mask = infos["action_mask"]
        assert mask.any(axis=1).all()
        logits = np.where(mask, rng.normal(size=mask.shape), -np.inf)
        probs = np.exp(logits - logits.max(axis=1, keepdims=True))
        probs /= probs.sum(axis=1, keepdims=True)
        assert np.isfinite(probs).all()
        actions = np.array([rng.choice(len(p), p=p) for p in probs])
        _obs, _, terminated, truncated, infos = envs.step(actions)
        ended += int((terminated | truncated).sum())
        assert infos["action_mask"][terminated | truncated].all()  # the end of a game: all True
    assert ended > 8


@pytest.mark.parametrize("seat", [0, 1, "random"])
def test_observations_and_masks_are_the_learners(seat) -> None:
    envs = CarnacVectorEnv(16, board="small", seat=seat, autoreset_mode=AutoresetMode.SAME_STEP)
    obs, infos = envs.reset(seed=1)
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(150):
        seats = infos["seat"]
        for i in range(16):
            state = envs.games.get_state(i)
            assert state.to_act == seats[i]
            np.testing.assert_array_equal(obs[i], observation_planes(state, int(seats[i])))
            np.testing.assert_array_equal(infos["action_mask"][i], legal_mask(state))
        obs, rewards, terminated, truncated, infos = envs.step(random_actions(infos["action_mask"], rng))
        assert not truncated.any()
        assert set(np.unique(rewards[terminated])) <= {-1.0, 0.0, 1.0}
        assert not rewards[~terminated].any()
        ended += int(terminated.sum())
    assert ended > 16
    if seat == "random":
        assert set(np.unique(envs.seats)) == {0, 1}


def test_final_obs_is_the_finished_position_seen_by_the_learner() -> None:
    envs = CarnacVectorEnv(8, board="petit_menec", seat=1, autoreset_mode=AutoresetMode.SAME_STEP)
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
    envs = CarnacVectorEnv(4, board="small", seat=0, illegal_action="raise")
    _obs, infos = envs.reset(seed=0)
    envs.step(learner_actions(infos["action_mask"], 0))
    before = [envs.games.get_state(i) for i in range(4)]
    mask = envs.action_masks()
    actions = learner_actions(mask, 1)
    actions[2] = int(np.flatnonzero(mask[2] == 0)[0])
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
        ({"autoreset_mode": AutoresetMode.DISABLED}, "autoreset_mode"),
        ({"max_episode_steps": 0}, "max_episode_steps"),
        ({"observation": "rgb"}, "observation"),
        ({"illegal_action": "ignore"}, "illegal_action"),
        ({"mask_in_observation": 1}, "mask_in_observation"),
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


def test_an_opponent_agent_gets_the_game_and_the_vector_env_holds_no_aec_env() -> None:
    """The agent protocol on a GameState: no hidden AEC env behind the vector env."""
    from carnac_env.core.game import GameState
    from carnac_env.envs.aec import raw_env

    seen = []

    class Watching(FirstLegal):
        def act(self, state) -> int:
            seen.append(type(state))
            return super().act(state)

    envs = CarnacVectorEnv(3, board="petit_menec", opponent=Watching(), seat=1)
    envs.reset(seed=0)
    assert seen and set(seen) == {GameState}
    assert not any(isinstance(value, raw_env) for value in vars(envs).values())
