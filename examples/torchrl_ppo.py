"""TorchRL: a masked policy-gradient learner against a random player, via ``PettingZooWrapper``.

    pip install -e ".[train]" torchrl
    python examples/torchrl_ppo.py                  # a few thousand steps, about a minute
    CARNAC_SMOKE=1 python examples/torchrl_ppo.py   # tiny budgets

TorchRL's :class:`~torchrl.envs.libs.pettingzoo.PettingZooWrapper` (``use_mask=True``, as an
AEC env requires) puts each player in its own group: ``("player_0", "observation",
"observation")`` holds the planes, ``("player_0", "action_mask")`` the legal actions and
``("player_0", "mask")`` whether that player acts on this step. The learner (Red,
``player_0``) samples from a :class:`~torchrl.modules.MaskedCategorical` over its mask;
White samples uniformly from its own mask. A ``Collector`` gathers frames.

The update is a clipped PPO step on the learner's own decisions, each scored by the final
result of its game (+1/-1/0): Carnac's turns do not strictly alternate, and the final
reward may arrive on a step where White acts, so the per-decision return is read from the
end of the game rather than from the step's own reward.
"""

from __future__ import annotations

import argparse
import os
import warnings

import numpy as np

import carnac_env

try:
    import torch
    from tensordict.nn import TensorDictModule, TensorDictSequential
    from torch import nn
    from torchrl.collectors import Collector
    from torchrl.envs.libs.pettingzoo import PettingZooWrapper
    from torchrl.modules import MaskedCategorical, ProbabilisticActor
except ImportError as err:  # pragma: no cover - depends on the install
    raise SystemExit(f"this example needs PyTorch and TorchRL: pip install torchrl ({err})") from None

# TorchRL names the PettingZoo version it was tested with; the wrapper works with ours (1.24+).
warnings.filterwarnings("ignore", message="PettingZoo in TorchRL is tested")
SMOKE = os.environ.get("CARNAC_SMOKE", "") not in ("", "0")
LEARNER, OPPONENT = "player_0", "player_1"


class Planes(nn.Module):
    """An MLP over the flattened int8 planes (supply plane scaled to 0..1)."""

    def __init__(self, shape: tuple[int, int, int], megaliths: int, num_actions: int, hidden: int) -> None:
        super().__init__()
        scale = torch.ones(shape)
        scale[..., -1] = 1.0 / megaliths
        self.register_buffer("scale", scale)
        size = int(np.prod(shape))
        self.net = nn.Sequential(nn.Linear(size, hidden), nn.ReLU(), nn.Linear(hidden, num_actions))

    def forward(self, planes: torch.Tensor) -> torch.Tensor:
        return self.net((planes.float() * self.scale).flatten(-3))


class Uniform(nn.Module):
    """Zero logits: with the mask, a uniform choice among the legal actions."""

    def __init__(self, num_actions: int) -> None:
        super().__init__()
        self.num_actions = num_actions

    def forward(self, planes: torch.Tensor) -> torch.Tensor:
        return torch.zeros(*planes.shape[:-3], self.num_actions)


def masked_actor(module: nn.Module, group: str) -> ProbabilisticActor:
    """A masked categorical policy for one player's group of the tensordict."""
    logits = TensorDictModule(module, in_keys=[(group, "observation", "observation")], out_keys=[(group, "logits")])
    return ProbabilisticActor(
        logits,
        in_keys={"logits": (group, "logits"), "mask": (group, "action_mask")},
        out_keys=[(group, "action")],
        distribution_class=MaskedCategorical,
        return_log_prob=True,
        log_prob_key=(group, "log_prob"),
    )


def decisions(data: object) -> tuple[torch.Tensor, ...]:
    """The learner's decisions in finished games: (planes, mask, action, log-prob, final reward)."""
    acting = data[LEARNER, "mask"].reshape(-1)
    done = data["next", "done"].reshape(-1)
    reward = data["next", LEARNER, "reward"].reshape(-1)
    returns = torch.full_like(reward, float("nan"))
    final = float("nan")
    for t in range(len(done) - 1, -1, -1):  # walk back: every step of a game gets its final reward
        if done[t]:
            final = float(reward[t])
        returns[t] = final
    keep = acting & ~torch.isnan(returns)
    return (
        data[LEARNER, "observation", "observation"][keep],
        data[LEARNER, "action_mask"][keep],
        data[LEARNER, "action"][keep],
        data[LEARNER, "log_prob"][keep],
        returns[keep],
    )


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description="TorchRL PettingZooWrapper with masks: a learner against random play")
    p.add_argument("--board", default="small")
    p.add_argument("--frames", type=int, default=256 if SMOKE else 6000, help="environment steps (both seats)")
    p.add_argument("--frames-per-batch", type=int, default=128 if SMOKE else 1000)
    p.add_argument("--hidden", type=int, default=32 if SMOKE else 256)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)

    env = PettingZooWrapper(env=carnac_env.env(board=args.board), use_mask=True, categorical_actions=True)
    env.set_seed(args.seed)
    shape = tuple(env.observation_spec[LEARNER, "observation", "observation"].shape[-3:])
    num_actions = env.full_action_spec[LEARNER, "action"].space.n
    megaliths = carnac_env.make_board(args.board).megaliths
    net = Planes(shape, megaliths, num_actions, args.hidden)
    learner = masked_actor(net, LEARNER)
    policy = TensorDictSequential(learner, masked_actor(Uniform(num_actions), OPPONENT))
    optimiser = torch.optim.Adam(net.parameters(), lr=args.lr)
    collector = Collector(
        env,
        policy,
        frames_per_batch=args.frames_per_batch,
        total_frames=args.frames,
        split_trajs=False,
        auto_register_policy_transforms=False,
    )
    for batch, data in enumerate(collector):
        planes, mask, action, old_logp, returns = decisions(data)
        if len(returns) == 0:
            continue
        advantage = returns - returns.mean()
        for _ in range(args.epochs):
            dist = MaskedCategorical(logits=net(planes), mask=mask)
            ratio = torch.exp(dist.log_prob(action) - old_logp)
            loss = -torch.min(ratio * advantage, ratio.clamp(0.8, 1.2) * advantage).mean()
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
        done = data["next", "done"].reshape(-1)
        results = data["next", LEARNER, "reward"].reshape(-1)[done]
        print(
            f"batch {batch}: {len(results)} games ended; the learner won {int((results > 0).sum())}, "
            f"lost {int((results < 0).sum())}; {len(returns)} decisions trained on"
        )
        collector.update_policy_weights_()
    collector.shutdown()


if __name__ == "__main__":
    main()
