"""The single-agent Gymnasium env carnac_env/Carnac-v0 (carnac_env.envs.gym)."""

from __future__ import annotations

import warnings
from typing import get_type_hints

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from carnac_env.agents import RandomAgent
from carnac_env.core import legal_mask, observation_planes
from carnac_env.core.game import RESPOND
from carnac_env.envs.gym import CarnacEnv
from carnac_env.envs.infos import GymInfo
from carnac_env.envs.opponents import make_opponent
from carnac_env.envs.registration import ENV_ID, register_envs
from carnac_env.errors import CarnacError, IllegalActionError

register_envs()


class Decliner:
    """Always declines; otherwise places on the first empty square."""

    def act(self, state) -> int:
        game = state
        legal = game.legal_actions()
        return legal[-1] if game.phase == RESPOND else legal[0]


class Tilter:
    """Tilts whenever it can; otherwise places on the last empty square with orientation 0."""

    def act(self, state) -> int:
        game = state
        legal = game.legal_actions()
        if game.phase == RESPOND:
            return legal[0]
        return max(a for a in legal if a % 4 == 0)


class Illegal:
    def act(self, env) -> int:
        return -5


def play(env: CarnacEnv, seed: int, pick=None):
    """Play one episode with a seeded random learner; return the transitions."""
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    out = [(obs, info)]
    done = False
    while not done:
        legal = np.flatnonzero(info["action_mask"])
        action = int(legal[rng.integers(len(legal))]) if pick is None else pick(legal)
        obs, reward, done, truncated, info = env.step(action)
        assert not truncated
        out.append((obs, reward, done, info))
    return out


@pytest.mark.parametrize("seat", [0, 1, "random"])
@pytest.mark.parametrize("board", ["small", "medium"])
def test_check_env_passes(seat, board: str, capsys) -> None:
    env = gym.make(ENV_ID, board=board, seat=seat)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any checker warning fails the test
        check_env(env.unwrapped)
    capsys.readouterr()


def test_registration_is_idempotent_and_passes_kwargs() -> None:
    register_envs()
    env = gym.make(ENV_ID, board="petit_menec", seat=1, opponent="random")
    assert env.spec.id == ENV_ID
    assert env.observation_space.shape == (6, 6, 9) and env.observation_space.dtype == np.int8
    assert env.action_space.n == 6 * 6 * 4 + 5
    _, info = env.reset(seed=0)
    assert env.unwrapped.seat == 1
    # sb3-contrib reaches action_masks() through the wrappers with get_wrapper_attr
    np.testing.assert_array_equal(env.get_wrapper_attr("action_masks")(), info["action_mask"])


@pytest.mark.parametrize("seat", [0, 1])
def test_every_observation_is_the_learners_turn_and_matches_the_core(seat: int) -> None:
    env = CarnacEnv("small", seat=seat)
    for seed in range(5):
        episode = play(env, seed)
        obs, info = episode[0]
        game = env.game
        for transition in episode[1:]:
            obs, reward, done, info = transition
            if not done:
                assert reward == 0.0
                assert (obs[..., 7] == 1).all()
        assert env.game.is_over
        assert reward == env.game.result().reward(seat)
        np.testing.assert_array_equal(obs, observation_planes(game, seat))
        # once over, all True (Pgx's convention: a policy fed this observation never meets an empty mask)
        assert info["action_mask"].all() and env.action_masks().all()
        result = env.game.result()
        assert info["winner"] == (-1 if result.winner is None else result.winner)
        assert [int(size) for size in info["dolmens"] if size] == list(result.dolmens[seat])
        assert info["score"] == result.scores[seat]
        # The opponent's side of the result, beside the learner's.
        assert [int(size) for size in info["opponent_dolmens"] if size] == list(result.dolmens[1 - seat])
        assert info["opponent_score"] == result.scores[1 - seat]
        assert info["opponent_dolmens"].shape == info["dolmens"].shape


