"""Each RL framework's stock route to Carnac, as its users would type it (docs/frameworks.md).

Every test imports its framework with :func:`_frameworks.require`: it skips where the framework
is not installed (the README's lean test install) and fails instead in CI's framework venvs,
whose ``CARNAC_REQUIRE`` names it (.ci/run).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _frameworks import require
from _paths import ROOT

import carnac_env

ENV_ID = "carnac_env/Carnac-v0"
#: Gymnasium's module:id form: needs no ``import carnac_env`` first
MODULE_ID = "carnac_env:carnac_env/Carnac-v0"


# ---------------------------------------------------------------- Stable-Baselines3


@pytest.mark.parametrize("mask_in_observation", [False, True])
def test_sb3_check_env_passes_without_warnings_on_the_image_layout(mask_in_observation: bool) -> None:
    require("torch")
    env_checker = require("stable_baselines3.common.env_checker")
    import gymnasium as gym

    env = gym.make(MODULE_ID, board="small", observation="image", mask_in_observation=mask_in_observation)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        env_checker.check_env(env)


def test_sb3_stock_cnn_policy_trains_on_make_vec_env_without_warnings() -> None:
    require("torch")
    sb3 = require("stable_baselines3")
    from stable_baselines3.common.env_util import make_vec_env

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        envs = make_vec_env(ENV_ID, n_envs=2, seed=0, env_kwargs={"board": "small", "observation": "image"})
        model = sb3.PPO("CnnPolicy", envs, n_steps=32, batch_size=32, n_epochs=1, seed=0, device="cpu")
        model.learn(64)
    action, _ = model.predict(envs.reset(), deterministic=True)
    assert action.shape == (2,)


def test_sb3_contrib_maskable_ppo_with_stock_policies() -> None:
    require("torch")
    sb3_contrib = require("sb3_contrib")
    import gymnasium as gym

    for policy, options in (
        ("CnnPolicy", {"observation": "image"}),
        ("MultiInputPolicy", {"observation": "image", "mask_in_observation": True}),
    ):
        env = gym.make(ENV_ID, board="small", **options)
        model = sb3_contrib.MaskablePPO(policy, env, n_steps=32, batch_size=32, n_epochs=1, seed=0, device="cpu")
        model.learn(32)
        obs, info = env.reset(seed=1)
        action, _ = model.predict(obs, action_masks=info["action_mask"], deterministic=True)
        assert info["action_mask"][int(action)]


def _tutorial_wrapper(mix_in_gymnasium_env: bool) -> type:
    """The wrapper of PettingZoo's SB3 action-mask tutorial (tutorials/SB3/connect_four/
    sb3_connect_four_action_mask.py), written out again: one agent's view of the AEC game, the
    observation without the mask, the mask from ``action_mask()``; optionally also a gymnasium.Env."""
    import gymnasium as gym
    from pettingzoo.utils import BaseWrapper

    class TutorialWrapper(BaseWrapper):
        def reset(self, seed=None, options=None):
            super().reset(seed, options)
            first = self.possible_agents[0]
            self.observation_space = super().observation_space(first)["observation"]
            self.action_space = super().action_space(first)
            return self.observe(self.agent_selection), {}

        def step(self, action):
            mover = self.agent_selection
            super().step(action)
            reward = self._cumulative_rewards[mover]
            done, cut = self.terminations[mover], self.truncations[mover]
            return self.observe(self.agent_selection), reward, done, cut, self.infos[mover]

        def observe(self, agent):
            return super().observe(agent)["observation"]

        def action_mask(self):
            return super().observe(self.agent_selection)["action_mask"]

    if not mix_in_gymnasium_env:
        return TutorialWrapper
    return type("TutorialWrapper", (TutorialWrapper, gym.Env), {})


def test_pettingzoo_sb3_tutorial_wrapper_runs_as_the_tutorial_has_it() -> None:
    """PettingZoo's SB3 action-mask tutorial under Gymnasium 1.x: its wrapper has gymnasium.Env as a
    second base since PettingZoo 1.25, and MaskablePPO trains on Carnac through it unchanged; a copy
    from before (no second base) is refused by sb3-contrib's ActionMasker (docs/frameworks.md)."""
    require("torch")
    sb3_contrib = require("sb3_contrib")
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
    from sb3_contrib.common.wrappers import ActionMasker

    def mask_fn(env):
        return env.action_mask()

    as_written = _tutorial_wrapper(mix_in_gymnasium_env=False)(carnac_env.env(board="small"))
    as_written.reset(seed=0)
    with pytest.raises(TypeError, match=r"Expected env to be a `gymnasium\.Env`"):
        ActionMasker(as_written, mask_fn)

    env = _tutorial_wrapper(mix_in_gymnasium_env=True)(carnac_env.env(board="small"))
    env.reset(seed=0)
    env = ActionMasker(env, mask_fn)
    model = sb3_contrib.MaskablePPO(MaskableActorCriticPolicy, env, n_steps=64, batch_size=64, n_epochs=1, seed=0)
    model.learn(128)
    obs, _ = env.reset(seed=1)
    for _ in range(30):  # the model's masked choices are legal, whoever is to act
        mask = env.action_masks()  # ActionMasker calls mask_fn
        action, _ = model.predict(obs, action_masks=mask, deterministic=True)
        assert mask[int(action)]
        obs, _, terminated, truncated, _ = env.step(int(action))
        if terminated or truncated:
            obs, _ = env.reset()


