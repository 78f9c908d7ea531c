"""carnac_env.envs.openspiel: Carnac as the OpenSpiel Python game ``python_carnac`` (docs/openspiel.md).

OpenSpiel's own conformance test, its MCTSBot through ``evaluate_bots``, clones and the two
serialisations, a lockstep game against the PettingZoo env, and Shimmy's round trip back to
PettingZoo through PettingZoo's api_test. Skips without open_spiel (CI's openspiel entry has it).
"""

from __future__ import annotations

import importlib
import json
import pickle
import warnings

import numpy as np
import pytest
from _frameworks import require

import carnac_env
from carnac_env.core import BOARDS, GameState, decline_action, decode, observation_planes
from carnac_env.core.actions import tilt_base
from carnac_env.errors import CarnacError, IllegalActionError, RecordError

pyspiel = require("pyspiel", "the openspiel extra")
cos = importlib.import_module("carnac_env.envs.openspiel")  # registers python_carnac


def _play(state, actions) -> None:
    for action in actions:
        state.apply_action(action)


def _random_actions(game, seed: int) -> list[int]:
    """A random game's actions, drawn from OpenSpiel's legal actions."""
    rng = np.random.default_rng(seed)
    state = game.new_initial_state()
    while not state.is_terminal():
        state.apply_action(int(rng.choice(state.legal_actions())))
    return state.history()


# --------------------------------------------------------------------------- the game OpenSpiel sees
@pytest.mark.parametrize("name", sorted(BOARDS))
def test_random_sim_test_on_every_board(name: str) -> None:
    """OpenSpiel's own API test (legal-action masks, observations, serialisation, returns)."""
    for last_tilt in (True, False):
        game = pyspiel.load_game("python_carnac", {"board": name, "last_tilt": last_tilt})
        pyspiel.random_sim_test(game, num_sims=2, serialize=True, verbose=False)


def test_game_type_and_info_say_what_the_game_is() -> None:
    game = pyspiel.load_game("python_carnac", {"board": "small"})
    kind = game.get_type()
    assert kind.dynamics == pyspiel.GameType.Dynamics.SEQUENTIAL
    assert kind.chance_mode == pyspiel.GameType.ChanceMode.DETERMINISTIC
    assert kind.information == pyspiel.GameType.Information.PERFECT_INFORMATION
    assert kind.utility == pyspiel.GameType.Utility.ZERO_SUM
    assert kind.reward_model == pyspiel.GameType.RewardModel.TERMINAL
    assert game.num_players() == 2
    assert game.num_distinct_actions() == BOARDS["small"].num_actions == 5 * 8 * 4 + 5
    assert game.max_game_length() == 2 * 28
    assert (game.min_utility(), game.max_utility(), game.utility_sum()) == (-1.0, 1.0, 0.0)
    assert game.observation_tensor_shape() == [5, 8, 9]
    assert str(pyspiel.load_game("python_carnac")) == "python_carnac(board=medium,last_tilt=True)"


def test_max_game_length_is_reached_by_declining_every_megalith() -> None:
    """Two actions per megalith at most (a placement and one tilt or decline), and declining
    every tiltable placement reaches it."""
    game = pyspiel.load_game("python_carnac", {"board": "petit_menec"})
    state = game.new_initial_state()
    decline = decline_action(game.board)
    while not state.is_terminal():
        actions = state.legal_actions()
        if decline in actions:
            state.apply_action(decline)
            continue
        tiltable = [a for a in actions if state.game_state.tilts_after_place(*decode(game.board, a)[1:3])]
        state.apply_action(tiltable[0] if tiltable else actions[0])
    assert len(state.history()) == game.max_game_length()  # every megalith placed, then declined


def test_string_parameters_and_last_tilt() -> None:
    game = pyspiel.load_game("python_carnac(board=petit_menec,last_tilt=false)")
    assert game.board == carnac_env.make_board("petit_menec", last_tilt=False)
    # Without the last tilt the game ends on the final placement: never on a tilt or decline.
    for seed in range(5):
        history = _random_actions(game, seed)
        assert history[-1] < tilt_base(game.board.squares)