def test_info_holds_both_seats_dolmens_and_scores() -> None:
    """Both seats' dolmens and scores in every info (zeros until the end), so buffers can stack them."""
    env = CarnacEnv("small", seat=0)
    episode = play(env, 3)
    infos = [episode[0][1]] + [transition[3] for transition in episode[1:]]
    keys = {"action_mask", "seat", "dolmens", "score", "winner", "opponent_dolmens", "opponent_score", "illegal_action"}
    for info in infos:
        assert set(info) == keys
        assert info["opponent_dolmens"].dtype == np.int16 and info["opponent_dolmens"].shape == info["dolmens"].shape
        assert type(info["opponent_score"]) is int
    assert all(not info["opponent_dolmens"].any() and info["opponent_score"] == 0 for info in infos[:-1])


def test_mask_in_info_and_action_masks_agree_with_the_core() -> None:
    env = CarnacEnv("small", seat=1)
    obs, info = env.reset(seed=1)
    for _ in range(15):
        mask = env.action_masks()
        assert mask.dtype == np.int8  # the one mask dtype (docs/environment.md)
        np.testing.assert_array_equal(info["action_mask"], mask)
        np.testing.assert_array_equal(mask, legal_mask(env.game, 1))
        np.testing.assert_array_equal(obs, observation_planes(env.game, 1))
        assert env.game.to_act == 1
        obs, _, done, _, info = env.step(int(np.flatnonzero(mask)[0]))
        if done:
            break


def test_white_learner_starts_after_reds_first_placement() -> None:
    env = CarnacEnv("medium", seat=1)
    obs, _info = env.reset(seed=0)
    game = env.game
    assert game.to_act == 1 and game.supply == 27
    assert (obs[..., 2].sum(), obs[..., 1].sum() + obs[..., 0].sum()) == (1, 1)


def test_learner_places_again_after_the_opponent_declines() -> None:
    env = CarnacEnv("medium", opponent=Decliner(), seat=0)
    env.reset(seed=0)
    b = env.board
    for k in range(5):
        square = 2 * b.cols + 2 * k
        _obs, _reward, _done, _, _info = env.step(square * 4)  # tiltable in the open
        assert env.game.to_act == 0 and env.game.phase == 0  # declined: Red places again
        assert env.game.kinds[square] == 1
        assert env.game.supply == 28 - (k + 1)


def test_opponent_tilts_then_places_before_the_learner_responds() -> None:
    env = CarnacEnv("medium", opponent=Tilter(), seat=0)
    env.reset(seed=0)
    env.step((3 * 10 + 4) * 4)  # Red places d4-ish in the open; White tilts it, then places
    game = env.game
    assert len(game.lying) == 1
    assert game.supply == 26
    assert game.to_act == 0 and game.phase == RESPOND  # Red responds to White's placement
    assert env.action_masks()[-1]  # decline is legal


def test_same_seed_same_episode() -> None:
    env = CarnacEnv("small", seat="random")
    first = play(env, 7)
    again = play(env, 7)
    assert len(first) == len(again)
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a[0], b[0])
    seats = {CarnacEnv("small", seat="random").reset(seed=s)[1]["seat"] for s in range(20)}
    assert seats == {0, 1}


def test_spec_opponents_are_reseeded_at_reset() -> None:
    env = CarnacEnv("small", opponent="random", seat=1)
    starts = [env.reset(seed=3)[0] for _ in range(2)]
    np.testing.assert_array_equal(*starts)
    greedy = CarnacEnv("small", opponent="greedy", seat=0)
    episode = play(greedy, 0)
    assert episode[-1][2]


def test_illegal_action_loses_by_default_and_changes_nothing() -> None:
    env = CarnacEnv("small", seat=0)
    env.reset(seed=0)
    env.step(0)
    before = env.game.copy()
    illegal = int(np.flatnonzero(env.action_masks() == 0)[0])
    _obs, reward, done, truncated, info = env.step(illegal)
    assert (reward, done, truncated) == (-1.0, True, False)
    assert info["illegal_action"] is True and "is illegal" in env.unwrapped.forfeit
    assert info["winner"] == 1  # the forfeit names its winner: the opponent
    assert env.game == before
    assert env.action_masks().all() and info["action_mask"].all()  # the episode is over
    with pytest.raises(CarnacError, match="reset"):
        env.step(0)


