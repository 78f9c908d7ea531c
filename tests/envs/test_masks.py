"""One mask dtype: every mask the package hands out is int8 0/1 (docs/environment.md), and each
consumer takes it as it comes: Gymnasium's ``Space.sample(mask=...)``, sb3-contrib's
MaskablePPO, Tianshou's PettingZooEnv; TorchRL's ``MaskedCategorical`` (bool only) through the
one documented cast (docs/frameworks.md).

The framework tests import their framework with :func:`_frameworks.require`, so CI runs each in
the entry that has it (.ci/run).
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from _frameworks import require

import carnac_env

ENV_ID = "carnac_env/Carnac-v0"


def every_mask() -> dict[str, tuple[gym.spaces.Discrete, np.ndarray]]:
    """Each mask the package hands out on the small board, beside the action space it masks."""
    masks = {}
    aec = carnac_env.env(board="small")
    aec.reset(seed=0)
    agent = aec.agent_selection
    masks["aec observation"] = (aec.action_space(agent), aec.observe(agent)["action_mask"])
    env = gym.make(ENV_ID, board="small")
    _, info = env.reset(seed=0)
    masks["gym info"] = (env.action_space, info["action_mask"])
    masks["gym action_masks()"] = (env.action_space, env.unwrapped.action_masks())
    boxed = gym.make(ENV_ID, board="small", mask_in_observation=True)
    obs, _ = boxed.reset(seed=0)
    masks["gym observation"] = (boxed.action_space, obs["action_mask"])
    envs = gym.make_vec(ENV_ID, num_envs=2, board="small", mask_in_observation=True)
    obs, infos = envs.reset(seed=0)
    masks["vector observation"] = (envs.single_action_space, obs["action_mask"][0])
    masks["vector info"] = (envs.single_action_space, infos["action_mask"][1])
    masks["vector action_masks()"] = (envs.single_action_space, envs.action_masks()[0])
    return masks


@pytest.mark.parametrize("where", sorted(every_mask()))
def test_every_mask_is_int8_and_gymnasium_samples_with_it(where: str) -> None:
    space, mask = every_mask()[where]
    assert mask.dtype == np.int8 and mask.shape == (space.n,) and set(np.unique(mask)) <= {0, 1}
    for _ in range(20):
        assert mask[space.sample(mask=mask)] == 1


def test_gymnasium_samples_through_a_game_and_after_the_end() -> None:
    """``env.action_space.sample(info["action_mask"])``, Gymnasium's own idiom, plays whole games."""
    env = gym.make(ENV_ID, board="small")
    env.action_space.seed(0)
    _, info = env.reset(seed=0)
    for _ in range(2):
        done = False
        while not done:
            _, _, done, _, info = env.step(env.action_space.sample(info["action_mask"]))
        assert info["action_mask"].all() and env.action_space.sample(info["action_mask"]) in env.action_space
        _, info = env.reset()


def test_vector_masks_sample_the_vector_action_space() -> None:
    envs = gym.make_vec(ENV_ID, num_envs=3, board="small")
    envs.action_space.seed(0)
    _, infos = envs.reset(seed=0)
    for _ in range(30):
        actions = envs.action_space.sample(mask=tuple(infos["action_mask"]))
        assert infos["action_mask"][np.arange(3), actions].all()
        _, _, _, _, infos = envs.step(actions)


def test_sb3_contrib_maskable_ppo_predicts_with_masks_as_they_come() -> None:
    require("torch")
    sb3_contrib = require("sb3_contrib")
    env = gym.make(ENV_ID, board="small", observation="image")
    model = sb3_contrib.MaskablePPO("CnnPolicy", env, n_steps=16, batch_size=16, n_epochs=1, seed=0, device="cpu")
    obs, info = env.reset(seed=1)
    for mask in (info["action_mask"], env.unwrapped.action_masks()):
        action, _ = model.predict(obs, action_masks=mask, deterministic=True)
        assert mask[int(action)] == 1
    envs = gym.make_vec(ENV_ID, num_envs=2, board="small", observation="image")
    obs, infos = envs.reset(seed=0)
    for masks in (infos["action_mask"], envs.action_masks()):
        actions, _ = model.predict(obs, action_masks=masks, deterministic=True)
        assert masks[np.arange(2), actions].all()


def test_torchrl_masked_categorical_needs_the_documented_cast() -> None:
    """TorchRL's MaskedCategorical takes bool masks only; the int8 mask fails as it comes, and one
    ``DTypeCastTransform`` (docs/frameworks.md) makes the masked policy run as written."""
    torch = require("torch")
    require("torchrl")
    from tensordict.nn import TensorDictModule
    from torchrl.envs import DTypeCastTransform, GymEnv, TransformedEnv
    from torchrl.modules import MaskedCategorical, ProbabilisticActor

    base = GymEnv(ENV_ID, board="small", mask_in_observation=True, categorical_action_encoding=True)
    raw = base.reset()["action_mask"]
    assert raw.dtype == torch.int8
    with pytest.raises(RuntimeError, match="boolean masks"):
        MaskedCategorical(logits=torch.zeros(raw.shape), mask=raw).sample()

    env = TransformedEnv(base, DTypeCastTransform(torch.int8, torch.bool, in_keys=["action_mask"]))
    actions = env.action_spec.space.n
    logits = TensorDictModule(
        lambda planes: torch.zeros(*planes.shape[:-3], actions), in_keys=["observation"], out_keys=["logits"]
    )
    policy = ProbabilisticActor(
        logits,
        in_keys={"logits": "logits", "mask": "action_mask"},
        out_keys=["action"],
        distribution_class=MaskedCategorical,
    )
    rollout = env.rollout(40, policy, break_when_any_done=False)
    assert rollout["action_mask"].dtype == torch.bool
    assert rollout["action_mask"].gather(-1, rollout["action"][..., None]).all()  # every action legal


def test_tianshou_pettingzoo_env_takes_the_mask_as_it_comes() -> None:
    require("torch")
    require("tianshou")
    from tianshou.env.pettingzoo_env import PettingZooEnv

    env = PettingZooEnv(carnac_env.env(board="small"))
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(40):
        mask = np.asarray(obs["mask"])
        assert mask.shape == (env.action_space.n,) and mask.any()
        obs, _, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(mask))))
        if terminated or truncated:
            obs, _ = env.reset()
