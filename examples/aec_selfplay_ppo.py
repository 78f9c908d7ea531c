"""Self-play MaskablePPO through the AEC env: ``carnac_env.envs.selfplay`` with an opponent pool.

    pip install -e ".[train]"
    python examples/aec_selfplay_ppo.py                      # small board, 100k steps: about 3 CPU minutes
    python examples/aec_selfplay_ppo.py --timesteps 200000 --out runs/aec-selfplay
    CARNAC_SMOKE=1 python examples/aec_selfplay_ppo.py       # tiny budgets: checks that it runs

PettingZoo's SB3 action-mask tutorial steps one model through both seats of the AEC env, so the
result of a game reaches only the seat that moved last, and Carnac's repeated turns mix the
seats' transitions (docs/frameworks.md). :class:`carnac_env.envs.selfplay.SelfPlayEnv` gives
the learner one seat per game instead (alternating every game), plays the other seat's moves,
and pays the learner the result on its last step whoever moved last. The other seat is played
by an :class:`~carnac_env.envs.selfplay.OpponentPool`: ``"random"``, kept for good, and the
last ``--pool-size`` snapshots of the learner, which :class:`SnapshotCallback` adds every
``--snapshot-every`` steps while the model trains. Every game draws one member of the pool.

The user glue is what this file adds to the AEC env: the pool and env lines, :class:`Snapshot`
(a frozen copy of the policy as ``policy(observation, action_mask)``) and
:class:`SnapshotCallback`, about 25 lines. The network (:class:`CarnacCNN`) and the dolmen
shaping (:class:`DolmenShaping`) are those of examples/sb3_maskable_ppo.py, imported from it.
Three defaults differ from that script's: 32 channels instead of 64 (a snapshot plays one
forward pass per move, one observation at a time, so the network's size counts twice), a
shaping weight of 0.3 instead of 0.1, and ``lr=5e-4`` instead of ``3e-4`` (both decayed to a
tenth over the run), which made the short run learn faster. The model is measured at the end on ``--test-games``
games against random play (``carnac_env/Carnac-v0`` with ``opponent="random"``, seats alternating,
greedy choice from the policy), with a 95% Wilson interval; ``OUT/result.json`` keeps the numbers.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

import carnac_env
from carnac_env.arena.ratings import wilson
from carnac_env.core.boards import make_board
from carnac_env.envs.selfplay import OpponentPool, SelfPlayEnv

try:
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import DummyVecEnv
except ImportError as err:  # pragma: no cover - depends on the install
    raise SystemExit(f"this example needs PyTorch and sb3-contrib: pip install 'carnac-env[train]' ({err})") from None

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the sibling example, when imported from elsewhere
from sb3_maskable_ppo import CarnacCNN, DolmenShaping, win_rate_vs_random

SMOKE = os.environ.get("CARNAC_SMOKE", "") not in ("", "0")


class Snapshot:
    """A frozen copy of the learner's policy, as the adapter's opponent: ``policy(observation, action_mask)``.

    It samples from the masked policy (not its most probable move), so the learner meets varied play.
    """

    def __init__(self, policy: Any, steps: int) -> None:
        self.policy = copy.deepcopy(policy)
        self.policy.set_training_mode(False)
        self.steps = steps

    def __call__(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        # policy.predict(observation, action_masks=action_mask) does the same, with checks that cost
        # a fifth more on one observation; the opponent is called once per move.
        with torch.no_grad():
            batch = torch.as_tensor(observation[None])
            return int(self.policy.get_distribution(batch, action_masks=action_mask[None]).get_actions()[0])

    def __repr__(self) -> str:
        return f"Snapshot(steps={self.steps})"


class SnapshotCallback(BaseCallback):
    """Every ``every`` steps, add a snapshot of the model's policy to ``pool``."""

    def __init__(self, pool: OpponentPool, every: int) -> None:
        super().__init__()
        self.pool, self.every, self.last = pool, every, 0

    def _on_step(self) -> bool:
        if self.num_timesteps - self.last >= self.every:
            self.last = self.num_timesteps
            self.pool.add(Snapshot(self.model.policy, self.num_timesteps))
        return True


def make_env(board: str, pool: OpponentPool, seed: int, shaping: float, gamma: float) -> Any:
    """The training env: the AEC env as a self-play env, the learner's seat alternating, the pool opposite."""
    env = SelfPlayEnv(carnac_env.env(board=board), opponent=pool, seat="alternate")
    if shaping:
        env = DolmenShaping(env, shaping, gamma)
    env.reset(seed=seed)
    return env


def measure(model: Any, board: str, games: int, seed: int) -> dict[str, Any]:
    """Win rate against random play on ``games`` new games, with its 95% Wilson interval."""
    rates = win_rate_vs_random(model, board, games, seed)
    low, high = wilson(rates["win"], games)
    return {**rates, "games": games, "wilson_95": [round(low, 4), round(high, 4)]}


