"""RLlib (current API stack): PPO with an action-masking RLModule of our own, through RLlib's PettingZoo wrapper.

    pip install torch --index-url https://download.pytorch.org/whl/cpu   # PyTorch's CPU build
    pip install -e . "ray[rllib]==2.60.0"   # RLlib pins gymnasium==1.2.2: give it a virtual environment of its own
    python examples/rllib_ppo.py                  # a few thousand steps, a minute or two
    CARNAC_SMOKE=1 python examples/rllib_ppo.py   # tiny budgets

RLlib's ``PettingZooEnv`` turns ``carnac_env.env(...)`` into a ``MultiAgentEnv`` as it is;
its observations are Carnac's ``Dict(observation=planes, action_mask=mask)``.
:class:`MaskedPolicyValueModule` below is a small ``TorchRLModule`` with RLlib's
``ValueFunctionAPI`` (what PPO needs): an MLP over the planes (the supply plane scaled to
0..1), a policy head whose logits are pushed to a very negative number where the mask is 0,
and a value head. It imports nothing from RLlib's examples package. One shared module plays
both seats (self-play); the masked logits never let it choose an illegal action.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

import carnac_env

try:
    import ray
    import torch
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.rl_module.apis import ValueFunctionAPI
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.core.rl_module.torch import TorchRLModule
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
    from ray.tune.registry import register_env
    from torch import nn
except ImportError as err:  # pragma: no cover - depends on the install
    raise SystemExit(f"this example needs RLlib and PyTorch: pip install 'ray[rllib]' torch ({err})") from None

SMOKE = os.environ.get("CARNAC_SMOKE", "") not in ("", "0")


class MaskedPolicyValueModule(TorchRLModule, ValueFunctionAPI):
    """Policy and value from Carnac's ``{"observation", "action_mask"}`` observation.

    ``model_config``: ``hidden`` (units of the shared layer, default 256).
    """

    def setup(self) -> None:
        planes = self.observation_space["observation"]
        rows, cols, depth = planes.shape
        hidden = int(self.model_config.get("hidden", 256))
        scale = torch.ones(rows, cols, depth)
        scale[..., -1] = 1.0 / float(planes.high.max())  # the supply plane: 0..megaliths
        self.register_buffer("scale", scale)
        self.trunk = nn.Sequential(nn.Flatten(), nn.Linear(rows * cols * depth, hidden), nn.ReLU())
        self.policy_head = nn.Linear(hidden, self.action_space.n)
        self.value_head = nn.Linear(hidden, 1)

    def _features(self, batch: dict[str, Any]) -> torch.Tensor:
        return self.trunk(batch[Columns.OBS]["observation"].float() * self.scale)

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        features = self._features(batch)
        logits = self.policy_head(features)
        legal = batch[Columns.OBS]["action_mask"] > 0
        logits = logits.masked_fill(~legal, torch.finfo(logits.dtype).min / 2)
        return {Columns.ACTION_DIST_INPUTS: logits, Columns.EMBEDDINGS: features}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        features = self._features(batch) if embeddings is None else embeddings
        return self.value_head(features).squeeze(-1)


def make_env(config: dict[str, Any]) -> PettingZooEnv:
    """RLlib's env factory: the Carnac AEC env in RLlib's PettingZoo wrapper."""
    return PettingZooEnv(carnac_env.env(board=config.get("board", "small")))


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
                module_class=MaskedPolicyValueModule, model_config={"hidden": 64 if SMOKE else 256}
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