# ---------------------------------------------------------------- Tianshou


def test_tianshou_pettingzoo_env_collector_and_replay_buffer() -> None:
    """Tianshou's own PettingZooEnv through its collector into a VectorReplayBuffer, over many
    game ends (the infos once changed shape at the end of a game and broke the buffer)."""
    require("torch")
    require("tianshou")
    from tianshou.algorithm import MARLRandomDiscreteMaskedOffPolicyAlgorithm, MultiAgentOffPolicyAlgorithm
    from tianshou.data import Collector, CollectStats, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv
    from tianshou.env.pettingzoo_env import PettingZooEnv

    def make() -> PettingZooEnv:
        return PettingZooEnv(carnac_env.env(board="small"))

    env = make()
    players = [MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space) for _ in range(2)]
    algorithm = MultiAgentOffPolicyAlgorithm(algorithms=players, env=env)
    envs = DummyVectorEnv([make, make])
    envs.seed(0)
    buffer = VectorReplayBuffer(4000, len(envs))
    collector = Collector[CollectStats](algorithm, envs, buffer)
    collector.reset()
    stats = collector.collect(n_step=1200)
    assert stats.n_collected_episodes >= 10
    assert len(buffer) >= 1200
    info = buffer.info
    assert info.dolmens.shape == (
        len(buffer._meta),
        carnac_env.envs.infos.info_dolmen_slots(carnac_env.core.make_board("small")),
    )
    done = buffer.terminated[: len(buffer)]
    assert done.any() and set(np.unique(info.winner[: len(buffer)][done])) <= {-1, 0, 1}


# ---------------------------------------------------------------- TorchRL


def test_torchrl_gym_env_by_id_and_action_mask() -> None:
    """TorchRL's GymEnv by id (it passes frameskip and drops it on Python's TypeError) with its
    ActionMask transform: random actions from the masked spec are always legal."""
    require("torch")
    require("torchrl")
    from torchrl.envs import ActionMask, GymEnv, TransformedEnv

    GymEnv(ENV_ID, board="small")  # the plain route builds
    # illegal_action="raise": a single illegal action from the masked spec would fail the rollout
    base = GymEnv(ENV_ID, board="small", mask_in_observation=True, illegal_action="raise")
    env = TransformedEnv(base, ActionMask())
    env.set_seed(0)
    rollout = env.rollout(200, break_when_any_done=False)
    assert rollout["next", "done"].any()
    rewards = rollout["next", "reward"][rollout["next", "done"]]
    assert set(rewards.flatten().tolist()) <= {-1.0, 0.0, 1.0}