def test_illegal_action_raises_when_asked() -> None:
    env = CarnacEnv("small", seat=0, illegal_action="raise")
    env.reset(seed=0)
    env.step(0)
    before = env.game.copy()
    illegal = int(np.flatnonzero(env.action_masks() == 0)[0])
    with pytest.raises(IllegalActionError, match=f"action {illegal}"):
        env.step(illegal)
    assert env.game == before
    env.step(int(np.flatnonzero(env.action_masks())[0]))


@pytest.mark.parametrize("bad", [-1, 10**6, 2.5, "a1", None, True])
def test_actions_outside_the_space_raise(bad) -> None:
    env = CarnacEnv("small")
    env.reset(seed=0)
    before = env.game.copy()
    with pytest.raises(CarnacError, match="action space"):
        env.step(bad)
    assert env.game == before


def test_numpy_integer_actions_are_accepted() -> None:
    env = CarnacEnv("small")
    env.reset(seed=0)
    reference = CarnacEnv("small")
    reference.reset(seed=0)
    for action in (np.int64(0), None):
        if action is None:  # a 0-d array holding the next legal action
            legal = int(np.flatnonzero(env.action_masks())[0])
            action, plain = np.array(legal), legal
        else:
            plain = int(action)
        stepped = env.step(action)
        expected = reference.step(plain)
        np.testing.assert_array_equal(stepped[0], expected[0])
        assert stepped[1:4] == expected[1:4]
        assert env.game == reference.game
    assert env.game.placed >= 1  # the learner's placement really happened


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"seat": 2}, "seat"),
        ({"seat": True}, "seat"),
        ({"seat": "white"}, "seat"),
        ({"opponent": 42}, "opponent"),
        ({"illegal_action": "ignore"}, "illegal_action"),
        ({"board": "atlantis"}, "unknown board"),
        ({"render_mode": "rgb"}, "render_mode"),
    ],
)
def test_bad_arguments(kwargs: dict, fragment: str) -> None:
    with pytest.raises(CarnacError, match=fragment):
        CarnacEnv(**kwargs)


def test_bad_reset_options() -> None:
    env = CarnacEnv("small")
    with pytest.raises(CarnacError, match="reset option"):
        env.reset(options={"colour": 1})
    with pytest.raises(CarnacError, match="seat"):
        env.reset(options={"seat": 3})


def test_reset_options_moves_and_seat() -> None:
    env = CarnacEnv("small", seat=0, opponent=Decliner())
    _, info = env.reset(options={"moves": [0], "seat": 1})
    assert info["seat"] == 1
    assert env.game.to_act == 1 and env.game.kinds[0] == 1
    _obs, info = env.reset()
    assert info["seat"] == 0 and env.game.supply == 28


def test_an_opponent_that_plays_illegally_is_reported() -> None:
    env = CarnacEnv("small", opponent=Illegal(), seat=1)
    with pytest.raises(CarnacError, match="opponent"):
        env.reset(seed=0)


def test_the_random_opponent_is_the_random_agent_and_replays_per_seed() -> None:
    """One opponent protocol: "random" is the package's random agent (act(state)), re-seeded at
    every reset, so the same seed replays the same game."""
    assert isinstance(make_opponent("random", seed=3), RandomAgent)
    with pytest.raises(CarnacError, match="opponent"):
        make_opponent(42)
    env = CarnacEnv("small", seat=1)
    assert isinstance(env.opponent, RandomAgent)
    first = play(env, 5)
    again = play(env, 5)
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a[0], b[0])


def test_render_ansi() -> None:
    env = CarnacEnv("small", render_mode="ansi")
    env.reset(seed=0)
    text = env.render()
    assert "Supply" in text
    env.close()


# ---------------------------------------------------------------- faults and bad inputs (issue 12)


