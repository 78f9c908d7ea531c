"""RLlib (new API stack): PPO with its action-masking RLModule, through its PettingZoo wrapper.

    pip install -e . "ray[rllib]" torch      # RLlib pins gymnasium==1.2.2; use its own virtual environment
    python examples/rllib_ppo.py                  # a few thousand steps, a minute or two
    CARNAC_SMOKE=1 python examples/rllib_ppo.py   # tiny budgets

RLlib's example ``ActionMaskingTorchRLModule`` reads a ``Dict`` observation with the keys
``"observations"`` (what the network sees) and ``"action_mask"``; Carnac's AEC env names
the first one ``"observation"`` (PettingZoo's convention). :class:`RLlibObservation` is a
small PettingZoo wrapper that renames the key (and flattens the planes to float32, which
RLlib's default MLP encoder expects). RLlib's ``PettingZooEnv`` then turns the AEC env into
a ``MultiAgentEnv``; one shared policy plays both seats (self-play), and the masked logits
never let it choose an illegal action.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

import numpy as np

import carnac_env

try:
    import gymnasium as gym
    import ray
    from pettingzoo.utils.wrappers import BaseWrapper
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule
    from ray.tune.registry import register_env
except ImportError as err:  # pragma: no cover - depends on the install
    raise SystemExit(f"this example needs RLlib and PyTorch: pip install 'ray[rllib]' torch ({err})") from None

SMOKE = os.environ.get("CARNAC_SMOKE", "") not in ("", "0")


class RLlibObservation(BaseWrapper):
    """Carnac's AEC env with the observation RLlib's masking module expects.

    ``{"observations": float32 (rows*cols*9,), "action_mask": float32 (rows*cols*4+5,)}``;
    the supply plane is divided by the board's megaliths so every input lies in 0..1.
    """

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        board = env.unwrapped.game.board
        rows, cols, planes = env.observation_space(env.possible_agents[0])["observation"].shape
        self._scale = np.ones((rows, cols, planes), dtype=np.float32)
        self._scale[..., -1] = 1.0 / board.megaliths
        self._space = gym.spaces.Dict(
            {
                "observations": gym.spaces.Box(0.0, 1.0, (rows * cols * planes,), np.float32),
                "action_mask": gym.spaces.Box(0.0, 1.0, (board.num_actions,), np.float32),
            }
        )

    def observation_space(self, agent: str) -> gym.spaces.Dict:
        return self._space

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seen = super().observe(agent)
        return {
            "observations": (seen["observation"] * self._scale).reshape(-1),
            "action_mask": seen["action_mask"].astype(np.float32),
        }


def make_env(config: dict[str, Any]) -> PettingZooEnv:
    """RLlib's env factory: the renamed Carnac AEC env in RLlib's PettingZoo wrapper."""
    return PettingZooEnv(RLlibObservation(carnac_env.env(board=config.get("board", "small"))))


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description="RLlib PPO with action masking on Carnac (self-play)")
    p.add_argument("--board", default="small")
    p.add_argument("--iterations", type=int, default=1 if SMOKE else 4)
    p.add_argument("--batch", type=int, default=200 if SMOKE else 1000, help="env steps per training iteration")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)

    register_env("carnac", make_env)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    config = (
        PPOConfig()
        .environment("carnac", env_config={"board": args.board})
        .env_runners(num_env_runners=0)  # sample in this process: fastest on a small machine
        .multi_agent(policies={"shared"}, policy_mapping_fn=lambda agent_id, episode, **kwargs: "shared")
        .rl_module(
            rl_module_spec=RLModuleSpec(
                module_class=ActionMaskingTorchRLModule,
                model_config={"head_fcnet_hiddens": [64 if SMOKE else 256], "head_fcnet_activation": "relu"},
            )
        )
        .training(train_batch_size_per_learner=args.batch, minibatch_size=min(128, args.batch), num_epochs=2)
        .debugging(seed=args.seed)
    )
    algorithm = config.build_algo()
    for i in range(args.iterations):
        result = algorithm.train()
        runners = result.get("env_runners", {})
        print(
            f"iteration {i + 1}: {runners.get('num_env_steps_sampled_lifetime', '?')} env steps, "
            f"{runners.get('num_episodes_lifetime', '?')} games, "
            f"mean episode length {runners.get('episode_len_mean', float('nan')):.1f}"
        )
    algorithm.stop()
    ray.shutdown()


if __name__ == "__main__":
    main()
