"""Train sb3-contrib's MaskablePPO on Carnac (small board) against a random opponent.

    pip install -e ".[train]"
    python examples/sb3_maskable_ppo.py                       # 450k steps: about 11 minutes on 2 CPU cores
    python examples/sb3_maskable_ppo.py --timesteps 50000 --out runs/sb3-quick
    CARNAC_SMOKE=1 python examples/sb3_maskable_ppo.py        # tiny budgets: checks that it runs

What it does:

1. trains ``MaskablePPO`` on ``gymnasium.make("carnac_env/Carnac-v0", board="small",
   opponent="random", seat="random")``: the learner plays both seats, the illegal actions
   are masked out through ``action_masks()``;
2. every ``--eval-every`` steps, plays ``--eval-games`` games against random play (seats
   alternating, greedy choice from the policy) and prints the learning curve: win rate
   against random over training;
3. saves the final model (``OUT/model.zip``), the best checkpoint by those evaluations
   (``OUT/best.zip``) and the curve (``OUT/curve.json``), and measures both models on
   ``--test-games`` games that no evaluation used;
4. enters the final model in the arena against ``random`` and ``greedy``, as the agent spec
   ``sb3_maskable_ppo.MaskablePPOAgent:path=OUT/model.zip`` (any object with
   ``act(state) -> int`` is an agent; see docs/agents.md).

The policy is a small CNN over the (rows, cols, 9) int8 planes (the supply plane scaled to
0..1). The reward is the game result (+1/-1/0) on the last step, plus by default a small
potential-based shaping term (``--shaping 0.1``, :class:`DolmenShaping`): the change in
"my dolmens minus the opponent's", which adds up to zero over a game but tells the learner
at once when a move made or broke a dolmen. ``--shaping 0`` trains on the result alone.
docs/frameworks.md has the measured curves and settings.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from carnac_env import register_envs
from carnac_env.agents import observe
from carnac_env.core.boards import make_board

try:
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
    from stable_baselines3.common.vec_env import DummyVecEnv
except ImportError as err:  # pragma: no cover - depends on the install
    raise SystemExit(f"this example needs PyTorch and sb3-contrib: pip install 'carnac-env[train]' ({err})") from None

SMOKE = os.environ.get("CARNAC_SMOKE", "") not in ("", "0")
register_envs()  # carnac_env/Carnac-v0 (importing carnac_env does it too; idempotent)


class CarnacCNN(BaseFeaturesExtractor):
    """Three 3x3 convolutions over the observation planes, then one dense layer.

    The planes are 0/1 except the supply plane, which is divided by the board's megaliths
    (the observation space's upper bound) so every input lies in 0..1.
    """

    def __init__(self, observation_space: gym.spaces.Box, channels: int = 64, features_dim: int = 256) -> None:
        super().__init__(observation_space, features_dim)
        rows, cols, planes = observation_space.shape
        high = np.asarray(observation_space.high, dtype=np.float32)[0, 0]  # per-plane upper bound
        self.register_buffer("scale", torch.as_tensor(1.0 / np.maximum(high, 1.0)).view(1, planes, 1, 1))
        self.net = torch.nn.Sequential(
            torch.nn.Conv2d(planes, channels, 3, padding=1),
            torch.nn.ReLU(),
            torch.nn.Conv2d(channels, channels, 3, padding=1),
            torch.nn.ReLU(),
            torch.nn.Conv2d(channels, channels, 3, padding=1),
            torch.nn.ReLU(),
            torch.nn.Flatten(),
            torch.nn.Linear(channels * rows * cols, features_dim),
            torch.nn.ReLU(),
        )

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        x = observations.float().permute(0, 3, 1, 2) * self.scale
        return self.net(x)


_MODELS: dict[str, Any] = {}


def load_model(path: str) -> Any:
    """Load a saved MaskablePPO model once per process (the arena builds a fresh agent per game)."""
    key = os.path.abspath(path)
    if key not in _MODELS:
        _MODELS[key] = MaskablePPO.load(key, device="cpu")
    return _MODELS[key]


class MaskablePPOAgent:
    """A saved MaskablePPO model as a carnac agent: ``act(state)`` for the arena and ``carnac play``.

    Spec: ``sb3_maskable_ppo.MaskablePPOAgent:path=runs/sb3/model.zip`` (with ``examples/``
    on ``PYTHONPATH``). It reads :func:`carnac_env.agents.observe` of the game, the same planes
    and mask the Gymnasium env gives the learner, and picks the most probable legal action.
    """

    def __init__(self, path: str, seed: int = 0, deterministic: bool = True) -> None:
        self.path = str(path)
        self.seed = seed
        self.deterministic = deterministic
        self.model: Any = None

    def reset(self, seed: int | None = None) -> None:
        """Nothing to reset: the policy is fixed (greedy by default)."""

    def act(self, state: Any) -> int:
        """The model's choice for ``state.to_act`` among the legal actions."""
        if self.model is None:  # loaded lazily, so the agent pickles cheaply to arena workers
            self.model = load_model(self.path)
        seen = observe(state)
        action, _ = self.model.predict(
            seen["observation"], action_masks=seen["action_mask"].astype(bool), deterministic=self.deterministic
        )
        return int(action)

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "model": None}