@pytest.mark.parametrize(
    ("params", "error", "fragment"),
    [
        ({"board": "tiny"}, CarnacError, "expected one of 'small'"),
        ({"board": "custom"}, CarnacError, "board='custom'"),
        ({"last_tilt": 1}, pyspiel.SpielError, "last_tilt"),
        ({"rows": 3}, pyspiel.SpielError, "Unknown parameter 'rows'"),
    ],
)
def test_bad_parameters_are_refused_by_name(params: dict, error: type, fragment: str) -> None:
    with pytest.raises(error, match=fragment):
        pyspiel.load_game("python_carnac", params)


def test_parameter_check_refuses_what_openspiel_would_not_see() -> None:
    """The Python-side check, for callers that build CarnacGame directly."""
    with pytest.raises(CarnacError, match="unknown python_carnac parameter"):
        cos.CarnacGame({"megaliths": 3})
    with pytest.raises(CarnacError, match="last_tilt=1; expected True or False"):
        cos.CarnacGame({"last_tilt": 1})


# --------------------------------------------------------------------------- the rules, through OpenSpiel
def test_turn_order_is_the_rules_not_alternation() -> None:
    """After a decline the placer acts again; after a tilt the tilter places next."""
    game = pyspiel.load_game("python_carnac", {"board": "medium"})
    state = game.new_initial_state()
    board = game.board
    parse = carnac_env.core.parse_action
    assert state.current_player() == 0
    state.apply_action(parse(board, "d4 Rns", 0))
    assert state.current_player() == 1
    state.apply_action(parse(board, "decline", 1))
    assert state.current_player() == 0  # Red again: two Red actions in a row
    state.apply_action(parse(board, "h6 Rns", 0))
    assert state.current_player() == 1
    state.apply_action(parse(board, "tilt N", 1))
    assert state.current_player() == 1  # White tilted and now places
    assert all(a < tilt_base(board.squares) for a in state.legal_actions())


@pytest.mark.parametrize("name", ["small", "petit_menec", "kerlescan"])
def test_lockstep_with_the_pettingzoo_env(name: str) -> None:
    """Same actions, same game: player to act, legal actions, both players' observation
    tensors (the PettingZoo planes, as float32) and the final returns."""
    game = pyspiel.load_game("python_carnac", {"board": name})
    env = carnac_env.raw_env(board=name)
    for seed in range(3):
        state = game.new_initial_state()
        env.reset()
        rng = np.random.default_rng(seed)
        while not state.is_terminal():
            player = state.current_player()
            assert env.agent_selection == f"player_{player}"
            mask = env.observe(env.agent_selection)["action_mask"]
            assert state.legal_actions() == np.flatnonzero(mask).tolist()
            assert state.legal_actions_mask() == mask.tolist()
            for seen in (0, 1):
                tensor = np.asarray(state.observation_tensor(seen), np.float32).reshape(game.observation_tensor_shape())
                assert np.array_equal(tensor, env.observe(f"player_{seen}")["observation"])
            action = int(rng.choice(state.legal_actions()))
            state.apply_action(action)
            env.step(action)
        assert env.terminations == {"player_0": True, "player_1": True}
        assert state.returns() == [env._cumulative_rewards["player_0"], env._cumulative_rewards["player_1"]]
        assert state.rewards() == state.returns()


def test_returns_follow_the_result_including_draws() -> None:
    game = pyspiel.load_game("python_carnac", {"board": "petit_menec"})
    seen = set()
    for seed in range(60):
        core = GameState(game.board)
        state = game.new_initial_state()
        for action in _random_actions(game, seed):
            core.apply(action)
            state.apply_action(action)
        winner = core.result().winner
        seen.add(winner)
        expected = [0.0, 0.0] if winner is None else [1.0, -1.0] if winner == 0 else [-1.0, 1.0]
        assert state.returns() == expected
        assert sum(state.returns()) == 0
    assert seen == {0, 1, None}  # wins for each and a draw among 60 random games


