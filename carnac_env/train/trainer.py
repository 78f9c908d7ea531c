"""The training loop: bootstrap, self-play, replay, training steps, evaluations, checkpoints.

One :class:`Trainer` owns an output folder::

    DIR/checkpoint.pt     everything needed to resume bit for bit (:mod:`~carnac_env.train.checkpoint`)
    DIR/resume.pt         the same without the replay buffer: small enough to keep in git
    DIR/model.npz         the latest network as a numpy model (``az:model=DIR/model.npz``)
    DIR/best.npz          the network with the best evaluation so far
    DIR/curve.csv, curve.json, curve.png   the learning curve (:mod:`~carnac_env.train.curve`)
    DIR/config.json       the settings of the run
    DIR/log.txt           one JSON line per iteration, rewritten from the checkpoint's curve

An *iteration* plays ``games`` complete games (greedy bootstrap games for the first
``bootstrap_iterations`` iterations, self-play afterwards, each opening with up to ``openings``
random plies), adds their positions to the replay buffer (:mod:`~carnac_env.train.replay`:
``buffer`` positions, the oldest out first, so the bootstrap games age out) and takes
``train_steps`` gradient steps on minibatches drawn from it, each position under a random board
symmetry (:mod:`carnac_env.core.symmetry`).

**One board or many.** A run on one board plays all its games there. A run on ``--board
general`` (:mod:`~carnac_env.train.mix`) shares each iteration's games out in groups of
``games_per_board`` over a weighted mix of boards, custom ones included, and trains one network
that reads the board's rules as inputs (``rules_inputs``); its minibatches hold positions of
every board, one network batch per board shape.

The loss: the cross-entropy of the masked policy against the search's target, the squared
error of the value against ``(1 - value_search - value_playouts) * result + value_search *
search value + value_playouts * playout mean``, with ``ownership`` > 0 that weight times the
cross-entropy of the ownership head against each square's final state, and with ``dolmens`` > 0
that weight times the squared error of the dolmen head against each side's final dolmen count
(over 10).

Every ``eval_every`` iterations the network plays ``greedy`` and ``mcts`` on each evaluated board
(:mod:`~carnac_env.train.evaluation`), and the win rates join the curve; ``best.npz`` is replaced
when ``vs_greedy + vs_mcts / 2`` (means over the boards) is at least as good as before.

With ``selfplay_shards`` S > 1 (one board), or on a mix (one shard per group), an iteration draws
a seed per shard from the run's generator, each shard played with a generator of its own; the
samples join the buffer in shard order. The shards run in this process, or on the ``players``
given to the trainer (:mod:`carnac_env.train.workers`: local processes or Ray actors) with the
same results, since the players are not part of the settings.

The checkpoint is written at the end of every iteration; a run started on a folder that
holds one resumes from it (settings from the checkpoint, except the iteration limit and the
time budget, which may come from the new command). An interrupted iteration leaves nothing
behind and is played again, the same, on resume. The checkpoint is the record: the files an
iteration writes after it (``resume.pt``, ``model.npz``, ``log.txt``, the curves) are brought into
step with it whenever a run opens the folder, even with no iteration left to run, so a kill -9
or a full disk between those writes never leaves them behind for good.
"""

from __future__ import annotations

import json
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
from carnac_env.arena.runner import check_terminated
from carnac_env.core.boards import BOARDS, Board, make_board
from carnac_env.core.symmetry import symmetries, symmetry
from carnac_env.errors import CarnacError
from carnac_env.models import PolicyValueNet, load, model_path, save
from carnac_env.models.network import NUM_PLANES, rules_vector
from carnac_env.train import checkpoint
from carnac_env.train.checkpoint import CHECKPOINT_FORMAT, CHECKPOINT_VERSION, COUNTERS
from carnac_env.train.config import Config, check_schedule_change, config_from
from carnac_env.train.curve import write_curve, write_log
from carnac_env.train.evaluation import evaluate_board
from carnac_env.train.mix import CUSTOM, GENERAL, BoardMix, random_board
from carnac_env.train.model import build, to_numpy
from carnac_env.train.replay import Group, Replay
from carnac_env.train.selfplay import Samples, Shard, board_rules, merge, play_shard, split_games

