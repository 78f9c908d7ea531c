"""Self-play PPO in plain PyTorch: one policy plays both seats of many games at once.

    pip install -e ".[train]"
    python selfplay_ppo.py                           # small board, about 10 minutes on 2 cores
    python selfplay_ppo.py --board petit_menec --minutes 5 --augment
    CARNAC_SMOKE=1 python selfplay_ppo.py            # tiny budgets: checks that it runs

In a clone of the repository the file is in the examples folder. Tutorial 4
(docs/tutorials/self-play.md) reads it part by part; the page holds a copy of it to save as
``selfplay_ppo.py`` (tests/docs/test_examples.py checks that the two are the same), so that the
tutorial runs in any folder.

How it works (about 150 lines of learning code, no RL library):

* :class:`~carnac_env.batch.BatchGame` plays ``--envs`` games in lockstep. Every observation
  is seen by the player to act, with colours relative to it (own / opponent), so one network
  can play Red and White alike.
* The network (a small CNN, :class:`PolicyValueNet`) gives logits over the
  ``rows*cols*4 + 5`` actions and a value; illegal actions get logit ``-inf`` from the mask.
* Each decision is kept, with the seat that made it, until its game ends; then its return
  is the final result for that seat (+1 win, -1 loss, 0 draw; no discount, no shaping).
  Carnac's turns do not strictly alternate (after a tilt the tilter places; after a decline
  the placer places again), and these per-seat Monte-Carlo returns need no assumption
  about the order of turns.
* Finished decisions feed a standard clipped PPO update (advantage = return - value,
  normalised; value loss; entropy bonus). With ``--augment`` every batch is also seen
  through the board's symmetries (:mod:`carnac_env.core.symmetry`).
* At the end the policy enters the arena against random, greedy and MCTS (spec
  ``selfplay_ppo.SelfPlayAgent:path=OUT/policy.pt``, with this folder on ``PYTHONPATH``),
  and the ratings are printed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from carnac_env.agents import observe
from carnac_env.batch import BatchGame
from carnac_env.core.boards import make_board
from carnac_env.core.observation import NUM_PLANES, SUPPLY
from carnac_env.core.symmetry import symmetries, symmetry

try:
    import torch
    from torch import nn
except ImportError as err:  # pragma: no cover - depends on the install
    raise ImportError(f"selfplay_ppo needs PyTorch: pip install 'carnac-env[train]' ({err})") from err

SMOKE = os.environ.get("CARNAC_SMOKE", "") not in ("", "0")


class PolicyValueNet(nn.Module):
    """A small CNN: 3x3 convolutions over the planes, then a policy head and a value head.

    Input: ``(batch, rows, cols, 9)`` int8 planes (the supply plane is divided by the
    board's megaliths). Output: ``(logits (batch, rows*cols*4 + 5), value (batch,))``.
    """

    def __init__(self, rows: int, cols: int, megaliths: int, channels: int = 64, hidden: int = 256) -> None:
        super().__init__()
        self.shape = (rows, cols)
        self.megaliths = megaliths
        self.channels = channels
        self.hidden = hidden
        scale = torch.ones(NUM_PLANES)
        scale[SUPPLY] = 1.0 / megaliths
        self.register_buffer("scale", scale.view(1, NUM_PLANES, 1, 1))
        self.body = nn.Sequential(
            nn.Conv2d(NUM_PLANES, channels, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(channels, channels, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(channels, channels, 3, padding=1),
            nn.ReLU(),
            nn.Flatten(),
            nn.Linear(channels * rows * cols, hidden),
            nn.ReLU(),
        )
        self.policy = nn.Linear(hidden, rows * cols * 4 + 5)
        self.value = nn.Linear(hidden, 1)

    def forward(self, planes: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Masked logits and values for a batch of observations and bool masks."""
        x = self.body(planes.float().permute(0, 3, 1, 2) * self.scale)
        logits = self.policy(x).masked_fill(~mask, float("-inf"))
        return logits, torch.tanh(self.value(x)).squeeze(-1)

    def config(self) -> dict[str, int]:
        """What :meth:`load` needs to rebuild the network."""
        rows, cols = self.shape
        return {
            "rows": rows,
            "cols": cols,
            "megaliths": self.megaliths,
            "channels": self.channels,
            "hidden": self.hidden,
        }

    def save(self, path: str | Path) -> None:
        """Save weights and shape to ``path`` (a ``.pt`` file)."""
        torch.save({"config": self.config(), "state": self.state_dict()}, path)

    @classmethod
    def load(cls, path: str | Path) -> PolicyValueNet:
        """A network saved by :meth:`save`, in eval mode."""
        data = torch.load(path, map_location="cpu", weights_only=True)
        net = cls(**data["config"])
        net.load_state_dict(data["state"])
        return net.eval()


_NETS: dict[str, PolicyValueNet] = {}


class SelfPlayAgent:
    """A saved self-play policy as a carnac agent (``act(state) -> int``), for the arena.

    Spec: ``selfplay_ppo.SelfPlayAgent:path=runs/selfplay/policy.pt`` (with this file's folder
    on ``PYTHONPATH``). Picks the most
    probable legal action (``sample=true``: samples instead).
    """

    def __init__(self, path: str, seed: int = 0, sample: bool = False) -> None:
        self.path = str(path)
        self.sample = sample
        self.generator = torch.Generator().manual_seed(seed)

    def reset(self, seed: int | None = None) -> None:
        """Re-seed the sampling generator (used with ``sample=true`` only)."""
        if seed is not None:
            self.generator.manual_seed(seed)

    def act(self, state: Any) -> int:
        """The policy's choice for ``state.to_act``."""
        key = os.path.abspath(self.path)
        if key not in _NETS:
            _NETS[key] = PolicyValueNet.load(key)
        seen = observe(state)
        planes = torch.as_tensor(seen["observation"][None])
        mask = torch.as_tensor(seen["action_mask"][None].astype(bool))
        with torch.no_grad():
            logits, _ = _NETS[key](planes, mask)
        if self.sample:
            return int(torch.distributions.Categorical(logits=logits).sample(generator=self.generator)[0])
        return int(logits.argmax(-1)[0])

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path, "sample": self.sample, "generator": None}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["path"], sample=state["sample"])


