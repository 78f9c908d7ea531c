"""``carnac train --board small --out DIR`` (``python -m carnac_env.train`` forwards here).

:func:`add_arguments` fills the ``carnac train`` parser, and :func:`cmd_train` runs it.
Running again on the same ``--out`` resumes from its checkpoint (the
settings are the checkpoint's; ``--iterations`` and ``--minutes`` are the new command's, and so
are ``--workers`` and ``--ray``, which say where the self-play shards are played, not what they
play, and the evaluation settings given (``--eval-every``, ``--eval-games``, ``--eval-sims``,
``--eval-openings``, ``--eval-boards``, ``--mcts-sims``), which say what the run measures).
``--lr-schedule`` may change on resume for the iterations still to come (a step of the learning
rate added to a running run, which stays the run that schedule gives from the start). Any
other setting given on resume that differs from the checkpoint's is refused, naming it.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import fields
from pathlib import Path
from typing import Any

from carnac_env import _checks
from carnac_env.cli.options import add_ray_option
from carnac_env.errors import CarnacError

__all__ = ["BOARD_DEFAULTS", "add_arguments", "cmd_train"]

#: Per-board defaults that differ from :class:`carnac_env.train.config.Config`'s: on small and
#: medium, the settings that trained the shipped models (docs/training.md, "Shipped models").
#: On petit_menec, tutorial 5's 15-minute run (122 iterations on one core).
_SHIPPED = {"games": 64, "sims": 32, "eval_every": 10, "eval_sims": 64, "mcts_sims": 1000, "iterations": 300}
BOARD_DEFAULTS = {
    "petit_menec": {"games": 64, "train_steps": 20, "eval_every": 10, "iterations": 120},
    "small": {**_SHIPPED, "train_steps": 40, "buffer": 100_000},
    "medium": {**_SHIPPED, "train_steps": 50, "buffer": 150_000},
    # the general model's recipe (docs/training.md, "One model for every board")
    "general": {
        "games": 128,
        "games_per_board": 16,
        "sims": 32,
        "train_steps": 60,
        "buffer": 250_000,
        "dolmens": 0.5,
        "init": "medium",
        "bootstrap_iterations": 0,
        "eval_every": 10,
        "eval_games": 10,
        "eval_sims": 32,
        "mcts_sims": 500,
        "iterations": 2000,
    },
}

_HELP = {
    "seed": "seed of everything (same seed, same run)",
    "iterations": "iterations in all (a resumed run continues up to this number)",
    "games": "games per iteration",
    "bootstrap_iterations": "first iterations played by greedy (softmax of its values) instead of self-play",
    "bootstrap_temperature": "temperature of the softmax over greedy's values in bootstrap games",
    "rule": "self-play search: gumbel (sequential halving, improved-policy targets) or puct (visit counts)",
    "sims": "search simulations per move in self-play",
    "considered": "gumbel: root actions sequential halving starts from",
    "c": "puct: exploration constant",
    "temperature_moves": "self-play moves sampled (gumbel: noisy halving; puct: visit counts) before the best "
    "is played",
    "openings": "each game opens with 0 to this many uniformly random moves (not trained on)",
    "playouts": "random playouts from each training position for the playout value target (0: none)",
    "value_search": "share of the search's value in the value target (the game's result takes the rest)",
    "value_playouts": "share of the playouts' mean in the value target (needs --playouts)",
    "ownership": "weight of the ownership head's loss (each square's final colour; 0: no such head)",
    "dolmens": "weight of the dolmen head's loss (each side's final number of dolmens; 0: no such head)",
    "rules_inputs": "whether the network reads the board's rules as inputs: on, off, or auto (on for --board "
    "general and when --init names a model that reads them)",
    "mix": "--board general: the boards and their weights by games, NAME:WEIGHT,... (custom: random custom boards)",
    "games_per_board": "--board general: each iteration's games are played in groups of this many, one board a group",
    "eval_boards": "the built-in boards evaluated, comma-separated",
    "train_steps": "gradient steps per iteration",
    "batch_size": "positions per gradient step",
    "lr": "AdamW learning rate (before the first step of --lr-schedule)",
    "lr_schedule": "steps of the learning rate, ITERATION:RATE,... (from iteration ITERATION on, RATE); on resume "
    "it may change from the next iteration on, as if the run had had it from the start",
    "weight_decay": "AdamW weight decay",
    "buffer": "replay buffer size (positions; the oldest leave first)",
    "channels": "feature maps per convolution",
    "blocks": "residual blocks",
    "hidden": "units of the value head",
    "eval_every": "evaluate against greedy and mcts every N iterations (0: never)",
    "eval_games": "games per opponent in an evaluation (from seeded openings, each from both seats)",
    "eval_sims": "simulations of the az agent in evaluations",
    "eval_openings": "random plies of each evaluation opening",
    "mcts_sims": "simulations of the mcts opponent in evaluations",
    "threads": "PyTorch threads",
    "init": "start a new run from the weights of this .npz model or shipped model name (same architecture; any board)",
    "selfplay_shards": "split each iteration's games into this many shards with seeds of their own, which "
    "--workers/--ray play in parallel; the results depend on this number, not on where the shards run. "
    "With --workers or --ray a new run defaults to one shard per worker",
    "selfplay_backend": "how self-play evaluates the network: numpy, or onnx-int8 (onnxruntime's int8 graph, the "
    "onnx extra; about 1.3x the positions per CPU second of a whole run, trained as well in one short ablation: "
    "docs/training.md)",
}
#: What an empty text default means, where "none" would not say it.
_EMPTY_MEANS = {"eval_boards": "every built-in board of the run"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the trainer's options to ``parser``."""
    from carnac_env.train.config import Config

    defaults = Config()
    parser.add_argument(
        "--board",
        default="petit_menec",
        help="board to train on, or 'general' for one model of every board (a mix: --mix) (default petit_menec)",
    )
    parser.add_argument("--out", required=True, help="output folder: checkpoint, models, curve, log")
    parser.add_argument(
        "--minutes", type=float, default=0.0, help="stop after this much wall time (default 0: no limit)"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument(
        "--export",
        default=None,
        metavar="FILE",
        help="train nothing: write the network of the run saved in --out (its checkpoint.pt, else resume.pt) to "
        "FILE as a numpy model (az:model=FILE) and exit; for a network of an iteration whose model.npz is gone",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        help="play the self-play shards in this many local processes (default: in this process); "
        "with --ray, the number of Ray actors (default: the cluster's CPUs). Not saved: a resumed run may change it",
    )
    add_ray_option(
        parser,
        "play the self-play shards on Ray actors (needs the ray extra; workers need no PyTorch): alone, on a "
        "local Ray started for the run; 'auto', on the cluster of this machine; HOST:PORT, on the cluster there. "
        "Same results as in this process (docs/training.md) (default: no Ray)",
    )
    for field in fields(Config):  # each option's help ends with its default, said once
        if field.name == "board":
            continue
        flag = "--" + field.name.replace("_", "-")
        default = getattr(defaults, field.name)
        boards = {b: d[field.name] for b, d in BOARD_DEFAULTS.items() if d.get(field.name, default) != default}
        if isinstance(default, str):
            shown = default or _EMPTY_MEANS.get(field.name, "none")
        else:
            shown = f"{default:g}" if isinstance(default, float) else default
        note = "".join(f"; {board}: {value}" for board, value in boards.items())
        parser.add_argument(flag, type=type(default), default=None, help=f"{_HELP[field.name]} (default {shown}{note})")


def cmd_train(args: argparse.Namespace) -> int:
    """``carnac train``: run (or resume) training as ``args`` say; returns the exit status."""
    try:
        import carnac_env.train.trainer  # noqa: F401  (it imports PyTorch: a missing one is said here)
    except ImportError as err:
        print(f"carnac train needs PyTorch (pip install 'carnac-env[train]'): {err}", file=sys.stderr)
        return 2
    from carnac_env.arena.runner import sigterm_as_interrupt
    from carnac_env.train.workers import shard_players

    if getattr(args, "export", None):
        return _export(args.out, args.export)
    workers, ray = getattr(args, "workers", None), getattr(args, "ray", None)
    try:
        values = _checked_settings(args, workers, ray)
        with sigterm_as_interrupt(), shard_players(workers, ray) as players:
            trainer = _new_trainer(args, values, players)
            with trainer:
                _refuse_changed_settings(trainer, args)
                rows = _train(trainer, args, players, ray)
    except CarnacError as err:
        print(f"carnac: error: train: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as stop:  # Ctrl-C, or SIGTERM through sigterm_as_interrupt
        from carnac_env.arena.runner import ArenaTerminated

        print(
            "\ninterrupted; the checkpoint holds every finished iteration: run the same command again to resume",
            file=sys.stderr,
        )
        return 143 if isinstance(stop, ArenaTerminated) else 130
    last = rows[-1] if rows else (trainer.curve[-1] if trainer.curve else {})
    print(f"done: iteration {trainer.iteration}, {trainer.games_played} games, {trainer.wall:.0f} s; last: {last}")
    best = trainer.out / "best.npz"
    best_text = str(best) if best.is_file() else "none written (no evaluation has run; --eval-every N sets how often)"
    print(f"model: {trainer.out / 'model.npz'}  best: {best_text}  curve: {trainer.out / 'curve.csv'}")
    return 0


def _checked_settings(args: argparse.Namespace, workers: int | None, ray: str | None) -> dict[str, Any]:
    """The run's settings: the board's defaults (:data:`BOARD_DEFAULTS`), then those given,
    checked as far as they can be before a Ray starts or a worker spawns.

    Raises:
        CarnacError: a bad board, ``--minutes``, worker count or setting; a missing onnxruntime
            for ``--selfplay-backend onnx-int8``.
    """
    from carnac_env.core.boards import make_board
    from carnac_env.train.config import Config, check_shards
    from carnac_env.train.mix import GENERAL
    from carnac_env.train.workers import check_players

    values = {"board": args.board, **BOARD_DEFAULTS.get(args.board, {})}
    for field in fields(Config):
        given = getattr(args, field.name, None)
        if field.name != "board" and given is not None:
            values[field.name] = given
    if args.board != GENERAL:
        make_board(args.board)
    _checks.number("--minutes", args.minutes, 0.0)
    check_players(workers, ray)
    if values.get("selfplay_backend") == "onnx-int8":
        from carnac_env.models.onnx_runtime import _modules

        _modules()  # a missing onnxruntime is said now, not at the first self-play iteration
    games = values.get("games", Config.games)
    if "selfplay_shards" in values:
        check_shards(values["selfplay_shards"], games)
    if "selfplay_shards" not in values and (workers is not None or ray is not None):
        # the players' shards (one per worker) are known once they start; until then, check
        # with the most shards they can make (the trainer checks again with the real ones)
        Config(**dict(values, selfplay_shards=min(workers or games, games))).check()
    else:
        Config(**values).check()
    return values


def _new_trainer(args: argparse.Namespace, values: dict[str, Any], players: Any) -> Any:
    """The trainer of ``--out`` with the checked ``values`` (a new run's shards, when none were
    given, one per started player), the evaluation settings given and ``--lr-schedule``."""
    from carnac_env.train.config import Config
    from carnac_env.train.trainer import EVALUATION_SETTINGS, Trainer

    if players is not None and "selfplay_shards" not in values:
        values["selfplay_shards"] = min(players.workers, values.get("games", Config.games))
    given = {k: getattr(args, k) for k in EVALUATION_SETTINGS if getattr(args, k, None) is not None}
    return Trainer(
        args.out,
        Config(**values),
        progress=not args.no_progress,
        iterations=args.iterations,
        players=players,
        evaluation=given,
        lr_schedule=getattr(args, "lr_schedule", None),
    )


def _export(out: str, file: str) -> int:
    """``--export FILE``: the saved run's network written to ``file``; nothing is trained."""
    from carnac_env.models import save
    from carnac_env.train.trainer import Trainer

    folder = Path(out)
    if not any((folder / name).is_file() for name in ("checkpoint.pt", "resume.pt")):
        print(
            f"carnac: error: train: --export: {folder} holds no checkpoint.pt or resume.pt; expected the --out "
            "folder of a run",
            file=sys.stderr,
        )
        return 2
    try:
        with Trainer(folder, progress=False) as trainer:
            save(trainer.numpy_net(), file)
    except (CarnacError, OSError) as err:
        print(f"carnac: error: train: --export: {err}", file=sys.stderr)
        return 2
    print(f"wrote {file}: the network of {folder} at iteration {trainer.iteration} ({trainer.games_played} games)")
    return 0


def _refuse_changed_settings(trainer: Any, args: argparse.Namespace) -> None:
    """A resumed run keeps its checkpoint's settings: a setting given on the command line that
    differs from them (other than ``--iterations`` and the evaluation settings) is refused,
    rather than silently ignored.

    Raises:
        CarnacError: naming each such setting, the value given and the run's.
    """
    from carnac_env.train.config import Config
    from carnac_env.train.trainer import EVALUATION_SETTINGS

    if not trainer.iteration:
        return
    kept = ("board", "iterations", "lr_schedule", *EVALUATION_SETTINGS)
    changed = [
        f"--{f.name.replace('_', '-')} {getattr(args, f.name)} (the run's: {getattr(trainer.config, f.name)})"
        for f in fields(Config)
        if f.name not in kept
        and getattr(args, f.name, None) is not None
        and getattr(args, f.name) != getattr(trainer.config, f.name)
    ]
    if changed:
        raise CarnacError(
            f"{args.out} resumes at iteration {trainer.iteration} with its checkpoint's settings; "
            f"these cannot change on resume: {', '.join(changed)}. Drop them, or start a new run in another --out"
        )


def _train(trainer: Any, args: argparse.Namespace, players: Any, ray: str | None) -> list[dict[str, Any]]:
    """Say what is resumed and where the shards play, then run."""
    if trainer.iteration:
        print(f"resuming {args.out} at iteration {trainer.iteration} ({trainer.games_played} games)")
    if players is not None and trainer.mix.general:
        c = trainer.config
        groups = max(1, c.games // c.games_per_board)
        print(f"self-play: {groups} groups of {c.games_per_board} games per iteration on {players.workers} workers")
    elif players is not None:
        shards = trainer.config.selfplay_shards
        where = "Ray actors" if ray is not None else "local processes"
        note = "" if shards > 1 else " (this run has 1 shard: its games are played in this process)"
        print(f"self-play: {shards} shard(s) per iteration on {players.workers} {where}{note}")
    return trainer.run(minutes=args.minutes)