def test_observation_tensor_is_the_planes_of_either_player() -> None:
    game = pyspiel.load_game("python_carnac", {"board": "small"})
    state = game.new_initial_state()
    _play(state, _random_actions(game, 3)[:11])
    for player in (0, 1):
        tensor = np.array(state.observation_tensor(player), dtype=np.float32).reshape(5, 8, 9)
        assert np.array_equal(tensor, observation_planes(state.game_state, player))
    assert state.observation_string(0) == state.observation_string(1) == str(state)
    assert "Supply" in str(state)
    assert state.information_state_string(0) == state.information_state_string(1)


def test_illegal_action_is_refused_and_changes_nothing() -> None:
    game = pyspiel.load_game("python_carnac", {"board": "small"})
    state = game.new_initial_state()
    state.apply_action(0)
    before = (state.history(), state.game_state.copy())
    with pytest.raises(IllegalActionError, match=r"is illegal: .*must first tilt or decline"):
        state.apply_action(4)  # a placement while a tilt is pending
    assert (state.history(), state.game_state) == before
    assert state.action_to_string(0, 0) == "a1 Rns"


@pytest.mark.parametrize("action", [4, 10_000])  # a placement while a tilt is pending; outside the game
def test_illegal_action_is_both_a_spiel_error_and_ours(action: int) -> None:
    """OpenSpiel's tools catch ``pyspiel.SpielError`` for an illegal move (RLlib's OpenSpielEnv then
    plays a random legal one); carnac_env's callers catch IllegalActionError. One error is both."""
    state = pyspiel.load_game("python_carnac", {"board": "small"}).new_initial_state()
    state.apply_action(0)
    before = (state.history(), state.game_state.copy())
    with pytest.raises(pyspiel.SpielError) as caught:
        state.apply_action(action)
    assert isinstance(caught.value, IllegalActionError) and isinstance(caught.value, ValueError)
    assert type(caught.value) is cos.SpielIllegalActionError
    assert "is illegal" in str(caught.value)
    assert (state.history(), state.game_state) == before
    try:  # the shape of RLlib's OpenSpielEnv.step
        state.apply_action(action)
    except pyspiel.SpielError:
        state.apply_action(int(np.random.default_rng(0).choice(state.legal_actions())))
    assert len(state.history()) == 2


# --------------------------------------------------------------------------- clones and serialisation
def test_clone_is_independent_and_shares_the_board() -> None:
    game = pyspiel.load_game("python_carnac", {"board": "small"})
    state = game.new_initial_state()
    actions = _random_actions(game, 1)
    _play(state, actions[:10])
    clone = state.clone()
    assert clone.history() == state.history() and clone.game_state == state.game_state
    assert clone.game_state is not state.game_state
    assert clone.game_state.board is state.game_state.board  # the geometry is not copied
    _play(clone, actions[10:])
    assert clone.is_terminal() and not state.is_terminal()
    assert state.history() == actions[:10]


def test_openspiel_serialisation_and_pickle_round_trip() -> None:
    game = pyspiel.load_game("python_carnac", {"board": "kerlescan", "last_tilt": False})
    state = game.new_initial_state()
    _play(state, _random_actions(game, 2)[:17])
    text = pyspiel.serialize_game_and_state(game, state)
    game2, state2 = pyspiel.deserialize_game_and_state(text)
    assert str(game2) == str(game) and state2.history() == state.history()
    assert state2.game_state == state.game_state and str(state2) == str(state)
    state3 = pickle.loads(pickle.dumps(state))
    assert state3.game_state == state.game_state


def test_json_record_round_trip_replays_through_the_rules() -> None:
    game = pyspiel.load_game("python_carnac", {"board": "small"})
    for cut in (0, 9, None):
        state = game.new_initial_state()
        actions = _random_actions(game, 5)
        _play(state, actions[:cut])
        record = json.loads(state.to_json())
        assert record["format"] == "carnac-record" and record["board"] == "small"
        again = game.new_initial_state(record)
        assert again.history() == state.history() and again.game_state == state.game_state
        assert (record["result"] is None) == (not state.is_terminal())
        assert game.new_initial_state(state.to_struct()).history() == state.history()


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        (lambda r: r.update(moves=["a1 Rns", "a1 Wns"]), "move 2"),
        (lambda r: r.update(board="medium", rules=carnac_env.make_board("medium").rules()), "this game is"),
        (lambda r: r.update(format="pickle"), "format"),
        (lambda r: r["result"].update(winner=1 - r["result"]["winner"]), "differs from the replayed result"),
    ],
)
def test_bad_json_records_are_refused(change, fragment: str) -> None:
    game = pyspiel.load_game("python_carnac", {"board": "small"})
    state = game.new_initial_state()
    for seed in range(20):  # a decisive game, for the last case
        state = game.new_initial_state()
        _play(state, _random_actions(game, seed))
        if state.returns()[0]:
            break
    record = json.loads(state.to_json())
    change(record)
    with pytest.raises(RecordError, match=fragment):
        game.new_initial_state(record)