def test_torchrl_gym_env_reads_the_info_mask() -> None:
    """The default planes observation, with the mask taken from info by TorchRL's reader, given
    its spec (docs/frameworks.md): TorchRL's own check_env_specs passes and a rollout of masked
    random actions is legal throughout."""
    require("torch")
    require("torchrl")
    import torch
    from torchrl.data import Binary
    from torchrl.envs import ActionMask, GymEnv, TransformedEnv
    from torchrl.envs.libs.gym import default_info_dict_reader
    from torchrl.envs.utils import check_env_specs

    base = GymEnv(ENV_ID, board="small", illegal_action="raise")
    actions = base.action_spec.space.n
    reader = default_info_dict_reader(["action_mask"], spec={"action_mask": Binary(actions, dtype=torch.int8)})
    base.set_info_dict_reader(reader)
    env = TransformedEnv(base, ActionMask())
    check_env_specs(env, seed=0)
    env.set_seed(0)
    rollout = env.rollout(100, break_when_any_done=False)
    assert rollout["next", "done"].any()
    assert (
        rollout["action_mask"].shape == (100, actions) and rollout["action_mask"].dtype == torch.int8
    )  # the one mask dtype, as it comes


def test_torchrl_info_reader_without_spec_declares_scalars_upstream() -> None:
    """TorchRL's behaviour, reproduced on Gymnasium's own Taxi-v4 (whose info has an
    "action_mask" of 6): given keys and no spec, default_info_dict_reader declares every key a
    scalar, and check_env_specs fails. docs/frameworks.md says so; if this fails, TorchRL
    changed: update the page."""
    require("torch")
    require("torchrl")
    from torchrl.envs import GymEnv
    from torchrl.envs.libs.gym import default_info_dict_reader
    from torchrl.envs.utils import check_env_specs

    env = GymEnv("Taxi-v4")
    env.set_info_dict_reader(default_info_dict_reader(["action_mask"]))
    assert env.observation_spec["action_mask"].shape == ()
    with pytest.raises(RuntimeError, match=r"must match the size of tensor b \(6\)"):
        check_env_specs(env, seed=0)


def test_torchrl_pettingzoo_wrapper() -> None:
    require("torch")
    require("torchrl")
    from torchrl.envs.libs.pettingzoo import PettingZooWrapper
    from torchrl.envs.utils import check_env_specs

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="PettingZoo in TorchRL is tested")
        env = PettingZooWrapper(env=carnac_env.env(board="small"), use_mask=True, categorical_actions=True)
    check_env_specs(env, seed=0)
    td = env.reset()
    assert td["player_0", "mask"].all() and not td["player_1", "mask"].any()  # Red acts first
    assert td["player_0", "action_mask"].sum() == 4 * 5 * 8  # any square, any orientation


# ---------------------------------------------------------------- RLlib


def test_rllib_module_is_our_own_and_masks_illegal_actions() -> None:
    """examples/rllib_ppo.py's RLModule: current API stack, nothing from RLlib's examples package."""
    require("torch")
    require("ray")
    import sys

    import torch

    sys.path.insert(0, str(ROOT / "examples"))
    try:
        import rllib_ppo
    finally:
        sys.path.pop(0)
    assert not any(name.startswith("ray.rllib.examples") for name in sys.modules)
    from ray.rllib.core.columns import Columns

    env = carnac_env.env(board="small")
    env.reset(seed=0)
    module = rllib_ppo.MaskedPolicyValueModule(
        observation_space=env.observation_space("player_0"),
        action_space=env.action_space("player_0"),
        model_config={"hidden": 16},
    )
    seen = env.observe("player_0")
    batch = {Columns.OBS: {key: torch.as_tensor(value[None]) for key, value in seen.items()}}
    logits = module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS]
    legal = torch.as_tensor(seen["action_mask"] > 0)
    assert logits.shape == (1, env.action_space("player_0").n)
    assert (logits[0][~legal] < -1e30).all() and (logits[0][legal] > -1e30).all()
    assert module.compute_values(batch).shape == (1,)


