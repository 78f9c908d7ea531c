"""Tianshou (2.x): DQN with action masks against a random opponent, on the PettingZoo env.

    pip install torch --index-url https://download.pytorch.org/whl/cpu   # PyTorch's CPU build
    pip install -e . "tianshou==2.0.1"
    python examples/tianshou_dqn.py                 # a few thousand steps, about a minute
    CARNAC_SMOKE=1 python examples/tianshou_dqn.py  # tiny budgets

Tianshou's own :class:`~tianshou.env.PettingZooEnv` turns ``carnac_env.env(...)`` into a
single stream of ``{"agent_id", "obs", "mask"}`` observations; its
``MultiAgentOffPolicyAlgorithm`` routes each agent's steps to that agent's algorithm: here
a masked DQN for ``player_0`` (Red) and Tianshou's masked random player for ``player_1``.
The DQN reads ``obs.mask`` and never picks an illegal action. Carnac's infos have the same
keys and shapes at every step, so Tianshou's ``VectorReplayBuffer`` stores them as they come.

A caveat that comes from Tianshou's multi-agent design, not from Carnac: each transition
belongs to the agent that acted, so the final reward lands on the transition of whoever
made the last move. When the random opponent moves last (it often tilts or declines the
final megalith), the learner's last transition does not see the result. This is the
same structure as Tianshou's own tic-tac-toe example; for learning that works well, use
the Gymnasium env with the opponent inside it (examples/sb3_maskable_ppo.py) or the
self-play example.
"""

from __future__ import annotations

import argparse
import logging
import os

import numpy as np

import carnac_env

try:
    import torch
    from tianshou.algorithm import DQN, MARLRandomDiscreteMaskedOffPolicyAlgorithm, MultiAgentOffPolicyAlgorithm
    from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
    from tianshou.algorithm.optim import AdamOptimizerFactory
    from tianshou.data import Collector, CollectStats, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv
    from tianshou.env.pettingzoo_env import PettingZooEnv
    from tianshou.trainer import OffPolicyTrainerParams
    from tianshou.utils.net.common import Net
except ImportError as err:  # pragma: no cover - depends on the install
    raise SystemExit(f"this example needs PyTorch and Tianshou 2.x: pip install tianshou ({err})") from None

SMOKE = os.environ.get("CARNAC_SMOKE", "") not in ("", "0")
# Tianshou warns on every multi-agent return (one column per agent); we read the learner's column ourselves.
logging.getLogger("tianshou.data.stats").setLevel(logging.ERROR)
LEARNER = 0  # player_0 (Red) learns; player_1 plays at random


def make_env(board: str) -> PettingZooEnv:
    """The PettingZoo env in Tianshou's multi-agent wrapper."""
    return PettingZooEnv(carnac_env.env(board=board))


def build(args: argparse.Namespace) -> MultiAgentOffPolicyAlgorithm:
    """A masked DQN for the learner's seat and a masked random player for the other seat."""
    env = make_env(args.board)
    planes = env.observation_space["observation"]
    net = Net(state_shape=planes.shape, action_shape=env.action_space.n, hidden_sizes=[args.hidden, args.hidden])
    learner = DQN(
        policy=DiscreteQLearningPolicy(
            model=net, action_space=env.action_space, eps_training=args.eps_train, eps_inference=0.0
        ),
        optim=AdamOptimizerFactory(lr=args.lr),
        gamma=args.gamma,
        n_step_return_horizon=1,
        target_update_freq=args.target_update,
    )
    opponent = MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space)
    seats = [learner, opponent] if LEARNER == 0 else [opponent, learner]
    return MultiAgentOffPolicyAlgorithm(algorithms=seats, env=env)


def learner_score(algorithm: MultiAgentOffPolicyAlgorithm, board: str, episodes: int, seed: int) -> float:
    """The learner's mean reward (+1 win, -1 loss, 0 draw) over ``episodes`` greedy games."""
    envs = DummyVectorEnv([lambda: make_env(board) for _ in range(4)])
    envs.seed(seed)
    collector = Collector[CollectStats](algorithm, envs)
    stats = collector.collect(n_episode=episodes, reset_before_collect=True)
    return float(np.mean(stats.returns[:, LEARNER]))


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description="Tianshou DQN with action masks against a random opponent")
    p.add_argument("--board", default="small")
    p.add_argument("--steps", type=int, default=200 if SMOKE else 5000, help="environment steps (both seats)")
    p.add_argument("--envs", type=int, default=2 if SMOKE else 8)
    p.add_argument("--hidden", type=int, default=32 if SMOKE else 256)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--gamma", type=float, default=0.99)
    p.add_argument("--eps-train", type=float, default=0.1)
    p.add_argument("--target-update", type=int, default=320)
    p.add_argument("--eval-episodes", type=int, default=4 if SMOKE else 100)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)

    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    algorithm = build(args)
    before = learner_score(algorithm, args.board, args.eval_episodes, seed=1)
    print(f"before training: learner's mean reward vs random {before:+.2f} ({args.eval_episodes} games)")

    train_envs = DummyVectorEnv([lambda: make_env(args.board) for _ in range(args.envs)])
    train_envs.seed(args.seed)
    collector = Collector[CollectStats](
        algorithm, train_envs, VectorReplayBuffer(20_000, len(train_envs)), exploration_noise=True
    )
    collector.reset()
    collector.collect(n_step=64 * args.envs)  # warm-up data
    epochs = 2
    result = algorithm.run_training(
        OffPolicyTrainerParams(
            training_collector=collector,
            test_collector=None,
            max_epochs=epochs,
            epoch_num_steps=max(args.steps // epochs, 1),
            collection_step_num_env_steps=10,
            batch_size=64,
            update_step_num_gradient_steps_per_sample=0.1,
            multi_agent_return_reduction=lambda returns: returns[:, LEARNER],
            verbose=False,
            show_progress=not SMOKE,
        )
    )
    print(f"trained {result.train_step} environment steps in {result.timing.total_time:.0f}s")
    after = learner_score(algorithm, args.board, args.eval_episodes, seed=1)
    print(f"after training: learner's mean reward vs random {after:+.2f} ({args.eval_episodes} games)")


if __name__ == "__main__":
    main()
