"""The training loop: bootstrap, self-play, replay, checkpoints and the learning curve.

One :class:`Trainer` owns an output folder::

    DIR/checkpoint.pt     everything needed to resume (network, optimiser, replay buffer,
                          random generators, counters, curve): tensors and plain values only,
                          read back with ``torch.load(weights_only=True)`` and checked field by
                          field; written to a temporary file and renamed, so a kill -9 at any
                          moment leaves the last good one
    DIR/model.npz         the latest network as a numpy model (``az:model=DIR/model.npz``)
    DIR/best.npz          the network with the best evaluation so far
    DIR/curve.csv, curve.json, curve.png   the learning curve (png with matplotlib)
    DIR/config.json       the settings of the run
    DIR/log.txt           one JSON line per iteration, rewritten from the checkpoint's curve

An *iteration* plays ``games`` complete games (greedy bootstrap games for the first
``bootstrap_iterations`` iterations, self-play afterwards, each opening with up to ``openings``
random plies), adds their positions to the replay buffer (``buffer`` positions, the oldest out
first, so the bootstrap games age out) and takes ``train_steps`` gradient steps on minibatches
drawn from it, each position under a random board symmetry (:mod:`carnac_env.symmetry`).

The loss: the cross-entropy of the masked policy against the search's target, the squared
error of the value against ``(1 - value_search - value_playouts) * result + value_search *
search value + value_playouts * playout mean``, and, with ``ownership`` > 0, that weight times
the cross-entropy of the ownership head against each square's final state.

Every ``eval_every`` iterations the network, with ``eval_sims`` simulations, plays
``eval_games`` games against ``greedy`` and as many against ``mcts:sims=<mcts_sims>``, from
seeded random openings of ``eval_openings`` plies, each opening once from each seat (the same
openings at every evaluation), and the win rates join the curve; ``best.npz`` is replaced when
``vs_greedy + vs_mcts / 2`` is at least as good as before.

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
import io
import json
import math
import os
import platform
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch.nn import functional

from carnac_env import _files
from carnac_env.agents import make
from carnac_env.agents.az import AZAgent
from carnac_env.arena.openings import random_opening
from carnac_env.core.boards import make_board
from carnac_env.core.game import GameState
from carnac_env.errors import CarnacError
from carnac_env.models import PolicyValueNet, load, save
from carnac_env.symmetry import symmetries, symmetry
from carnac_env.train.config import Config, config_from
from carnac_env.train.model import build, to_numpy
from carnac_env.train.selfplay import Samples, Shard, merge, play_shard, split_games

#: What a checkpoint says it is.
CHECKPOINT_FORMAT = "carnac-train-checkpoint"
CHECKPOINT_VERSION = 2
#: The counters a checkpoint holds.
COUNTERS = ("iteration", "games_played", "positions", "steps")


class Replay:
    """A ring buffer of training positions (numpy arrays)."""

    FIELDS = ("observations", "masks", "policies", "values", "search_values", "playout_values", "ownership")

    def __init__(self, capacity: int, obs_shape: tuple[int, ...], num_actions: int) -> None:
        self.capacity = capacity
        squares = obs_shape[0] * obs_shape[1]
        self.shapes = {
            "observations": ((*obs_shape,), np.int8),
            "masks": ((num_actions,), np.bool_),
            "policies": ((num_actions,), np.float32),
            "values": ((), np.float32),
            "search_values": ((), np.float32),
            "playout_values": ((), np.float32),
            "ownership": ((squares,), np.int8),
        }
        for name, (shape, dtype) in self.shapes.items():
            setattr(self, name, np.zeros((capacity, *shape), dtype=dtype))
        self.size = 0
        self.next = 0

    def add(self, samples: Samples) -> None:
        """Append positions, overwriting the oldest when full."""
        k = len(samples)
        if k >= self.capacity:  # only the newest fit
            keep = slice(k - self.capacity, k)
            for name in self.FIELDS:
                getattr(self, name)[:] = getattr(samples, name)[keep]
            self.size, self.next = self.capacity, 0
            return
        index = (self.next + np.arange(k)) % self.capacity
        for name in self.FIELDS:
            getattr(self, name)[index] = getattr(samples, name)
        self.next = int((self.next + k) % self.capacity)
        self.size = min(self.size + k, self.capacity)

    def state(self) -> dict[str, Any]:
        """The buffer's contents as tensors, for a checkpoint."""
        n = self.size
        data: dict[str, Any] = {name: torch.from_numpy(getattr(self, name)[:n].copy()) for name in self.FIELDS}
        data["next"] = self.next
        return data

    def load(self, data: Any, source: str) -> None:
        """Restore :meth:`state`, checking every field.

        Raises:
            CarnacError: a missing field, a wrong type, dtype or shape, or counts that do not fit.
        """
        if not isinstance(data, dict):
            raise CarnacError(f"{source}: field 'replay' is {type(data).__name__}, expected a mapping")
        size = None
        arrays = {}
        for name, (shape, dtype) in self.shapes.items():
            value = data.get(name)
            if not isinstance(value, torch.Tensor):
                raise CarnacError(f"{source}: field replay.{name} is missing or not a tensor")
            array = value.numpy()
            if array.dtype != dtype or array.shape[1:] != shape:
                raise CarnacError(
                    f"{source}: field replay.{name} is {array.dtype} {tuple(array.shape)}, expected {np.dtype(dtype)} "
                    f"(N, {', '.join(map(str, shape))}) for this board"
                )
            if size is None:
                size = len(array)
            if len(array) != size or size > self.capacity:
                raise CarnacError(
                    f"{source}: field replay.{name} has {len(array)} rows; expected {size} in every field and at most "
                    f"the buffer's {self.capacity}"
                )
            arrays[name] = array
        nxt = data.get("next")
        if isinstance(nxt, bool) or not isinstance(nxt, int) or not 0 <= nxt < self.capacity:
            raise CarnacError(f"{source}: field replay.next={nxt!r}; expected a whole number in 0..{self.capacity - 1}")
        if size < self.capacity and nxt != size % self.capacity:
            raise CarnacError(f"{source}: field replay.next={nxt} does not fit a buffer holding {size} positions")
        if not np.isfinite(arrays["policies"]).all() or not np.isfinite(arrays["values"]).all():
            raise CarnacError(f"{source}: field replay holds NaN or infinite targets")
        for name, array in arrays.items():
            getattr(self, name)[:size] = array
        self.size, self.next = int(size), int(nxt)