def collect(
    net: PolicyValueNet, games: BatchGame, step: Any, decisions: int, pending: list[list[tuple]]
) -> tuple[dict[str, np.ndarray], Any, dict[str, float]]:
    """Play until at least ``decisions`` decisions of finished games are ready.

    ``pending[i]`` holds the decisions of game ``i`` still in progress: (planes, mask, action,
    log-probability, seat). Returns the finished decisions as arrays, the current BatchStep,
    and statistics (games finished, Red's share of wins).
    """
    ready: list[tuple] = []
    returns: list[float] = []
    finished = red_wins = 0
    while len(ready) < decisions:
        planes = torch.as_tensor(step.observation)
        mask = torch.as_tensor(step.action_mask)
        with torch.no_grad():
            logits, _ = net(planes, mask)
            dist = torch.distributions.Categorical(logits=logits)
            actions = dist.sample()
            logp = dist.log_prob(actions)
        actions_np = actions.numpy()
        for i in range(games.num_envs):
            pending[i].append(
                (step.observation[i], step.action_mask[i], actions_np[i], float(logp[i]), int(step.current_player[i]))
            )
        step = games.step(actions_np)
        for i in np.flatnonzero(step.terminated):
            finished += 1
            red_wins += step.rewards[i, 0] > 0
            for decision in pending[i]:
                ready.append(decision)
                returns.append(float(step.rewards[i, decision[4]]))
            pending[i] = []
    batch = {
        "planes": np.stack([d[0] for d in ready]),
        "mask": np.stack([d[1] for d in ready]),
        "action": np.array([d[2] for d in ready], dtype=np.int64),
        "logp": np.array([d[3] for d in ready], dtype=np.float32),
        "return": np.array(returns, dtype=np.float32),
    }
    return batch, step, {"games": finished, "red_win_share": red_wins / max(finished, 1)}


def win_rate_vs_random(net: PolicyValueNet, board: Any, games: int, seed: int) -> float:
    """The share of ``games`` games the policy (most probable legal action) wins against random play.

    Played on a :class:`BatchGame` of ``games`` games at once; the policy is Red in the even
    games and White in the odd ones.
    """
    batch = BatchGame(board, num_envs=games, seed=seed)
    step = batch.reset()
    seat = np.arange(games) % 2
    result = np.full(games, np.nan)
    while np.isnan(result).any():
        with torch.no_grad():
            logits, _ = net(torch.as_tensor(step.observation), torch.as_tensor(step.action_mask))
        actions = np.where(step.current_player == seat, logits.argmax(-1).numpy(), batch.sample_actions())
        step = batch.step(actions)
        ended = step.terminated & np.isnan(result)
        result[ended] = step.rewards[ended, seat[ended]]
    return float((result > 0).mean())