class DolmenShaping(gym.Wrapper):
    """Potential-based reward shaping: ``coef * (gamma * phi(after) - phi(before))`` on top of the result.

    ``phi`` is the learner's dolmen count minus the opponent's in the position as it stands
    (``score_now()``), and 0 once the game is over, so the shaping terms add up to zero over a
    game and the best policy is unchanged (Ng, Harada and Russell, 1999); they only tell the
    learner sooner when a move made or broke a dolmen.
    """

    def __init__(self, env: gym.Env, coef: float, gamma: float) -> None:
        super().__init__(env)
        self.coef, self.gamma = coef, gamma
        self._phi = 0.0

    def _potential(self) -> float:
        game, seat = self.env.unwrapped.game, self.env.unwrapped.seat
        dolmens = game.score_now().dolmens
        return float(len(dolmens[seat]) - len(dolmens[1 - seat]))

    def reset(self, **kwargs: Any) -> tuple[np.ndarray, dict]:
        observation, info = self.env.reset(**kwargs)
        self._phi = self._potential()
        return observation, info

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        observation, reward, terminated, truncated, info = self.env.step(action)
        phi = 0.0 if terminated or truncated else self._potential()
        reward += self.coef * (self.gamma * phi - self._phi)
        self._phi = phi
        return observation, reward, terminated, truncated, info


def make_env(board: str, seat: Any, seed: int, shaping: float = 0.0, gamma: float = 0.99) -> gym.Env:
    """The training env: the learner against uniform random play (with optional dolmen shaping)."""
    env = gym.make("carnac_env/Carnac-v0", board=board, opponent="random", seat=seat)
    if shaping:
        env = DolmenShaping(env, shaping, gamma)
    env.reset(seed=seed)
    return env


def win_rate_vs_random(model: Any, board: str, games: int, seed: int) -> dict[str, float]:
    """Play ``games`` games against random play, seats alternating; greedy choice from the policy.

    Returns the shares of wins, draws and losses, and the win rates as Red and as White.
    """
    results = []
    for i in range(games):
        env = gym.make("carnac_env/Carnac-v0", board=board, opponent="random", seat=i % 2)
        obs, info = env.reset(seed=seed + i)
        done, reward = False, 0.0
        while not done:
            action, _ = model.predict(obs, action_masks=info["action_mask"].astype(bool), deterministic=True)
            obs, reward, terminated, truncated, info = env.step(int(action))
            done = terminated or truncated
        results.append(reward)
        env.close()
    r = np.array(results)
    return {
        "win": float((r > 0).mean()),
        "draw": float((r == 0).mean()),
        "loss": float((r < 0).mean()),
        "win_as_red": float((r[0::2] > 0).mean()),
        "win_as_white": float((r[1::2] > 0).mean()) if games > 1 else float("nan"),
    }