class Breakable:
    """Plays the first legal action until ``broken``; then raises (or answers ``bad``)."""

    def __init__(self, broken: bool = False, bad=None) -> None:
        self.broken, self.bad = broken, bad

    def act(self, state) -> int:
        if self.broken:
            if self.bad is None:
                raise RuntimeError("the opponent's network crashed")
            return self.bad
        return min(state.legal_actions())


@pytest.mark.parametrize("bad", [None, -5, 10**6])
def test_an_opponent_failure_takes_the_learners_move_back(bad) -> None:
    opponent = Breakable(bad=bad)
    env = CarnacEnv("small", opponent=opponent, seat=0)
    env.reset(seed=0)
    for _ in range(3):
        env.step(int(np.flatnonzero(env.action_masks())[0]))
    opponent.broken = True
    for _ in range(5):  # some learner moves keep the turn (a decline, a tilt): step until the opponent is asked
        before, history, mask = env.game.copy(), list(env.aec.history), env.action_masks()
        try:
            env.step(int(np.flatnonzero(mask)[0]))
        except (RuntimeError, CarnacError) as error:
            assert isinstance(error, RuntimeError if bad is None else CarnacError)
            break
    else:
        pytest.fail("the opponent was never asked to move")
    assert env.game == before and env.aec.history == history
    np.testing.assert_array_equal(env.action_masks(), mask)
    assert env.game.to_act == env.seat  # the learner's turn still, not the opponent's
    opponent.broken = False
    env.step(int(np.flatnonzero(mask)[0]))  # and the game goes on
    assert len(env.aec.history) > len(history) + 1


def test_an_opponent_failure_in_reset_needs_another_reset() -> None:
    opponent = Breakable(broken=True)
    env = CarnacEnv("small", opponent=opponent, seat=1)
    with pytest.raises(RuntimeError):
        env.reset(seed=0)
    with pytest.raises(CarnacError, match="reset"):
        env.step(0)
    opponent.broken = False
    env.reset(seed=0)
    env.step(int(np.flatnonzero(env.action_masks())[0]))


def test_unknown_keywords_are_a_type_error_in_pythons_words() -> None:
    from carnac_env.errors import UnknownOptionError

    with pytest.raises(TypeError, match="got an unexpected keyword argument 'frameskip'") as caught:
        gym.make(ENV_ID, board="small", frameskip=4)
    assert isinstance(caught.value, UnknownOptionError)
    for option in ("opponent", "seat", "observation", "min_dolmen"):
        assert option in str(caught.value)


@pytest.mark.parametrize("moves", ["a1 Rns", 5])
def test_reset_moves_must_be_a_list(moves) -> None:
    env = CarnacEnv("small")
    env.reset(seed=0)
    before = env.game.copy()
    with pytest.raises(CarnacError, match="expected a list of moves"):
        env.reset(options={"moves": moves})
    assert env.game == before


@pytest.mark.parametrize("seed", [-1, "1", 2.0, True])
def test_seed_errors_are_the_packages(seed) -> None:
    env = CarnacEnv("small")
    env.reset(seed=0)
    before = env.game.copy()
    with pytest.raises(CarnacError, match="seed"):
        env.reset(seed=seed)
    assert env.game == before


def test_rgb_array_is_declared_and_works() -> None:
    assert "rgb_array" in CarnacEnv.metadata["render_modes"]
    env = gym.make(ENV_ID, board="small", render_mode="rgb_array")
    env.reset(seed=0)
    frame = env.render()
    assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3


def test_info_has_the_same_keys_and_shapes_at_every_step() -> None:
    env = CarnacEnv("small", seat="random")
    shapes = set()
    for seed in range(4):
        for transition in play(env, seed):
            info = transition[-1]
            shapes.add(
                tuple((key, np.shape(value), np.asarray(value).dtype.kind) for key, value in sorted(info.items()))
            )
            assert set(info) == set(get_type_hints(GymInfo))  # the keys its TypedDict declares
            for key, kind in get_type_hints(GymInfo).items():
                assert isinstance(info[key], kind), (key, info[key])
    assert len(shapes) == 1, shapes


