"""RLlib's OpenSpiel route: ``OpenSpielEnv(pyspiel.load_game("python_carnac"))``, as in RLlib's own
``examples/multi_agent/self_play_with_open_spiel.py`` (docs/openspiel.md, docs/frameworks.md).

RLlib's wrapper publishes no action mask: on an illegal action it catches ``pyspiel.SpielError``,
plays a random legal move instead and gives the player -0.1. ``python_carnac`` raises an error that
is both ``pyspiel.SpielError`` and carnac_env's ``IllegalActionError``, so the route runs. CI's rllib
entry has Ray and open_spiel (.ci/frameworks/rllib.txt); elsewhere these tests skip.
"""

from __future__ import annotations

import numpy as np
import pytest
from _frameworks import require

from carnac_env.core import decline_action


def _route():
    """pyspiel with python_carnac registered, and RLlib's OpenSpielEnv."""
    pyspiel = require("pyspiel", "the openspiel extra")
    require("ray")
    from ray.rllib.env.wrappers.open_spiel import OpenSpielEnv

    import carnac_env.envs.openspiel  # noqa: F401  (registers python_carnac)

    return pyspiel, OpenSpielEnv


def test_open_spiel_env_replaces_an_illegal_action_with_a_legal_one_and_a_penalty() -> None:
    pyspiel, OpenSpielEnv = _route()
    env = OpenSpielEnv(pyspiel.load_game("python_carnac"))  # the medium board, as RLlib's script loads it
    observations, _ = env.reset(seed=0)
    assert list(observations) == [0]  # Red first
    assert observations[0].shape == (7 * 10 * 9,) and observations[0].dtype == np.float32
    assert env.action_space[0].n == 7 * 10 * 4 + 5
    before = env.state.history()
    declined = decline_action(env.state.game_state.board)  # no megalith awaits a decision: illegal
    observations, rewards, terminateds, _, _ = env.step({0: declined})
    assert rewards == {0: -0.1, 1: 0.0}  # the wrapper's penalty; the game went on
    assert not terminateds["__all__"]
    history = env.state.history()
    assert history[: len(before)] == before and len(history) == len(before) + 1
    assert history[-1] != declined and history[-1] < decline_action(env.state.game_state.board)  # a legal placement
    assert list(observations) == [env.state.current_player()]


def test_open_spiel_env_plays_whole_games_of_random_actions() -> None:
    """Uniform actions over all of them (RLlib's random module): most are illegal, every game ends."""
    pyspiel, OpenSpielEnv = _route()
    env = OpenSpielEnv(pyspiel.load_game("python_carnac", {"board": "small"}))
    rng = np.random.default_rng(0)
    for _ in range(3):
        observations, _ = env.reset()
        moves = penalties = 0
        while True:
            (player,) = observations
            observations, rewards, terminateds, _, _ = env.step({player: int(rng.integers(env.action_space[player].n))})
            moves += 1
            penalties += rewards[player] < 0 and not terminateds["__all__"]
            if terminateds["__all__"]:
                break
        returns = env.state.returns()
        assert returns in ([1.0, -1.0], [-1.0, 1.0], [0.0, 0.0])
        assert moves <= 2 * env.state.game_state.board.megaliths and penalties > 0


def test_rllib_ppo_iteration_on_the_open_spiel_route() -> None:
    """One PPO iteration of RLlib's self_play_with_open_spiel.py setup on python_carnac: a "main"
    module learning against RLlib's RandomRLModule, seats swapping between episodes."""
    require("torch")
    ray = require("ray")
    pyspiel, OpenSpielEnv = _route()
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.random_rlm import RandomRLModule
    from ray.tune.registry import register_env

    register_env("open_spiel_env", lambda _: OpenSpielEnv(pyspiel.load_game("python_carnac", {"board": "small"})))

    def agent_to_module_mapping_fn(agent_id, episode, **kwargs):
        return "main" if hash(episode.id_) % 2 == agent_id else "random"

    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        config = (
            PPOConfig()
            .environment("open_spiel_env")
            .env_runners(num_env_runners=0, num_envs_per_env_runner=1)
            .multi_agent(
                policies={"main", "random"}, policy_mapping_fn=agent_to_module_mapping_fn, policies_to_train=["main"]
            )
            .rl_module(
                model_config=DefaultModelConfig(fcnet_hiddens=[64, 64]),
                rl_module_spec=MultiRLModuleSpec(
                    rl_module_specs={"main": RLModuleSpec(), "random": RLModuleSpec(module_class=RandomRLModule)}
                ),
            )
            .training(train_batch_size_per_learner=200, minibatch_size=100, num_epochs=1)
            .debugging(seed=0)
        )
        algorithm = config.build_algo()
        result = algorithm.train()
        algorithm.stop()
    finally:
        ray.shutdown()
    runners = result["env_runners"]
    assert runners["num_env_steps_sampled_lifetime"] >= 200
    assert runners["num_episodes_lifetime"] >= 2  # whole games: the illegal actions did not stop the runner
    assert "main" in result["learners"]


if __name__ == "__main__":  # pragma: no cover
    pytest.main([__file__, "-q"])