def train(args: argparse.Namespace) -> Path:
    """Train, printing the learning curve; returns the saved model's path."""
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    venv = DummyVecEnv(
        [
            lambda i=i: make_env(args.board, "random", args.seed + 1000 * i, args.shaping, args.gamma)
            for i in range(args.envs)
        ]
    )
    model: Any = None

    def learning_rate(_progress_remaining: float) -> float:
        """``--lr``, decayed linearly to a tenth over the whole run (``--lr-decay``, the default).

        (SB3's own progress counter restarts with every ``learn`` call, and this script calls
        ``learn`` once per evaluation, so the schedule reads the model's step count instead.)
        """
        if not args.lr_decay or model is None:
            return args.lr
        return args.lr * max(0.1, 1.0 - model.num_timesteps / args.timesteps)

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
    curve: list[dict[str, Any]] = []
    start, cpu_start = time.perf_counter(), time.process_time()
    exclude = ["learning_rate", "lr_schedule"]  # the schedule refers to the model itself

    def evaluate() -> None:
        rates = win_rate_vs_random(model, args.board, args.eval_games, seed=10_000 + len(curve) * args.eval_games)
        point = {
            "timesteps": model.num_timesteps,
            "seconds": round(time.perf_counter() - start, 1),
            "cpu_seconds": round(time.process_time() - cpu_start, 1),  # this process's CPU time
            **rates,
        }
        if point["timesteps"] and point["win"] > max((p["win"] for p in curve if p["timesteps"]), default=-1.0):
            model.save(out / "best.zip", exclude=exclude)  # the best checkpoint by the evaluation so far
        curve.append(point)
        print(
            f"steps {point['timesteps']:>8}  {point['seconds']:>7.1f}s (CPU {point['cpu_seconds']:>6.1f}s)  "
            f"vs random: win {rates['win']:.1%}  draw {rates['draw']:.1%}  loss {rates['loss']:.1%}  "
            f"(wins as Red {rates['win_as_red']:.0%}, as White {rates['win_as_white']:.0%})",
            flush=True,
        )

    print(f"training MaskablePPO on {args.board}, {args.timesteps} steps, {args.envs} envs", flush=True)
    evaluate()
    while model.num_timesteps < args.timesteps:
        model.learn(min(args.eval_every, args.timesteps - model.num_timesteps), reset_num_timesteps=False)
        evaluate()
    model.save(out / "model.zip", exclude=exclude)
    # The curve wobbles by several points from one evaluation to the next, so the script keeps the
    # best checkpoint too, and measures both on games the evaluations never used. (With the decaying
    # learning rate the final model measured better than the best checkpoint in our runs.)
    test = {}
    for name in ("model", "best"):
        rates = win_rate_vs_random(
            MaskablePPO.load(out / f"{name}.zip", device="cpu"), args.board, args.test_games, 10**6
        )
        test[name] = rates
        print(f"{name}.zip: {rates['win']:.1%} wins against random in {args.test_games} new games")
    settings = {k: v for k, v in vars(args).items() if k != "out"}
    (out / "curve.json").write_text(json.dumps({"settings": settings, "curve": curve, "test": test}, indent=1))
    print(f"saved {out / 'model.zip'}, {out / 'best.zip'} and {out / 'curve.json'}")
    return out / "model.zip"


def arena(model_path: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Enter the saved model in the arena against random and greedy; returns results.json.

    The arena runs inside the output folder so that the model's spec (its name in the tables)
    stays short: ``sb3_maskable_ppo.MaskablePPOAgent:path=model.zip``.
    """
    from carnac_env.arena import run_arena

    sys.path.insert(0, str(Path(__file__).resolve().parent))  # so the spec's module imports by name
    spec = f"sb3_maskable_ppo.MaskablePPOAgent:path={model_path.name}"
    print(f"arena on {args.board}: the model against random and greedy, {args.arena_games} games per pair")
    previous = os.getcwd()
    where = model_path.parent / "arena"  # as the caller names it: the arena runs inside model_path.parent

    def echo(line: str) -> None:  # the arena names its files from inside that folder
        print(line.replace(": arena/", f": {where}/"))

    os.chdir(model_path.parent)
    try:
        return run_arena(
            [spec, "random", "greedy"],
            "arena",
            board=args.board,
            games=args.arena_games,
            seed=args.seed,
            workers=1,
            progress=not SMOKE,
            echo=echo,
        )
    finally:
        os.chdir(previous)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options; ``CARNAC_SMOKE=1`` shrinks every budget to a few seconds."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--board", default="small")
    p.add_argument("--timesteps", type=int, default=2048 if SMOKE else 450_000)
    p.add_argument("--envs", type=int, default=2 if SMOKE else 8)
    p.add_argument("--n-steps", type=int, default=64 if SMOKE else 256, help="steps per env per rollout")
    p.add_argument("--batch-size", type=int, default=64 if SMOKE else 256)
    p.add_argument("--epochs", type=int, default=2 if SMOKE else 4)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument(
        "--lr-decay",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="decay the learning rate linearly to a tenth over the run (default; --no-lr-decay keeps it fixed)",
    )
    p.add_argument("--gamma", type=float, default=0.99)
    p.add_argument("--ent-coef", type=float, default=0.01)
    p.add_argument("--shaping", type=float, default=0.1, help="weight of the dolmen-count shaping (0: the result only)")
    p.add_argument("--channels", type=int, default=8 if SMOKE else 64)
    p.add_argument("--eval-every", type=int, default=1024 if SMOKE else 50_000)
    p.add_argument("--eval-games", type=int, default=4 if SMOKE else 200)
    p.add_argument("--test-games", type=int, default=4 if SMOKE else 500, help="final games against random")
    p.add_argument("--arena-games", type=int, default=2 if SMOKE else 40, help="games per pair in the arena")
    p.add_argument("--no-arena", action="store_true", help="skip the arena evaluation")
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads (1 is fastest for this small network)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="runs/sb3-maskable-ppo")
    args = p.parse_args(argv)
    make_board(args.board)  # a clear error for an unknown board, before any work
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    model_path = train(args)
    if not args.no_arena:
        arena(model_path, args)


if __name__ == "__main__":
    main()