def augment_batch(batch: dict[str, np.ndarray], board: Any, net: PolicyValueNet) -> dict[str, np.ndarray]:
    """Add every symmetric copy of the batch; the copies' old log-probabilities are recomputed."""
    parts = [batch]
    for name in symmetries(board)[1:]:
        t = symmetry(board, name)
        copy = {
            "planes": t.observation(batch["planes"]),
            "mask": t.mask(batch["mask"]),
            "action": t.action_array(batch["action"]),
            "return": batch["return"],
        }
        with torch.no_grad():
            logits, _ = net(torch.as_tensor(copy["planes"]), torch.as_tensor(copy["mask"]))
            dist = torch.distributions.Categorical(logits=logits)
            copy["logp"] = dist.log_prob(torch.as_tensor(copy["action"])).numpy()
        parts.append(copy)
    return {key: np.concatenate([p[key] for p in parts]) for key in batch}


def ppo_update(
    net: PolicyValueNet, optimiser: torch.optim.Optimizer, batch: dict[str, np.ndarray], args: argparse.Namespace
) -> dict[str, float]:
    """A few epochs of clipped PPO on one batch; returns the last minibatch's losses."""
    tensors = {key: torch.as_tensor(value) for key, value in batch.items()}
    n = len(tensors["action"])
    stats: dict[str, float] = {}
    for _ in range(args.epochs):
        order = torch.randperm(n)
        for start in range(0, n, args.minibatch):
            idx = order[start : start + args.minibatch]
            if len(idx) < 2:  # a 1-sample remainder has no advantage spread to normalise
                continue
            logits, value = net(tensors["planes"][idx], tensors["mask"][idx])
            dist = torch.distributions.Categorical(logits=logits)
            logp = dist.log_prob(tensors["action"][idx])
            ret = tensors["return"][idx]
            advantage = ret - value.detach()
            advantage = (advantage - advantage.mean()) / (advantage.std(correction=0) + 1e-8)
            ratio = torch.exp(logp - tensors["logp"][idx])
            policy_loss = -torch.min(ratio * advantage, ratio.clamp(1 - args.clip, 1 + args.clip) * advantage).mean()
            value_loss = ((value - ret) ** 2).mean()
            # the entropy of a masked distribution: -inf logits contribute 0 (guard 0 * -inf)
            probs = dist.probs
            entropy = -(probs * torch.where(probs > 0, dist.logits, torch.zeros_like(probs))).sum(-1).mean()
            loss = policy_loss + 0.5 * value_loss - args.ent_coef * entropy
            optimiser.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(net.parameters(), 0.5)
            optimiser.step()
            stats = {"policy": policy_loss.item(), "value": value_loss.item(), "entropy": entropy.item()}
    return stats


def train(args: argparse.Namespace) -> Path:
    """Self-play for ``--minutes`` (or ``--updates``); saves ``OUT/policy.pt`` and ``OUT/log.json``."""
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    board = make_board(args.board)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    games = BatchGame(board, num_envs=args.envs, seed=args.seed)
    net = PolicyValueNet(board.rows, board.cols, board.megaliths, channels=args.channels)
    optimiser = torch.optim.Adam(net.parameters(), lr=args.lr)
    step = games.reset()
    pending: list[list[tuple]] = [[] for _ in range(args.envs)]
    log = []
    start, cpu_start = time.perf_counter(), time.process_time()
    total_decisions = total_games = 0
    print(f"self-play PPO on {board.name}: {args.envs} games at once, {args.minutes} minutes or {args.updates} updates")
    for update in range(1, args.updates + 1):
        batch, step, info = collect(net, games, step, args.batch, pending)
        total_decisions += len(batch["action"])
        total_games += info["games"]
        if args.augment:
            batch = augment_batch(batch, board, net)
        losses = ppo_update(net, optimiser, batch, args)
        elapsed = time.perf_counter() - start
        cpu = round(time.process_time() - cpu_start, 1)  # this process's CPU time (the machine may be shared)
        point = {"update": update, "seconds": round(elapsed, 1), "cpu_seconds": cpu, "games": total_games}
        point.update(info)
        point.update(losses)
        if update == 1 or update % args.print_every == 0:
            point["win_vs_random"] = win_rate_vs_random(net, board, args.eval_games, seed=update)
            print(
                f"update {update:>4}  {elapsed:>6.0f}s (CPU {cpu:>5.0f}s)  games {total_games:>7}  "
                f"decisions {total_decisions:>8}  "
                f"entropy {losses['entropy']:.2f}  value loss {losses['value']:.3f}  "
                f"Red wins {info['red_win_share']:.0%}  vs random: win {point['win_vs_random']:.0%}",
                flush=True,
            )
        log.append(point)
        if elapsed > args.minutes * 60:
            break
    path = out / "policy.pt"
    net.save(path)
    settings = {k: v for k, v in vars(args).items() if k != "out"}
    (out / "log.json").write_text(json.dumps({"settings": settings, "log": log}, indent=1), encoding="utf-8")
    print(f"saved {path} after {total_games} games ({time.perf_counter() - start:.0f}s)")
    return path


