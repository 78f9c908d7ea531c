"""The training loop: bootstrap, self-play, replay, checkpoints and the learning curve.

One :class:`Trainer` owns an output folder::

    DIR/checkpoint.pt     everything needed to resume (network, optimiser, replay buffer,
                          random generators, counters, curve); written to a temporary file
                          and renamed, so a kill -9 at any moment leaves the last good one
    DIR/model.npz         the latest network as a numpy model (``az:model=DIR/model.npz``)
    DIR/best.npz          the network with the best score against greedy so far
    DIR/curve.csv, curve.json, curve.png   the learning curve (png with matplotlib)
    DIR/config.json       the settings of the run
    DIR/log.txt           one line per iteration

An *iteration* plays ``games`` complete games (greedy bootstrap games for the first
``bootstrap_iterations`` iterations, PUCT self-play afterwards), adds their positions to the
replay buffer and takes ``train_steps`` gradient steps on minibatches drawn from it, each
position under a random board symmetry (:mod:`carnac_env.symmetry`). Every ``eval_every``
iterations the network, with a small search, plays ``eval_games`` games against ``greedy``
and against ``mcts:sims=<mcts_sims>`` (seats alternating), and the win rates join the curve.

With ``selfplay_shards`` S > 1, an iteration draws S seeds from the run's generator and
splits its games into S shards (:func:`~carnac_env.train.selfplay.split_games`), each played
with a generator of its own seed; the samples join the buffer in shard order. The shards run
in this process, or on the ``players`` given to the trainer
(:mod:`carnac_env.train.workers`: local processes or Ray actors) with the same results, since
the players are not part of the settings.

The checkpoint is written at the end of every iteration; a run started on a folder that
holds one resumes from it (settings from the checkpoint, except the iteration limit and the
time budget, which may come from the new command). An interrupted iteration leaves nothing
behind and is played again, the same, on resume.
"""

from __future__ import annotations

import csv
import json
import math
import os
import platform
import time
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch.nn import functional

from carnac_env.agents.az import AZAgent, PolicyValueNet
from carnac_env.agents.base import make
from carnac_env.core.boards import make_board
from carnac_env.core.game import GameState
from carnac_env.errors import CarnacError
from carnac_env.symmetry import symmetries, symmetry
from carnac_env.train.config import Config, check_shards
from carnac_env.train.model import build, to_numpy
from carnac_env.train.selfplay import Samples, Shard, merge, play_shard, split_games


def _atomic_json(path: Path, data: Any) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    os.replace(tmp, path)


class Replay:
    """A ring buffer of training positions (numpy arrays)."""

    def __init__(self, capacity: int, obs_shape: tuple[int, ...], num_actions: int) -> None:
        self.capacity = capacity
        self.observations = np.zeros((capacity, *obs_shape), dtype=np.int8)
        self.masks = np.zeros((capacity, num_actions), dtype=bool)
        self.policies = np.zeros((capacity, num_actions), dtype=np.float32)
        self.values = np.zeros(capacity, dtype=np.float32)
        self.size = 0
        self.next = 0

    def add(self, samples: Samples) -> None:
        """Append positions, overwriting the oldest when full."""
        for k in range(len(samples)):
            i = self.next
            self.observations[i] = samples.observations[k]
            self.masks[i] = samples.masks[k]
            self.policies[i] = samples.policies[k]
            self.values[i] = samples.values[k]
            self.next = (i + 1) % self.capacity
            self.size = min(self.size + 1, self.capacity)

    def state(self) -> dict[str, Any]:
        """The buffer's contents, for a checkpoint."""
        n = self.size
        return {
            "observations": self.observations[:n].copy(),
            "masks": self.masks[:n].copy(),
            "policies": self.policies[:n].copy(),
            "values": self.values[:n].copy(),
            "next": self.next,
        }

    def load(self, data: dict[str, Any]) -> None:
        """Restore :meth:`state`."""
        n = len(data["values"])
        self.observations[:n] = data["observations"]
        self.masks[:n] = data["masks"]
        self.policies[:n] = data["policies"]
        self.values[:n] = data["values"]
        self.size, self.next = n, int(data["next"])