class Trainer:
    """Runs (or resumes) a training run in ``out``; see the module docstring.

    The trainer owns ``out`` from its creation to :meth:`close` (or the end of a ``with``
    block): a second trainer, arena or evaluation on the same folder is refused at once.

    Args:
        out: the output folder (created if missing).
        config: the settings of a new run; when ``out`` holds a checkpoint its settings are
            used instead (``config`` must then name the same board, or be None).
        progress: show a tqdm progress bar.
        iterations: overrides the number of iterations (of a new or a resumed run).
        players: where the shards of a run with ``selfplay_shards > 1`` are played: an open
            player of :func:`carnac_env.train.workers.shard_players` (local processes or Ray
            actors), or None for this process. The results do not depend on it.

    Raises:
        CarnacError: a bad setting, a folder in use by another run, or a checkpoint that is
            not one or does not fit (the message names the file and the field).
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
        self._held = ExitStack()
        self._held.enter_context(_files.lock_folder(self.out, "train"))
        try:
            self._open(config, iterations, players)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Release the output folder (another run may use it from now on)."""
        self._held.close()

    def __enter__(self) -> Trainer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _open(self, config: Config | None, iterations: int | None, players: Any) -> None:
        checkpoint = self._read_checkpoint() if self.checkpoint_path.exists() else None
        if checkpoint is not None:
            saved = config_from(checkpoint["config"])
            if config is not None and config.board != saved.board:
                raise CarnacError(
                    f"{self.checkpoint_path} is a run on board {saved.board!r}, not {config.board!r}; "
                    "expected the same board or another --out"
                )
            config = saved
        self.config = config or Config()
        if iterations is not None:
            self.config.iterations = iterations
        c = self.config.check()
        self.players = players
        torch.set_num_threads(c.threads)
        self.board = make_board(c.board)
        torch.manual_seed(c.seed)
        self.architecture = {
            "channels": c.channels,
            "blocks": c.blocks,
            "hidden": c.hidden,
            "ownership": c.ownership > 0,
        }
        self.net = build(self.architecture, self.board)
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
            self._restore(checkpoint)
            self.write_log()  # a line lost to a kill between checkpoint and log comes back
        _files.write_text(self.out / "config.json", json.dumps(c.as_dict(), indent=1, sort_keys=True) + "\n")

    # ---------------------------------------------------------------- checkpoints
    def _read_checkpoint(self) -> dict[str, Any]:
        """The checkpoint's data, read without running code (``weights_only=True``)."""
        source = str(self.checkpoint_path)
        try:
            data = torch.load(self.checkpoint_path, map_location="cpu", weights_only=True)
        except Exception as err:  # torch raises many kinds for a bad file (UnpicklingError, RuntimeError, ...)
            raise CarnacError(
                f"{source} is not a checkpoint this carnac_env can read ({type(err).__name__}: "
                f"{str(err).splitlines()[0][:200] if str(err) else 'no detail'}); expected a file written by "
                "carnac train (a run from an older version cannot be resumed: start it in a new --out)"
            ) from None
        if not isinstance(data, dict) or data.get("format") != CHECKPOINT_FORMAT:
            raise CarnacError(f"{source} is not a carnac training checkpoint (no format {CHECKPOINT_FORMAT!r})")
        if data.get("version") != CHECKPOINT_VERSION or isinstance(data.get("version"), bool):
            raise CarnacError(
                f"{source} has checkpoint version {data.get('version')!r}; this carnac_env reads {CHECKPOINT_VERSION}"
            )
        if not isinstance(data.get("config"), dict):
            raise CarnacError(f"{source}: field 'config' is missing or not a mapping")
        try:
            config_from(data["config"])
        except CarnacError as err:
            raise CarnacError(f"{source}: field 'config': {err}") from None
        return data

    def _restore(self, data: dict[str, Any]) -> None:
        """Load a checkpoint read by :meth:`_read_checkpoint` into this trainer, field by field."""
        source = str(self.checkpoint_path)

        def field(name: str, kind: type | tuple[type, ...]) -> Any:
            value = data.get(name)
            if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
                raise CarnacError(f"{source}: field {name!r} is {type(value).__name__}, expected {kind}")
            return value

        try:
            self.net.load_state_dict(field("net", dict), strict=True)
        except RuntimeError as err:
            detail = str(err).splitlines()[0]
            raise CarnacError(f"{source}: field 'net' does not fit the run's network ({detail})") from None
        try:
            self.optimizer.load_state_dict(field("optimizer", dict))
        except (ValueError, KeyError, TypeError, RuntimeError) as err:
            raise CarnacError(f"{source}: field 'optimizer' does not fit the network ({err})") from None
        self.replay.load(data.get("replay"), source)
        try:
            self.rng.bit_generator.state = field("rng", dict)
        except (ValueError, KeyError, TypeError) as err:
            raise CarnacError(f"{source}: field 'rng' is not a PCG64 generator state ({err})") from None
        try:
            torch.set_rng_state(field("torch_rng", torch.Tensor))
        except (RuntimeError, TypeError) as err:
            raise CarnacError(f"{source}: field 'torch_rng' is not a PyTorch generator state ({err})") from None
        for name in COUNTERS:
            value = field(name, int)
            if value < 0:
                raise CarnacError(f"{source}: field {name!r}={value}; expected a whole number >= 0")
            setattr(self, name, value)
        for name in ("wall", "cpu", "best_score"):
            value = field(name, (int, float))
            if not math.isfinite(value):
                raise CarnacError(f"{source}: field {name!r}={value!r}; expected a finite number")
            setattr(self, name, float(value))
        curve = field("curve", list)
        if not all(isinstance(row, dict) for row in curve) or len(curve) != self.iteration:
            raise CarnacError(f"{source}: field 'curve' must hold one row per iteration ({self.iteration})")
        self.curve = curve

    def save_checkpoint(self) -> None:
        """Write the checkpoint atomically (temporary file, then rename): tensors and plain values."""
        data = {
            "format": CHECKPOINT_FORMAT,
            "version": CHECKPOINT_VERSION,
            "config": self.config.as_dict(),
            "net": self.net.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "replay": self.replay.state(),
            "rng": self.rng.bit_generator.state,
            "torch_rng": torch.get_rng_state(),
            "wall": self.wall,
            "cpu": self.cpu,
            "curve": self.curve,
            "best_score": self.best_score,
            **{name: getattr(self, name) for name in COUNTERS},
        }
        with _files.writing(self.checkpoint_path) as out:
            torch.save(data, out)

    # ---------------------------------------------------------------- pieces
    def _load_initial_weights(self, path: str) -> None:
        """Start from the weights of a numpy model (for example one trained on another board:
        the network is fully convolutional, so it fits any board size). A model without the
        ownership head leaves this run's head as it was initialised."""
        model = load(path)
        theirs = dict(model.header["architecture"])
        mine = {k: self.architecture[k] for k in ("channels", "blocks", "hidden")}
        if {k: theirs.get(k) for k in mine} != mine:
            raise CarnacError(
                f"--init model {path!r} has architecture {theirs}; this run expects {mine} "
                "(pass the same --channels, --blocks and --hidden)"
            )
        state = {name: torch.from_numpy(value.copy()) for name, value in model.params.items()}
        if self.net.has_ownership and not model.has_ownership:
            state.update({k: v for k, v in self.net.state_dict().items() if k.startswith("ownership.")})
        elif model.has_ownership and not self.net.has_ownership:
            state = {k: v for k, v in state.items() if not k.startswith("ownership.")}
        self.net.load_state_dict(state)

    def numpy_net(self) -> PolicyValueNet:
        """The current network as a numpy :class:`~carnac_env.models.PolicyValueNet`."""
        return to_numpy(self.net, self.board, self.training_record())

    def training_record(self) -> dict[str, Any]:
        """What a model card needs: settings, counters, time, machine."""
        return {
            "config": self.config.as_dict(),
            "iteration": self.iteration,
            "games": self.games_played,
            "positions": self.positions,
            "steps": self.steps,
            "wall_seconds": round(self.wall, 1),
            "cpu_seconds": round(self.cpu, 1),
            "machine": f"{platform.machine()} {platform.processor() or ''} {os.cpu_count()} cpus".strip(),
            "torch": torch.__version__,
        }

    def value_targets(self, idx: np.ndarray) -> np.ndarray:
        """The mixed value target of buffer rows ``idx`` (see the module docstring)."""
        c = self.config
        r = self.replay
        z = 1.0 - c.value_search - c.value_playouts
        return (
            z * r.values[idx] + c.value_search * r.search_values[idx] + c.value_playouts * r.playout_values[idx]
        ).astype(np.float32)

    def train_step(self) -> dict[str, float]:
        """One gradient step on a minibatch from the replay buffer, under random symmetries."""
        c = self.config
        idx = self.rng.integers(self.replay.size, size=min(c.batch_size, self.replay.size))
        which = self.rng.integers(len(self.transforms), size=len(idx))
        rows, cols = self.board.rows, self.board.cols
        parts: dict[str, list[np.ndarray]] = {"obs": [], "mask": [], "policy": [], "value": [], "own": []}
        for t, transform in enumerate(self.transforms):
            chosen = idx[which == t]
            if not len(chosen):
                continue
            parts["obs"].append(transform.observation(self.replay.observations[chosen]))
            parts["mask"].append(transform.mask(self.replay.masks[chosen]))
            parts["policy"].append(transform.mask(self.replay.policies[chosen]))
            parts["value"].append(self.value_targets(chosen))
            owned = self.replay.ownership[chosen].reshape(len(chosen), rows, cols, 1)
            parts["own"].append(transform.observation(owned).reshape(len(chosen), -1))
        obs_t, mask_t, target_t, value_t, own_t = (torch.from_numpy(np.concatenate(parts[k])) for k in parts)
        self.net.train()
        logits, value, owned = self.net.forward_all(obs_t)
        logits = logits.masked_fill(~mask_t, -1e9)
        policy_loss = -(target_t * functional.log_softmax(logits, dim=1)).sum(1).mean()
        value_loss = functional.mse_loss(value, value_t)
        loss = policy_loss + value_loss
        losses = {}
        if owned is not None:
            ownership_loss = functional.cross_entropy(owned.reshape(-1, 3), own_t.reshape(-1).long())
            loss = loss + c.ownership * ownership_loss
            losses["ownership_loss"] = ownership_loss.item()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        self.steps += 1
        return {"loss": loss.item(), "policy_loss": policy_loss.item(), "value_loss": value_loss.item(), **losses}

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
            value_loss = functional.mse_loss(value, torch.from_numpy(self.value_targets(np.arange(n))))
        return float(policy_loss + value_loss)

    def evaluate(self) -> dict[str, Any]:
        """Win rates (draws count half) of the current network with ``eval_sims`` simulations
        against greedy and against mcts, ``eval_games`` games each, from the run's evaluation
        openings, each once from each seat."""
        c = self.config
        net = self.numpy_net()
        path = self.out / "eval-model.npz"
        save(net, path)
        row: dict[str, Any] = {}
        try:
            for label, spec in (("greedy", "greedy"), ("mcts", f"mcts:sims={c.mcts_sims}")):
                score = 0.0
                for game in range(c.eval_games):
                    state = GameState(self.board)
                    for action in random_opening(self.board, c.eval_openings, c.seed, game // 2):
                        state.apply(action)
                    agents = [AZAgent(sims=c.eval_sims, model=str(path)), make(spec, seed=c.seed * 100_003 + game)]
                    az_seat = game % 2
                    seats = agents if az_seat == 0 else agents[::-1]
                    while not state.is_over:
                        state.apply(seats[state.to_act].choose(state))
                    score += (state.result().reward(az_seat) + 1) / 2
                rate = score / c.eval_games
                row[f"vs_{label}"] = rate
                clipped = min(max(rate, 0.5 / c.eval_games), 1 - 0.5 / c.eval_games)
                row[f"elo_vs_{label}"] = round(400 * math.log10(clipped / (1 - clipped)), 1)
        finally:
            path.unlink(missing_ok=True)
        return row

    def write_curve(self) -> None:
        """curve.json, curve.csv and (with matplotlib) curve.png."""
        _files.write_text(self.out / "curve.json", json.dumps(self.curve, indent=1, sort_keys=True) + "\n")
        keys: list[str] = []
        for row in self.curve:
            keys.extend(k for k in row if k not in keys)
        text = io.StringIO()
        writer = csv.DictWriter(text, fieldnames=keys)
        writer.writeheader()
        writer.writerows(self.curve)
        _files.write_text(self.out / "curve.csv", text.getvalue())
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
        with _files.writing(self.out / "curve.png") as out:
            fig.savefig(out, format="png", dpi=80)
        plt.close(fig)

    def write_log(self) -> None:
        """log.txt: one JSON line per iteration, from the curve (so it always matches the checkpoint)."""
        _files.write_text(self.out / "log.txt", "".join(json.dumps(row) + "\n" for row in self.curve))

    def _shard(self, kind: str, games: int, seed: int) -> Shard:
        c = self.config
        return Shard(
            kind=kind,
            games=games,
            seed=seed,
            temperature=c.bootstrap_temperature,
            sims=c.sims,
            c=c.c,
            temperature_moves=c.temperature_moves,
            rule=c.rule,
            considered=c.considered,
            openings=c.openings,
            playouts=c.playouts,
        )

    def play_games(self, kind: str, net: PolicyValueNet | None) -> tuple[Samples, dict[str, int], float]:
        """An iteration's games (``kind`` "greedy" or "selfplay" with ``net``): their samples,
        statistics and the CPU seconds that workers spent on them (0 in this process).

        One shard plays every game with the run's generator; S shards take S seeds from it and
        play on ``self.players`` (or here, one after the other) with the same results."""
        c = self.config
        if c.selfplay_shards == 1:
            return (*play_shard(self.board, self._shard(kind, c.games, 0), net, self.rng), 0.0)
        seeds = self.rng.integers(2**63, size=c.selfplay_shards)
        shards = [self._shard(kind, g, int(s)) for g, s in zip(split_games(c.games, c.selfplay_shards), seeds)]
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
        selfplay_seconds = time.perf_counter() - start
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
            "selfplay_seconds": round(selfplay_seconds, 1),
        }
        for key in losses[0]:
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
        save(net, self.out / "model.npz")
        if "vs_greedy" in row:
            score = row["vs_greedy"] + 0.5 * row["vs_mcts"]
            if score >= self.best_score:
                self.best_score = score
                net.header["training"]["evaluation"] = {k: row[k] for k in row if k.startswith(("vs_", "elo_"))}
                save(net, self.out / "best.npz")
        self.save_checkpoint()
        self.write_log()
        self.write_curve()
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


__all__ = ["CHECKPOINT_FORMAT", "CHECKPOINT_VERSION", "Replay", "Trainer", "config_from"]