# --------------------------------------------------------------------------- OpenSpiel's algorithms
def test_mcts_bot_plays_through_evaluate_bots_and_beats_random_play() -> None:
    from open_spiel.python.algorithms import evaluate_bots, mcts
    from open_spiel.python.bots.uniform_random import UniformRandomBot

    game = pyspiel.load_game("python_carnac", {"board": "petit_menec"})
    rng = np.random.RandomState(0)
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=rng)
    wins = 0
    for game_number in range(4):
        seat = game_number % 2
        bots = [UniformRandomBot(p, rng) for p in (0, 1)]
        bots[seat] = mcts.MCTSBot(game, 2, 60, evaluator, random_state=rng, solve=True)
        returns = evaluate_bots.evaluate_bots(game.new_initial_state(), bots, rng)
        assert sum(returns) == 0 and set(returns) <= {-1.0, 0.0, 1.0}
        wins += returns[seat] == 1
    assert wins >= 3


# --------------------------------------------------------------------------- Shimmy, back to PettingZoo
def test_shimmy_round_trip_passes_pettingzoo_api_test() -> None:
    require("shimmy")
    from pettingzoo.test import api_test
    from shimmy import OpenSpielCompatibilityV0

    env = OpenSpielCompatibilityV0(game_name="python_carnac", config={"board": "small"})
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Agent's m.* observation space value is")  # Shimmy's -inf..inf Box
        api_test(env, num_cycles=200)
    env.reset(seed=0)
    assert env.observation_space("player_0").shape == (5, 8, 9)
    obs = env.observe("player_0")
    assert np.array_equal(obs, observation_planes(GameState("small"), 0))
    assert np.array_equal(np.flatnonzero(env.infos["player_0"]["action_mask"]), GameState("small").legal_actions())


def test_shimmy_env_argument_loses_the_parameters_on_reset() -> None:
    """Shimmy's bug, documented in docs/openspiel.md: given ``env=`` a loaded game,
    ``reset`` reloads the game by name with ``config`` (None), so the parameters fall back to
    the defaults. If this fails, Shimmy fixed it: update the page."""
    require("shimmy")
    from shimmy import OpenSpielCompatibilityV0

    env = OpenSpielCompatibilityV0(env=pyspiel.load_game("python_carnac", {"board": "small"}))
    assert env.observation_space("player_0").shape == (5, 8, 9)
    env.reset(seed=0)
    assert env.observation_space("player_0").shape == (7, 10, 9)  # the medium board, the default


def test_python_alpha_beta_and_rl_environment_run_on_python_carnac() -> None:
    """OpenSpiel's Python algorithms run on a Python game (docs/openspiel.md): alpha-beta to a depth
    with a value function, and rl_environment's loop through a whole game."""
    from open_spiel.python import rl_environment
    from open_spiel.python.algorithms import minimax

    game = pyspiel.load_game("python_carnac", {"board": "petit_menec"})
    state = game.new_initial_state()
    value, action = minimax.alpha_beta_search(
        game, state, value_function=lambda s: 0.0, maximum_depth=2, maximizing_player_id=0
    )
    assert value == 0.0 and action in state.legal_actions()
    env = rl_environment.Environment(game)
    step, rng = env.reset(), np.random.default_rng(0)
    while not step.last():
        player = step.observations["current_player"]
        step = env.step([int(rng.choice(step.observations["legal_actions"][player]))])
    assert sorted(step.rewards) in ([-1.0, 1.0], [0.0, 0.0])