def train(args: argparse.Namespace) -> dict[str, Any]:
    """Train through the adapter, print the curve, measure the model; returns result.json's content."""
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    pool = OpponentPool(["random"], size=args.pool_size)  # one pool, shared by every env of the process
    venv = DummyVecEnv(
        [
            lambda i=i: make_env(args.board, pool, args.seed + 1000 * i, args.shaping, args.gamma)
            for i in range(args.envs)
        ]
    )
    model: Any = None

    def learning_rate(_progress: float) -> float:  # linear decay to a tenth, on the model's own step count
        return args.lr * max(0.1, 1.0 - (model.num_timesteps if model else 0) / args.timesteps)

    model = MaskablePPO(
        "MlpPolicy",
        venv,
        learning_rate=learning_rate,
        n_steps=args.n_steps,
        batch_size=args.batch_size,
        n_epochs=args.epochs,
        gamma=args.gamma,
        gae_lambda=0.95,
        ent_coef=args.ent_coef,
        policy_kwargs={
            "features_extractor_class": CarnacCNN,
            "features_extractor_kwargs": {"channels": args.channels, "features_dim": 256},
            "net_arch": [128],
        },
        seed=args.seed,
        device="cpu",
        verbose=0,
    )
    callback = SnapshotCallback(pool, args.snapshot_every)
    curve: list[dict[str, Any]] = []
    train_cpu = train_wall = 0.0
    print(f"training MaskablePPO through SelfPlayEnv on {args.board}, {args.timesteps} steps, {args.envs} envs")
    while model.num_timesteps < args.timesteps:
        wall, cpu = time.perf_counter(), time.process_time()
        chunk = min(args.eval_every, args.timesteps - model.num_timesteps)
        model.learn(chunk, callback=callback, reset_num_timesteps=False)
        train_cpu += time.process_time() - cpu
        train_wall += time.perf_counter() - wall
        rates = win_rate_vs_random(model, args.board, args.eval_games, seed=10_000 + len(curve) * args.eval_games)
        curve.append({"timesteps": model.num_timesteps, "train_cpu_s": round(train_cpu, 1), "pool": len(pool), **rates})
        print(
            f"steps {model.num_timesteps:>7}  training CPU {train_cpu:6.1f}s (wall {train_wall:6.1f}s)  "
            f"pool {len(pool)}  vs random: win {rates['win']:.1%} ({args.eval_games} games)",
            flush=True,
        )
    model.save(out / "model.zip", exclude=["learning_rate", "lr_schedule"])
    test = measure(model, args.board, args.test_games, seed=10**6)
    low, high = test["wilson_95"]
    print(
        f"model.zip: {test['win']:.1%} wins against random in {args.test_games} new games "
        f"(95% Wilson interval {low:.1%}-{high:.1%}; as Red {test['win_as_red']:.1%}, as White "
        f"{test['win_as_white']:.1%}), after {train_cpu:.0f} s of training CPU ({train_wall:.0f} s wall)"
    )
    result = {
        "settings": {k: v for k, v in vars(args).items() if k != "out"},
        "curve": curve,
        "test": test,
        "train_cpu_s": round(train_cpu, 1),
        "train_wall_s": round(train_wall, 1),
        "pool": [repr(member) for member in pool.members],
    }
    (out / "result.json").write_text(json.dumps(result, indent=1))
    print(f"saved {out / 'model.zip'} and {out / 'result.json'}")
    return result


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options; ``CARNAC_SMOKE=1`` shrinks every budget to a few seconds."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--board", default="small")
    p.add_argument("--timesteps", type=int, default=1024 if SMOKE else 100_000)
    p.add_argument("--envs", type=int, default=2 if SMOKE else 8)
    p.add_argument("--n-steps", type=int, default=64 if SMOKE else 256, help="steps per env per rollout")
    p.add_argument("--batch-size", type=int, default=64 if SMOKE else 256)
    p.add_argument("--epochs", type=int, default=2 if SMOKE else 4)
    p.add_argument("--lr", type=float, default=5e-4, help="decayed linearly to a tenth over the run")
    p.add_argument("--gamma", type=float, default=0.99)
    p.add_argument("--ent-coef", type=float, default=0.01)
    p.add_argument("--shaping", type=float, default=0.3, help="weight of the dolmen-count shaping (0: the result only)")
    p.add_argument("--channels", type=int, default=8 if SMOKE else 32)
    p.add_argument("--snapshot-every", type=int, default=256 if SMOKE else 25_000, help="steps between snapshots")
    p.add_argument("--pool-size", type=int, default=2, help="snapshots kept beside 'random' (the newest)")
    p.add_argument("--eval-every", type=int, default=512 if SMOKE else 25_000)
    p.add_argument("--eval-games", type=int, default=4 if SMOKE else 100)
    p.add_argument("--test-games", type=int, default=4 if SMOKE else 1000, help="final games against random")
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads (1 is fastest for this small network)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="runs/aec-selfplay-ppo")
    args = p.parse_args(argv)
    make_board(args.board)  # a clear error for an unknown board, before any work
    return args


def main(argv: list[str] | None = None) -> None:
    train(parse_args(argv))


if __name__ == "__main__":
    main()