@pytest.mark.parametrize("board", ["small", "medium", "le_menec"])
def test_image_layout_is_an_sb3_image(board: str) -> None:
    env = CarnacEnv(board, observation="image")
    space = env.observation_space
    assert space.dtype == np.uint8 and space.shape[0] == 9 and min(space.shape[1:]) >= 36
    assert (space.low == 0).all() and (space.high == 255).all()
    obs, _info = env.reset(seed=0)
    assert obs in space
    planes = observation_planes(env.game, env.seat)
    scale = env.image_scale
    np.testing.assert_array_equal(obs[:8, ::scale, ::scale], np.moveaxis(planes[..., :8], -1, 0).astype(int) * 255)
    supply = obs[8, ::scale, ::scale]
    assert (supply == 255 * int(planes[0, 0, 8]) // env.board.megaliths).all()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(CarnacEnv(board, observation="image"), skip_render_check=True)


@pytest.mark.parametrize("layout", ["planes", "image"])
def test_mask_in_observation(layout: str) -> None:
    env = CarnacEnv("small", observation=layout, mask_in_observation=True)
    obs, info = env.reset(seed=0)
    assert obs in env.observation_space and set(obs) == {"observation", "action_mask"}
    np.testing.assert_array_equal(obs["action_mask"], info["action_mask"])
    plain = CarnacEnv("small", observation=layout)
    np.testing.assert_array_equal(obs["observation"], plain.reset(seed=0)[0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(CarnacEnv("small", observation=layout, mask_in_observation=True), skip_render_check=True)


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"observation": "pixels"}, "observation"),
        ({"image_scale": 0}, "image_scale"),
        ({"mask_in_observation": 1.5}, "mask"),
    ],
)
def test_bad_layout_arguments(kwargs: dict, fragment: str) -> None:
    with pytest.raises(CarnacError, match=fragment):
        CarnacEnv("small", **kwargs)


from _strategies import ANY_ACTION  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(deadline=None, max_examples=120)
@given(prefix=st.integers(0, 8), action=ANY_ACTION, mode=st.sampled_from(["lose", "raise"]))
def test_fuzz_step_is_a_package_error_or_a_step(prefix: int, action, mode: str) -> None:
    env = CarnacEnv("small", seat="random", illegal_action=mode)
    _, info = env.reset(seed=prefix)
    rng = np.random.default_rng(prefix)
    for _ in range(prefix):
        _, _, done, _, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        if done:
            return
    before, history, mask = env.game.copy(), list(env.aec.history), env.action_masks()
    try:
        _, reward, done, _, info = env.step(action)
    except CarnacError:
        assert env.game == before and env.aec.history == history
        np.testing.assert_array_equal(env.action_masks(), mask)
    else:
        if info["illegal_action"]:
            assert (reward, done) == (-1.0, True) and env.game == before
        else:
            assert len(env.aec.history) > len(history)


@settings(deadline=None, max_examples=120)
@given(
    options=st.one_of(
        st.none(),
        st.integers(),
        st.dictionaries(
            st.sampled_from(["moves", "seat", "colour"]),
            st.one_of(
                st.lists(
                    st.one_of(st.integers(-2, 170), st.sampled_from(["a1 Rns", "b2 Wew", "decline", "q9"])), max_size=3
                ),
                st.text(max_size=4),
                st.integers(-1, 3),
                st.none(),
            ),
            max_size=2,
        ),
    ),
    seed=st.one_of(st.none(), st.integers(-3, 2**64), st.booleans(), st.floats()),
)
def test_fuzz_reset_is_a_package_error_or_a_new_game(options, seed) -> None:
    env = CarnacEnv("small", seat="random")
    env.reset(seed=1)
    env.step(int(np.flatnonzero(env.action_masks())[0]))
    before, seat = env.game.copy(), env.seat
    try:
        env.reset(seed=seed, options=options)
    except CarnacError:
        assert env.game == before and env.seat == seat
    else:
        assert env.game.is_over or env.game.to_act == env.seat