#: The board a general model's header names (its numbers are the default rules of a call
#: without a board); the header's ``boards`` says what it was trained on.
GENERAL_HEADER_BOARD = "medium"
#: The settings a resumed run may change: what it measures, not what it plays or learns.
EVALUATION_SETTINGS = ("eval_every", "eval_games", "eval_sims", "eval_openings", "eval_boards", "mcts_sims")
#: The dolmen head's target is each side's count divided by this.
DOLMEN_SCALE = 10.0


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
        evaluation: settings of :data:`EVALUATION_SETTINGS` that override a resumed run's (they
            change what the run measures, never what it plays or learns; a change restarts the
            comparison that picks ``best.npz``).
        lr_schedule: a resumed run's new ``lr_schedule`` (see :class:`Config`); only the rates of
            iterations not yet done may change (the run stays the one the new schedule would
            have given from the start). A new run takes it from ``config``.
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
        evaluation: dict[str, Any] | None = None,
        lr_schedule: str | None = None,
    ) -> None:
        self.out = Path(out)
        self.progress = progress
        self.checkpoint_path = self.out / "checkpoint.pt"
        self.resume_path = self.out / "resume.pt"
        self.model_path = self.out / "model.npz"
        self._held = ExitStack()
        self._held.enter_context(_files.lock_folder(self.out, "train"))
        try:
            self._open(config, iterations, players, evaluation or {}, lr_schedule)
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

    def _open(
        self,
        config: Config | None,
        iterations: int | None,
        players: Any,
        evaluation: dict[str, Any],
        lr_schedule: str | None = None,
    ) -> None:
        saved_path = next((p for p in (self.checkpoint_path, self.resume_path) if p.exists()), None)
        data = checkpoint.read(saved_path) if saved_path is not None else None
        if data is not None:
            saved = config_from(data["config"])
            if config is not None and config.board != saved.board:
                raise CarnacError(
                    f"{saved_path} is a run on board {saved.board!r}, not {config.board!r}; "
                    "expected the same board or another --out"
                )
            config = saved
        self.config = config or Config()
        changed = self._override(iterations, evaluation)
        c = self.config.check()
        self.players = players
        torch.set_num_threads(c.threads)
        self.mix = BoardMix.of(c.board, c.mix)
        #: The board of the model header (a general run's: :data:`GENERAL_HEADER_BOARD`).
        self.board = make_board(GENERAL_HEADER_BOARD if c.board == GENERAL else c.board)
        self.eval_boards = [make_board(n) for n in (c.eval_boards.split(",") if c.eval_boards else self.mix.builtin)]
        torch.manual_seed(c.seed)
        init = load(model_path(c.init)) if c.init and data is None else None
        self.architecture = self._architecture(init)
        self.net = build(self.architecture, self.board)
        self.optimizer = torch.optim.AdamW(self.net.parameters(), lr=c.lr, weight_decay=c.weight_decay)
        self.replay = Replay(c.buffer)
        self.rng = np.random.default_rng(c.seed)
        self.iteration = self.games_played = self.positions = self.steps = self.groups = 0
        self.wall = self.cpu = 0.0
        self.curve: list[dict[str, Any]] = []
        self.best_score = -1.0
        self._transforms: dict[tuple[int, int], list[Any]] = {}
        if init is not None:
            self._load_initial_weights(init, c.init)
        if data is not None:
            checkpoint.restore(self, data, str(saved_path))
            if changed:
                self.best_score = -1.0  # the next evaluation, under the new settings, starts the comparison
        if lr_schedule is not None and lr_schedule != c.lr_schedule:
            check_schedule_change(c, lr_schedule, self.iteration)
            c.lr_schedule = lr_schedule
        if data is not None:
            self._sync_files(saved_path == self.checkpoint_path)
        _files.write_text(self.out / "config.json", json.dumps(c.as_dict(), indent=1, sort_keys=True) + "\n")

    def _architecture(self, init: PolicyValueNet | None) -> dict[str, Any]:
        """The network's shape and heads by the settings (and the ``--init`` model, if any)."""
        c = self.config
        reads_rules = self.mix.general or (init is not None and init.reads_rules)
        return {
            "channels": c.channels,
            "blocks": c.blocks,
            "hidden": c.hidden,
            "ownership": c.ownership > 0,
            "rules": c.rules_inputs == "on" or (c.rules_inputs == "auto" and reads_rules),
            "dolmens": c.dolmens > 0,
        }

    def _override(self, iterations: int | None, evaluation: dict[str, Any]) -> dict[str, Any]:
        """Apply a new iteration limit and the :data:`EVALUATION_SETTINGS` given to ``self.config``;
        returns those that changed.

        Raises:
            CarnacError: a setting given that is not one of :data:`EVALUATION_SETTINGS`.
        """
        if iterations is not None:
            self.config.iterations = iterations
        unknown = sorted(set(evaluation) - set(EVALUATION_SETTINGS))
        if unknown:
            raise CarnacError(f"settings {unknown} cannot change on resume; only {', '.join(EVALUATION_SETTINGS)} can")
        changed = {k: v for k, v in evaluation.items() if getattr(self.config, k) != v}
        for key, value in changed.items():
            setattr(self.config, key, value)
        return changed

    # ---------------------------------------------------------------- checkpoints
    def save_checkpoint(self) -> None:
        """Write ``checkpoint.pt`` and ``resume.pt`` (without the replay buffer), each atomically."""
        checkpoint.write(self, self.checkpoint_path)
        checkpoint.write(self, self.resume_path, replay=False)

    # ---------------------------------------------------------------- pieces
    def _load_initial_weights(self, model: PolicyValueNet, path: str) -> None:
        """Start from the weights of a numpy model (for example one trained on another board:
        the network is fully convolutional, so it fits any board size). Heads this run has and
        the model lacks (ownership, dolmens) keep their fresh initialisation; a model that does
        not read the rules gives a run that does its stem for the observation planes, with the
        rules planes' weights zero (so the run starts from the model's very function)."""
        theirs = dict(model.header["architecture"])
        mine = {k: self.architecture[k] for k in ("channels", "blocks", "hidden")}
        if {k: theirs.get(k) for k in mine} != mine:
            raise CarnacError(
                f"--init model {path!r} has architecture {theirs}; this run expects {mine} "
                "(pass the same --channels, --blocks and --hidden)"
            )
        state = self.net.state_dict()
        for name, value in model.params.items():
            if name not in state:
                continue  # a head this run does not train
            value = torch.from_numpy(value.copy())
            if name == "stem.weight" and value.shape != state[name].shape:
                if model.reads_rules:
                    raise CarnacError(f"--init model {path!r} reads the board's rules; pass --rules-inputs on")
                stem = torch.zeros_like(state[name])
                stem[:, :NUM_PLANES] = value
                value = stem
            state[name] = value
        self.net.load_state_dict(state)

    def numpy_net(self) -> PolicyValueNet:
        """The current network as a numpy :class:`~carnac_env.models.PolicyValueNet`."""
        return to_numpy(self.net, self.board, self.training_record(), self.mix.describe() if self.mix.general else None)

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

    def value_targets(self, samples: Samples) -> np.ndarray:
        """The mixed value target of ``samples`` (see the module docstring)."""
        c = self.config
        z = 1.0 - c.value_search - c.value_playouts
        return (
            z * samples.values + c.value_search * samples.search_values + c.value_playouts * samples.playout_values
        ).astype(np.float32)

    def transforms(self, rows: int, cols: int) -> list[Any]:
        """The board symmetries of a ``rows x cols`` board (kept per shape)."""
        shape = (rows, cols)
        if shape not in self._transforms:
            self._transforms[shape] = [symmetry(shape, name) for name in symmetries(shape)]
        return self._transforms[shape]

    def _group_tensors(self, group: Group, which: np.ndarray | None) -> dict[str, torch.Tensor]:
        """A group's inputs and targets as tensors, each position under transform ``which``
        (None: as it is)."""
        s = group.samples
        n = len(s)
        fields = {
            "obs": s.observations,
            "mask": s.masks,
            "policy": s.policies,
            "own": s.ownership.reshape(n, group.rows, group.cols, 1),
        }
        if which is not None:
            order = np.argsort(which, kind="stable")
            out = {k: np.empty_like(v) for k, v in fields.items()}
            for t, transform in enumerate(self.transforms(group.rows, group.cols)):
                chosen = order[which[order] == t]
                if not len(chosen):
                    continue
                out["obs"][chosen] = transform.observation(s.observations[chosen])
                out["mask"][chosen] = transform.mask(s.masks[chosen])
                out["policy"][chosen] = transform.mask(s.policies[chosen])
                out["own"][chosen] = transform.observation(fields["own"][chosen])
            fields = out
        rules = np.stack([rules_vector(b.rows, b.cols, b.megaliths, b.min_dolmen, b.last_tilt) for b in group.boards])
        return {
            "obs": torch.from_numpy(np.ascontiguousarray(fields["obs"])),
            "mask": torch.from_numpy(np.ascontiguousarray(fields["mask"])),
            "policy": torch.from_numpy(np.ascontiguousarray(fields["policy"])),
            "own": torch.from_numpy(np.ascontiguousarray(fields["own"]).reshape(n, -1).astype(np.int64)),
            "value": torch.from_numpy(self.value_targets(s)),
            "dolmens": torch.from_numpy(s.dolmens.astype(np.float32) / DOLMEN_SCALE),
            "rules": torch.from_numpy(rules),
            "megaliths": torch.tensor([float(b.megaliths) for b in group.boards]),
        }

    def _losses(self, t: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """The loss terms of one group's tensors."""
        c = self.config
        logits, value, owned, dolmens = self.net.forward_all(t["obs"], t["rules"], t["megaliths"])
        logits = logits.masked_fill(~t["mask"], -1e9)
        losses = {
            "policy_loss": -(t["policy"] * functional.log_softmax(logits, dim=1)).sum(1).mean(),
            "value_loss": functional.mse_loss(value, t["value"]),
        }
        total = losses["policy_loss"] + losses["value_loss"]
        if owned is not None:
            losses["ownership_loss"] = functional.cross_entropy(owned.reshape(-1, 3), t["own"].reshape(-1))
            total = total + c.ownership * losses["ownership_loss"]
        if dolmens is not None:
            losses["dolmens_loss"] = functional.mse_loss(dolmens, t["dolmens"])
            total = total + c.dolmens * losses["dolmens_loss"]
        losses["loss"] = total
        return losses

    def train_step(self) -> dict[str, float]:
        """One gradient step on a minibatch from the replay buffer, under random symmetries
        (one network batch per board shape, each weighted by its share of the minibatch)."""
        groups = self.replay.sample(self.rng, self.config.batch_size)
        total = sum(len(g.samples) for g in groups)
        self.net.train()
        summed: dict[str, torch.Tensor] = {}
        for group in groups:
            which = self.rng.integers(len(self.transforms(group.rows, group.cols)), size=len(group.samples))
            share = len(group.samples) / total
            for key, value in self._losses(self._group_tensors(group, which)).items():
                summed[key] = summed.get(key, 0.0) + share * value
        self.optimizer.zero_grad()
        summed["loss"].backward()
        self.optimizer.step()
        self.steps += 1
        out = {"loss": summed["loss"].item()}
        out.update({k: v.item() for k, v in summed.items() if k != "loss"})
        return out

    def buffer_loss(self) -> float:
        """The loss (policy cross-entropy plus value squared error) over the whole replay
        buffer as it stands, without augmentation or a gradient step."""
        self.net.eval()
        total, count = 0.0, 0
        with torch.no_grad():
            for group in self.replay.everything():
                losses = self._losses(self._group_tensors(group, None))
                n = len(group.samples)
                total += n * float(losses["policy_loss"] + losses["value_loss"])
                count += n
        return total / max(count, 1)

    def evaluate(self) -> dict[str, Any]:
        """Win rates (draws count half) of the current network with ``eval_sims`` simulations
        against greedy and against mcts, ``eval_games`` games each per evaluated board, from the
        run's evaluation openings, each once from each seat; on several boards, each board's
        (keys ``vs_greedy@BOARD``) and their means (``vs_greedy``, ``vs_mcts``)."""
        net = self.numpy_net()
        if not self.mix.general:
            return evaluate_board(net, self.eval_boards[0], self.config, self.out)
        row: dict[str, Any] = {}
        for board in self.eval_boards:
            row.update(evaluate_board(net, board, self.config, self.out, suffix=f"@{board.name}"))
        for label in ("greedy", "mcts"):
            row[f"vs_{label}"] = round(float(np.mean([row[f"vs_{label}@{b.name}"] for b in self.eval_boards])), 4)
        return row

    def _shard(self, kind: str, games: int, seed: int, board: Board | None = None) -> Shard:
        c = self.config
        return Shard(
            kind=kind,
            games=games,
            seed=seed,
            board=None if board is None else board_rules(board),
            temperature=c.bootstrap_temperature,
            sims=c.sims,
            c=c.c,
            temperature_moves=c.temperature_moves,
            rule=c.rule,
            considered=c.considered,
            openings=c.openings,
            playouts=c.playouts,
            backend=c.selfplay_backend,
        )

    def _play(self, shards: list[Shard], net: PolicyValueNet | None) -> tuple[list[tuple[Samples, dict]], list[float]]:
        """Each shard's samples and statistics (here, or on ``self.players``), and the CPU
        seconds each shard took (here: this process's; on players: the worker's)."""
        if self.players is None:
            results, seconds = [], []
            for shard in shards:
                start = time.process_time()
                results.append(play_shard(self.board, shard, net))
                seconds.append(time.process_time() - start)
            return results, seconds
        played = self.players.play(self.board, net, shards)
        return [(samples, stats) for samples, stats, _ in played], [cpu for _, _, cpu in played]

    def play_games(
        self, kind: str, net: PolicyValueNet | None
    ) -> tuple[list[tuple[Board, Samples]], dict[str, int], float]:
        """An iteration's games (``kind`` "greedy" or "selfplay" with ``net``): their samples by
        board, statistics and the CPU seconds that workers spent on them (0 in this process).

        One board: one shard plays every game with the run's generator, or S shards take S
        seeds from it. A mix: one shard per group of ``games_per_board`` games, on the board the
        mix's schedule gives it (a custom one drawn with the run's generator), each with a seed
        drawn from the run's generator."""
        c = self.config
        if self.mix.general:
            count = max(1, c.games // c.games_per_board)
            names = self.mix.schedule(self.groups, count)
            self.groups += count
            boards = [random_board(self.rng) if name == CUSTOM else BOARDS[name] for name in names]
            seeds = self.rng.integers(2**63, size=count)
            shards = [self._shard(kind, c.games_per_board, int(s), b) for b, s in zip(boards, seeds)]
            results, seconds = self._play(shards, net)
            stats = merge_stats([st for _, st in results])
            for board, spent in zip(boards, seconds):  # the CPU each board's games took, for the curve
                key = f"selfplay_cpu@{board.name}"
                stats[key] = stats.get(key, 0.0) + spent
            worker_cpu = sum(seconds) if self.players is not None else 0.0
            return [(b, samples) for b, (samples, _) in zip(boards, results)], stats, worker_cpu
        if c.selfplay_shards == 1:
            samples, stats = play_shard(self.board, self._shard(kind, c.games, 0), net, self.rng)
            return [(self.board, samples)], stats, 0.0
        seeds = self.rng.integers(2**63, size=c.selfplay_shards)
        shards = [self._shard(kind, g, int(s)) for g, s in zip(split_games(c.games, c.selfplay_shards), seeds)]
        results, seconds = self._play(shards, net)
        samples, stats = merge(results)
        return [(self.board, samples)], stats, sum(seconds) if self.players is not None else 0.0

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
        played, stats, worker_cpu = self.play_games(kind, net)
        selfplay_seconds = time.perf_counter() - start
        for board, samples in played:
            self.replay.add(board, samples)
        self.games_played += stats["games"]
        self.positions += stats["positions"]
        if c.lr_schedule:
            rate = c.lr_at(self.iteration + 1)
            for group in self.optimizer.param_groups:
                group["lr"] = rate
        losses = [self.train_step() for _ in range(c.train_steps)]
        self._check_finite(losses)
        self.iteration += 1
        row: dict[str, Any] = {
            "iteration": self.iteration,
            "kind": kind,
            "games": self.games_played,
            "positions": self.positions,
            "steps": self.steps,
            "selfplay_seconds": round(selfplay_seconds, 1),
        }
        if self.mix.general:
            row["boards"] = " ".join(sorted({b.name for b, _ in played}))
            row.update({k: round(v, 1) for k, v in stats.items() if k.startswith("selfplay_cpu@")})
        for key in losses[0]:
            row[key] = round(float(np.mean([loss[key] for loss in losses])), 4)
        row["first_loss"] = round(losses[0]["loss"], 4)
        row["lr"] = c.lr_at(self.iteration)
        if c.eval_every and self.iteration % c.eval_every == 0:
            self.net.eval()
            row.update(self.evaluate())
        self.wall += time.perf_counter() - start
        self.cpu += time.process_time() - cpu_start + worker_cpu
        row["wall_seconds"] = round(self.wall, 1)
        row["cpu_seconds"] = round(self.cpu, 1)
        self.curve.append(row)
        net = self.numpy_net()
        if "vs_greedy" in row:
            score = row["vs_greedy"] + 0.5 * row["vs_mcts"]
            if score >= self.best_score:
                self.best_score = score
                net.header["training"]["evaluation"] = {k: row[k] for k in row if k.startswith(("vs_", "elo_"))}
                save(net, self.out / "best.npz")
        self.save_checkpoint()
        # after the checkpoint: a kill while it is written leaves model.npz at the saved iteration,
        # never ahead of it (and one between the two is mended on resume, by _sync_model_file)
        save(net, self.model_path)
        write_log(self.out, self.curve)
        write_curve(self.out, self.curve, self.config)
        return row

    def _sync_files(self, from_checkpoint: bool) -> None:
        """Bring every file derived from the resumed state into step with it: the files an
        iteration writes after ``checkpoint.pt`` (``resume.pt``, ``model.npz``, ``log.txt`` and
        the curves) are one iteration behind after a kill, or a full disk, between those writes.
        The checkpoint is the record: each file that holds another iteration is rewritten from
        it, the others are left alone. ``from_checkpoint``: the state came from ``checkpoint.pt``
        (else from ``resume.pt``, which then is the record).

        Raises:
            CarnacError: ``resume.pt`` is ahead of ``checkpoint.pt`` (not a file this run left
                behind), or a file cannot be written.
        """
        if from_checkpoint:
            self._sync_resume_file()
        self._sync_model_file()
        write_log(self.out, self.curve, if_changed=True)
        write_curve(self.out, self.curve, self.config, if_changed=True)

    def _sync_resume_file(self) -> None:
        """Rewrite ``resume.pt`` from the checkpoint when it is missing, unreadable, or behind it
        (another iteration or another curve)."""
        try:
            saved = checkpoint.read(self.resume_path)
        except CarnacError:
            saved = None
        done = saved.get("iteration") if saved is not None else None
        if isinstance(done, int) and done > self.iteration:
            raise CarnacError(
                f"{self.resume_path} holds iteration {done}, ahead of {self.checkpoint_path} (iteration "
                f"{self.iteration}), so they are not one run's files; expected resume.pt at or behind the checkpoint "
                "(remove checkpoint.pt to resume from resume.pt, or resume.pt to resume from checkpoint.pt)"
            )
        if saved is None or done != self.iteration or saved.get("curve") != self.curve:
            checkpoint.write(self, self.resume_path, replay=False)

    def _sync_model_file(self) -> None:
        """Rewrite ``model.npz`` from the resumed state when it holds another iteration's network
        (a kill between the checkpoint and the model file), so that it is the checkpoint's."""
        try:
            saved = load(self.model_path).header.get("training", {}).get("iteration")
        except (CarnacError, OSError):
            saved = None
        if saved != self.iteration:
            save(self.numpy_net(), self.model_path)

    def _check_finite(self, losses: list[dict[str, float]]) -> None:
        """Raise CarnacError if this iteration's training left a NaN or infinite loss or weight
        (the run diverged): said now, naming the iteration and the learning rate, before the
        network is played or saved; the folder keeps the last iteration's checkpoint."""
        bad_loss = next((k for loss in losses for k, v in loss.items() if not np.isfinite(v)), None)
        bad_weight = next((n for n, p in self.net.state_dict().items() if not bool(torch.isfinite(p).all())), None)
        if bad_loss is None and bad_weight is None:
            return
        what = f"the network's weight {bad_weight}" if bad_weight is not None else f"the loss {bad_loss!r}"
        kept = f"iteration {self.iteration}" if self.iteration else "no iteration"
        raise CarnacError(
            f"training diverged in iteration {self.iteration + 1}: {what} is NaN or infinite after its "
            f"training steps (lr={self.config.lr_at(self.iteration + 1):g}); nothing of this iteration was saved "
            f"({self.out} holds {kept}); start again with a lower --lr"
        )

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
                check_terminated()  # a SIGTERM whose exception was lost stops here, this iteration saved
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


def merge_stats(stats: list[dict[str, int]]) -> dict[str, int]:
    """Shards' statistics summed."""
    return {key: sum(st[key] for st in stats) for key in stats[0]}


__all__ = ["CHECKPOINT_FORMAT", "CHECKPOINT_VERSION", "COUNTERS", "Replay", "Trainer", "config_from"]