def test_rllib_observations_wrapper_renames_the_key_and_keeps_the_game() -> None:
    """carnac_env.envs.rllib: the planes under "observations" as float32, the same game (no Ray needed)."""
    from pettingzoo.test import api_test

    import carnac_env.envs.rllib

    for flatten in (False, True):
        api_test(carnac_env.envs.rllib.env(board="small", flatten=flatten), num_cycles=40)
    env = carnac_env.envs.rllib.env(board="small", flatten=True)
    plain = carnac_env.env(board="small")
    space = env.observation_space("player_0")
    assert set(space) == {"observations", "action_mask"}
    assert space["observations"].shape == (5 * 8 * 9,) and space["observations"].dtype == np.float32
    assert space["observations"].high.max() == 28  # the supply plane's bound survives
    assert carnac_env.envs.rllib.env(board="small").observation_space("player_1")["observations"].shape == (5, 8, 9)
    rng = np.random.default_rng(0)
    env.reset(seed=0)
    plain.reset(seed=0)
    for agent in env.agent_iter():
        seen, reward, terminated, truncated, _ = env.last()
        expected, plain_reward, *_ = plain.last()
        assert seen["observations"].dtype == np.float32 and seen["action_mask"].dtype == np.int8
        assert np.array_equal(seen["observations"], expected["observation"].reshape(-1))
        assert np.array_equal(seen["action_mask"], expected["action_mask"])
        assert agent == plain.agent_selection and reward == plain_reward
        action = None if terminated or truncated else int(rng.choice(np.flatnonzero(seen["action_mask"])))
        env.step(action)
        plain.step(action)


def test_rllib_stock_module_needs_the_observations_key() -> None:
    """RLlib's own ActionMaskingTorchRLModule: KeyError on PettingZoo's key, builds on the wrapper's."""
    require("torch")
    require("ray")
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

    import carnac_env.envs.rllib

    env = carnac_env.env(board="small")
    with pytest.raises(KeyError, match="observations"):
        ActionMaskingTorchRLModule(
            observation_space=env.observation_space("player_0"),
            action_space=env.action_space("player_0"),
            model_config={},
        )
    wrapped = carnac_env.envs.rllib.env(board="small", flatten=True)
    module = ActionMaskingTorchRLModule(
        observation_space=wrapped.observation_space("player_0"),
        action_space=wrapped.action_space("player_0"),
        model_config={},
    )
    assert module.action_space.n == 165


@pytest.mark.parametrize(
    ("flatten", "model_config"),
    [(True, {}), (False, {"conv_filters": [[32, [3, 3], 1], [32, [3, 3], 1]]})],
    ids=["flat-default-mlp", "planes-cnn"],
)
def test_rllib_ppo_trains_with_the_stock_action_masking_module(flatten: bool, model_config: dict) -> None:
    """RLlib's PPO with its own ActionMaskingTorchRLModule and no custom RLModule, self-play on
    the raw env (which raises on an illegal action, so one illegal move would fail the run)."""
    require("torch")
    ray = require("ray")
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule
    from ray.tune.registry import register_env

    import carnac_env.envs.rllib

    def make(config: dict) -> PettingZooEnv:
        raw = carnac_env.raw_env(board=config["board"])
        return PettingZooEnv(carnac_env.envs.rllib.RLlibObservations(raw, flatten=config["flatten"]))

    register_env("carnac_raw_rllib", make)
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        config = (
            PPOConfig()
            .environment("carnac_raw_rllib", env_config={"board": "small", "flatten": flatten})
            .env_runners(num_env_runners=0)
            .multi_agent(policies={"shared"}, policy_mapping_fn=lambda agent_id, episode, **kwargs: "shared")
            .rl_module(rl_module_spec=RLModuleSpec(module_class=ActionMaskingTorchRLModule, model_config=model_config))
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
    assert runners["num_episodes_lifetime"] >= 2  # whole games, every move legal (the raw env raises otherwise)


def test_rllib_env_creator_for_register_env() -> None:
    require("torch")
    require("ray")
    import carnac_env.envs.rllib

    env = carnac_env.envs.rllib.multi_agent_env({"board": "petit_menec", "flatten": True})
    observations, _ = env.reset(seed=0)
    assert list(observations) == ["player_0"]
    assert observations["player_0"]["observations"].shape == (6 * 6 * 9,)
    assert env.observation_space["player_1"]["action_mask"].shape == (6 * 6 * 4 + 5,)