class Trainer:
    """Runs (or resumes) a training run in ``out``; see the module docstring.

    Args:
        out: the output folder (created if missing).
        config: the settings of a new run; when ``out`` holds a checkpoint its settings are
            used instead (``config`` must then name the same board, or be None).
        progress: show a tqdm progress bar.
        iterations: overrides the number of iterations (of a new or a resumed run).
        players: where the shards of a run with ``selfplay_shards > 1`` are played: an open
            player of :func:`carnac_env.train.workers.shard_players` (local processes or Ray
            actors), or None for this process. The results do not depend on it.
    """

    def __init__(
        self,
        out: str | os.PathLike,
        config: Config | None = None,
        progress: bool = True,
        iterations: int | None = None,
        players: Any = None,
    ) -> None:
        self.out = Path(out)
        self.progress = progress
        self.checkpoint_path = self.out / "checkpoint.pt"
        checkpoint = None
        if self.checkpoint_path.exists():
            checkpoint = torch.load(self.checkpoint_path, weights_only=False)
            saved = Config(**checkpoint["config"])
            if config is not None and config.board != saved.board:
                raise CarnacError(
                    f"{self.checkpoint_path} is a run on board {saved.board!r}, not {config.board!r}; "
                    "expected the same board or another --out"
                )
            config = saved
        if iterations is not None and config is not None:
            config.iterations = int(iterations)
        self.config = config or Config()
        c = self.config
        check_shards(c.selfplay_shards, c.games)
        self.players = players
        self.out.mkdir(parents=True, exist_ok=True)
        torch.set_num_threads(max(1, c.threads))
        self.board = make_board(c.board)
        torch.manual_seed(c.seed)
        self.net = build({"channels": c.channels, "blocks": c.blocks, "hidden": c.hidden}, self.board)
        self.optimizer = torch.optim.AdamW(self.net.parameters(), lr=c.lr, weight_decay=c.weight_decay)
        self.replay = Replay(c.buffer, (self.board.rows, self.board.cols, 9), self.board.num_actions)
        self.rng = np.random.default_rng(c.seed)
        self.transforms = [symmetry(self.board, name) for name in symmetries(self.board)]
        self.iteration = 0
        self.games_played = 0
        self.positions = 0
        self.steps = 0
        self.wall = 0.0
        self.cpu = 0.0
        self.curve: list[dict[str, Any]] = []
        self.best_score = -1.0
        if checkpoint is None and c.init:
            self._load_initial_weights(c.init)
        if checkpoint is not None:
            self.net.load_state_dict(checkpoint["net"])
            self.optimizer.load_state_dict(checkpoint["optimizer"])
            self.replay.load(checkpoint["replay"])
            self.rng.bit_generator.state = checkpoint["rng"]
            torch.set_rng_state(checkpoint["torch_rng"])
            for key in ("iteration", "games_played", "positions", "steps", "wall", "curve", "best_score"):
                setattr(self, key, checkpoint[key])
            self.cpu = checkpoint.get("cpu", 0.0)
        _atomic_json(self.out / "config.json", asdict(self.config))

    # ---------------------------------------------------------------- pieces
    def _load_initial_weights(self, path: str) -> None:
        """Start from the weights of a numpy model (for example one trained on another board:
        the network is fully convolutional, so it fits any board size)."""
        model = PolicyValueNet.load(path)
        c = self.config
        mine = {"channels": c.channels, "blocks": c.blocks, "hidden": c.hidden}
        theirs = dict(model.header["architecture"])
        if {k: int(theirs.get(k, -1)) for k in mine} != mine:
            raise CarnacError(
                f"--init model {path!r} has architecture {theirs}; this run expects {mine} "
                "(pass the same --channels, --blocks and --hidden)"
            )
        self.net.load_state_dict({name: torch.from_numpy(value.copy()) for name, value in model.params.items()})

    def numpy_net(self):
        """The current network as a numpy :class:`~carnac_env.agents.az.PolicyValueNet`."""
        return to_numpy(self.net, self.board, self.training_record())

    def training_record(self) -> dict[str, Any]:
        """What a model card needs: settings, counters, time, machine."""
        return {
            "config": asdict(self.config),
            "iteration": self.iteration,
            "games": self.games_played,
            "positions": self.positions,
            "steps": self.steps,
            "wall_seconds": round(self.wall, 1),
            "cpu_seconds": round(self.cpu, 1),
            "machine": f"{platform.machine()} {platform.processor() or ''} {os.cpu_count()} cpus".strip(),
            "torch": torch.__version__,
        }

    def train_step(self) -> dict[str, float]:
        """One gradient step on a minibatch from the replay buffer, under random symmetries."""
        c = self.config
        idx = self.rng.integers(self.replay.size, size=min(c.batch_size, self.replay.size))
        which = self.rng.integers(len(self.transforms), size=len(idx))
        obs, masks, policies = [], [], []
        values = []
        for t, transform in enumerate(self.transforms):
            chosen = idx[which == t]
            if not len(chosen):
                continue
            obs.append(transform.observation(self.replay.observations[chosen]))
            masks.append(transform.mask(self.replay.masks[chosen]))
            policies.append(transform.mask(self.replay.policies[chosen]))
            values.append(self.replay.values[chosen])
        obs_t = torch.from_numpy(np.concatenate(obs))
        mask_t = torch.from_numpy(np.concatenate(masks))
        target_t = torch.from_numpy(np.concatenate(policies))
        value_t = torch.from_numpy(np.concatenate(values))
        self.net.train()
        logits, value = self.net(obs_t)
        logits = logits.masked_fill(~mask_t, -1e9)
        policy_loss = -(target_t * functional.log_softmax(logits, dim=1)).sum(1).mean()
        value_loss = functional.mse_loss(value, value_t)
        loss = policy_loss + value_loss
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        self.steps += 1
        return {"loss": loss.item(), "policy_loss": policy_loss.item(), "value_loss": value_loss.item()}

    def buffer_loss(self) -> float:
        """The loss (policy cross-entropy plus value squared error) over the whole replay
        buffer as it stands, without augmentation or a gradient step."""
        n = self.replay.size
        self.net.eval()
        with torch.no_grad():
            logits, value = self.net(torch.from_numpy(self.replay.observations[:n]))
            logits = logits.masked_fill(~torch.from_numpy(self.replay.masks[:n]), -1e9)
            target = torch.from_numpy(self.replay.policies[:n])
            policy_loss = -(target * functional.log_softmax(logits, dim=1)).sum(1).mean()
            value_loss = functional.mse_loss(value, torch.from_numpy(self.replay.values[:n]))
        return float(policy_loss + value_loss)

    def evaluate(self) -> dict[str, Any]:
        """Win rates (draws count half) of the current network with ``eval_sims`` simulations
        against greedy and against mcts, ``eval_games`` games each, seats alternating."""
        c = self.config
        net = self.numpy_net()
        path = self.out / "eval-model.npz"
        net.save(path)
        row: dict[str, Any] = {}
        for label, spec in (("greedy", "greedy"), ("mcts", f"mcts:sims={c.mcts_sims}")):
            score = 0.0
            for game in range(c.eval_games):
                seed = c.seed * 100_003 + self.iteration * 1009 + game
                agents = [AZAgent(seed=seed, sims=c.eval_sims, model=str(path)), make(spec, seed=seed)]
                az_seat = game % 2
                seats = agents if az_seat == 0 else agents[::-1]
                state = GameState(self.board)
                while not state.is_over:
                    state.apply(seats[state.to_act].choose(state))
                score += (state.result().reward(az_seat) + 1) / 2
            rate = score / c.eval_games
            row[f"vs_{label}"] = rate
            clipped = min(max(rate, 0.5 / c.eval_games), 1 - 0.5 / c.eval_games)
            row[f"elo_vs_{label}"] = round(400 * math.log10(clipped / (1 - clipped)), 1)
        path.unlink(missing_ok=True)
        return row

    def save_checkpoint(self) -> None:
        """Write the checkpoint atomically (temporary file, then rename)."""
        data = {
            "config": asdict(self.config),
            "net": self.net.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "replay": self.replay.state(),
            "rng": self.rng.bit_generator.state,
            "torch_rng": torch.get_rng_state(),
            "iteration": self.iteration,
            "games_played": self.games_played,
            "positions": self.positions,
            "steps": self.steps,
            "wall": self.wall,
            "cpu": self.cpu,
            "curve": self.curve,
            "best_score": self.best_score,
        }
        tmp = self.checkpoint_path.with_name("checkpoint.pt.tmp")
        torch.save(data, tmp)
        os.replace(tmp, self.checkpoint_path)

    def write_curve(self) -> None:
        """curve.json, curve.csv and (with matplotlib) curve.png."""
        _atomic_json(self.out / "curve.json", self.curve)
        keys: list[str] = []
        for row in self.curve:
            keys.extend(k for k in row if k not in keys)
        tmp = self.out / "curve.csv.tmp"
        with open(tmp, "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=keys)
            writer.writeheader()
            writer.writerows(self.curve)
        os.replace(tmp, self.out / "curve.csv")
        try:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            return
        rated = [r for r in self.curve if "vs_greedy" in r]
        fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
        x = [r["games"] for r in self.curve]
        top.plot(x, [r["loss"] for r in self.curve], label="loss")
        top.plot(x, [r["value_loss"] for r in self.curve], label="value loss")
        top.set_ylabel("loss")
        top.legend()
        if rated:
            rx = [r["games"] for r in rated]
            bottom.plot(rx, [r["vs_greedy"] for r in rated], "o-", label="vs greedy")
            bottom.plot(rx, [r["vs_mcts"] for r in rated], "s-", label=f"vs mcts:sims={self.config.mcts_sims}")
            bottom.legend()
        bottom.axhline(0.5, color="grey", lw=0.5)
        bottom.set_ylim(-0.02, 1.02)
        bottom.set_ylabel(f"win rate (az:sims={self.config.eval_sims})")
        bottom.set_xlabel("games played")
        fig.suptitle(f"AlphaZero training on {self.config.board}")
        fig.tight_layout()
        fig.savefig(self.out / "curve.png", dpi=80)
        plt.close(fig)

    def log(self, text: str) -> None:
        with open(self.out / "log.txt", "a") as handle:
            handle.write(text + "\n")

    def play_games(self, kind: str, net: PolicyValueNet | None) -> tuple[Samples, dict[str, int], float]:
        """An iteration's games (``kind`` "greedy" or "selfplay" with ``net``): their samples,
        statistics and the CPU seconds that workers spent on them (0 in this process).

        One shard plays every game with the run's generator; S shards take S seeds from it and
        play on ``self.players`` (or here, one after the other) with the same results."""
        c = self.config

        def shard(games: int, seed: int) -> Shard:
            return Shard(kind, games, seed, c.bootstrap_temperature, c.sims, c.c, c.temperature_moves)

        if c.selfplay_shards == 1:
            return (*play_shard(self.board, shard(c.games, 0), net, self.rng), 0.0)
        seeds = self.rng.integers(2**63, size=c.selfplay_shards)
        shards = [shard(games, int(seed)) for games, seed in zip(split_games(c.games, c.selfplay_shards), seeds)]
        if self.players is None:
            return (*merge([play_shard(self.board, s, net) for s in shards]), 0.0)
        results = self.players.play(self.board, net, shards)
        return (*merge([(samples, stats) for samples, stats, _ in results]), sum(cpu for _, _, cpu in results))

    # ---------------------------------------------------------------- the loop
    def run_iteration(self) -> dict[str, Any]:
        """One iteration (games, training, maybe evaluation, checkpoint); returns its curve row."""
        c = self.config
        start = time.perf_counter()
        cpu_start = time.process_time()
        if self.iteration < c.bootstrap_iterations:
            kind, net = "greedy", None
        else:
            self.net.eval()
            kind, net = "selfplay", self.numpy_net()
        samples, stats, worker_cpu = self.play_games(kind, net)
        self.replay.add(samples)
        self.games_played += stats["games"]
        self.positions += stats["positions"]
        losses = [self.train_step() for _ in range(c.train_steps)]
        self.iteration += 1
        row: dict[str, Any] = {
            "iteration": self.iteration,
            "kind": kind,
            "games": self.games_played,
            "positions": self.positions,
            "steps": self.steps,
        }
        for key in ("loss", "policy_loss", "value_loss"):
            row[key] = round(float(np.mean([loss[key] for loss in losses])), 4)
        row["first_loss"] = round(losses[0]["loss"], 4)
        if c.eval_every and self.iteration % c.eval_every == 0:
            self.net.eval()
            row.update(self.evaluate())
        self.wall += time.perf_counter() - start
        self.cpu += time.process_time() - cpu_start + worker_cpu
        row["wall_seconds"] = round(self.wall, 1)
        row["cpu_seconds"] = round(self.cpu, 1)
        self.curve.append(row)
        net = self.numpy_net()
        net.save(self.out / "model.npz")
        if "vs_greedy" in row:
            score = row["vs_greedy"] + 0.5 * row["vs_mcts"]
            if score >= self.best_score:
                self.best_score = score
                net.header["training"]["evaluation"] = {k: row[k] for k in row if k.startswith(("vs_", "elo_"))}
                net.save(self.out / "best.npz")
        self.save_checkpoint()
        self.write_curve()
        self.log(json.dumps(row))
        return row

    def run(self, minutes: float = 0.0) -> list[dict[str, Any]]:
        """Iterate up to ``config.iterations`` (counting those already done), or until
        ``minutes`` of wall time have passed in this call (0: no limit)."""
        c = self.config
        deadline = time.monotonic() + minutes * 60 if minutes else None
        remaining = max(0, c.iterations - self.iteration)
        bar = None
        if self.progress:
            from tqdm import tqdm

            bar = tqdm(total=c.iterations, initial=self.iteration, desc=f"az {c.board}", unit="it")
        rows = []
        try:
            for _ in range(remaining):
                row = self.run_iteration()
                rows.append(row)
                if bar is not None:
                    shown = {"games": row["games"], "loss": row["loss"]}
                    if "vs_greedy" in row:
                        shown.update(greedy=row["vs_greedy"], mcts=row["vs_mcts"])
                    bar.set_postfix(shown)
                    bar.update(1)
                if deadline is not None and time.monotonic() >= deadline:
                    break
        finally:
            if bar is not None:
                bar.close()
        return rows


def config_from(values: dict[str, Any]) -> Config:
    """A :class:`Config` from a dict of settings (unknown keys raise CarnacError)."""
    known = {f.name for f in fields(Config)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise CarnacError(f"unknown training settings {unknown}; expected some of {sorted(known)}")
    return Config(**values)