def arena(path: Path, args: argparse.Namespace) -> dict[str, Any]:
    """The trained policy against random, greedy and MCTS in the arena; returns results.json.

    The arena runs inside the output folder so that the policy's spec (its name in the tables)
    stays short: ``selfplay_ppo.SelfPlayAgent:path=policy.pt``.
    """
    from carnac_env.arena import run_arena

    sys.path.insert(0, str(Path(__file__).resolve().parent))  # so the spec's module imports by name
    spec = f"selfplay_ppo.SelfPlayAgent:path={path.name}"
    opponents = ["random", "greedy", args.mcts]
    print(f"arena on {args.board}: the policy against {', '.join(opponents)}, {args.arena_games} games per pair")
    previous = os.getcwd()
    where = path.parent / "arena"  # as the caller names it: the arena runs inside path.parent

    def echo(line: str) -> None:  # the arena names its files from inside that folder
        print(line.replace(": arena/", f": {where}/"))

    os.chdir(path.parent)
    try:
        return run_arena(
            [spec, *opponents],
            "arena",
            board=args.board,
            games=args.arena_games,
            seed=args.seed,
            workers=args.workers,
            progress=not SMOKE,
            echo=echo,
        )
    finally:
        os.chdir(previous)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options; ``CARNAC_SMOKE=1`` shrinks every budget to seconds."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--board", default="small")
    p.add_argument("--envs", type=int, default=8 if SMOKE else 64, help="games played at once")
    p.add_argument("--batch", type=int, default=64 if SMOKE else 4096, help="decisions per PPO update")
    p.add_argument("--minibatch", type=int, default=64 if SMOKE else 256)
    p.add_argument("--epochs", type=int, default=1 if SMOKE else 4)
    p.add_argument("--updates", type=int, default=2 if SMOKE else 100_000, help="stop after this many updates")
    p.add_argument("--minutes", type=float, default=1.0 if SMOKE else 10.0, help="stop after this much training time")
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--clip", type=float, default=0.2)
    p.add_argument("--ent-coef", type=float, default=0.01)
    p.add_argument("--channels", type=int, default=8 if SMOKE else 64)
    p.add_argument("--augment", action="store_true", help="train on every symmetric copy of each batch too")
    p.add_argument("--print-every", type=int, default=1 if SMOKE else 10, help="updates between log lines")
    p.add_argument("--eval-games", type=int, default=4 if SMOKE else 200, help="games against random per log line")
    p.add_argument("--arena-games", type=int, default=2 if SMOKE else 40, help="games per pair in the arena")
    p.add_argument("--mcts", default="mcts:sims=10" if SMOKE else "mcts:sims=200", help="the MCTS opponent's spec")
    p.add_argument("--workers", type=int, default=1, help="arena worker processes")
    p.add_argument("--no-arena", action="store_true", help="skip the arena evaluation")
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads (1 is fastest for this small network)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="runs/selfplay-ppo")
    args = p.parse_args(argv)
    make_board(args.board)  # a clear error for an unknown board, before any work
    return args


def main(argv: list[str] | None = None) -> None:
    """Train (``OUT/policy.pt``), then, unless ``--no-arena``, play the policy in the arena."""
    args = parse_args(argv)
    path = train(args)
    if not args.no_arena:
        arena(path, args)


if __name__ == "__main__":
    main()
