"""The command line of the trainer: ``python -m carnac_env.train --board small --out DIR``.

:func:`add_arguments` fills an ``argparse`` parser (``carnac train`` uses the same), and
:func:`main` runs it. Running again on the same ``--out`` resumes from its checkpoint (the
settings are the checkpoint's; ``--iterations`` and ``--minutes`` are the new command's, and so
are ``--workers`` and ``--ray``, which say where the self-play shards are played, not what they
play).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import fields

from carnac_env.errors import CarnacError

#: Per-board defaults that differ from :class:`carnac_env.train.trainer.Config`'s.
BOARD_DEFAULTS = {
    "petit_menec": {},
    "small": {"games": 32, "sims": 48, "bootstrap_iterations": 6, "buffer": 60_000},
    "medium": {"games": 24, "sims": 48, "bootstrap_iterations": 8, "buffer": 80_000},
}

_HELP = {
    "seed": "seed of everything (same seed, same run)",
    "iterations": "iterations in all (a resumed run continues up to this number)",
    "games": "games per iteration",
    "bootstrap_iterations": "first iterations played by greedy (softmax of its values) instead of self-play",
    "bootstrap_temperature": "temperature of the softmax over greedy's values in bootstrap games",
    "sims": "PUCT simulations per move in self-play",
    "c": "PUCT exploration constant",
    "temperature_moves": "self-play moves drawn from the visit counts before playing the most visited",
    "train_steps": "gradient steps per iteration",
    "batch_size": "positions per gradient step",
    "lr": "AdamW learning rate",
    "weight_decay": "AdamW weight decay",
    "buffer": "replay buffer size (positions)",
    "channels": "feature maps per convolution",
    "blocks": "residual blocks",
    "hidden": "units of the value head",
    "eval_every": "evaluate against greedy and mcts every N iterations (0: never)",
    "eval_games": "games per opponent in an evaluation",
    "eval_sims": "simulations of the az agent in evaluations",
    "mcts_sims": "simulations of the mcts opponent in evaluations",
    "threads": "PyTorch threads",
    "init": "start a new run from the weights of this .npz model (same architecture; any board)",
    "selfplay_shards": "split each iteration's games into this many shards with seeds of their own, which "
    "--workers/--ray play in parallel; the results depend on this number, not on where the shards run. "
    "With --workers or --ray a new run defaults to one shard per worker",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the trainer's options to ``parser``."""
    from carnac_env.train.config import Config

    defaults = Config()
    parser.add_argument("--board", default="petit_menec", help="board to train on (default petit_menec)")
    parser.add_argument("--out", required=True, help="output folder: checkpoint, models, curve, log")
    parser.add_argument("--minutes", type=float, default=0.0, help="stop after this much wall time (0: no limit)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        help="play the self-play shards in this many local processes (default: in this process); "
        "with --ray, the number of Ray actors (default: the cluster's CPUs). Not saved: a resumed run may change it",
    )
    parser.add_argument(
        "--ray",
        nargs="?",
        const="local",
        default=None,
        metavar="ADDRESS",
        help="play the self-play shards on Ray actors (needs the ray extra; workers need no PyTorch): alone, on a "
        "local Ray started for the run; 'auto', on the cluster of this machine; HOST:PORT, on the cluster there. "
        "Same results as in this process (docs/training.md)",
    )
    for field in fields(Config):
        if field.name == "board":
            continue
        flag = "--" + field.name.replace("_", "-")
        parser.add_argument(
            flag,
            type=type(getattr(defaults, field.name)),
            default=None,
            help=f"{_HELP.get(field.name, field.name)} (default {getattr(defaults, field.name)}, "
            "or the board's default)",
        )


def main(args: argparse.Namespace) -> int:
    """Run (or resume) training as ``args`` say; returns the exit status."""
    from carnac_env.train.config import Config

    try:
        from carnac_env.train.trainer import Trainer
    except ImportError as err:
        print(f"carnac train needs PyTorch (pip install carnac-env[train]): {err}", file=sys.stderr)
        return 2
    from carnac_env.arena.runner import sigterm_as_interrupt
    from carnac_env.core.boards import make_board
    from carnac_env.train.config import check_shards
    from carnac_env.train.workers import check_players, shard_players

    workers, ray = getattr(args, "workers", None), getattr(args, "ray", None)
    try:
        values = {"board": args.board, **BOARD_DEFAULTS.get(args.board, {})}
        for field in fields(Config):
            given = getattr(args, field.name, None)
            if field.name != "board" and given is not None:
                values[field.name] = given
        # what can be checked before a Ray starts or a worker spawns
        make_board(args.board)
        check_players(workers, ray)
        if "selfplay_shards" in values:
            check_shards(values["selfplay_shards"], values.get("games", Config.games))
        with sigterm_as_interrupt(), shard_players(workers, ray) as players:
            if players is not None and "selfplay_shards" not in values:
                values["selfplay_shards"] = min(players.workers, values.get("games", Config.games))
            trainer = Trainer(
                args.out, Config(**values), progress=not args.no_progress, iterations=args.iterations, players=players
            )
            if trainer.iteration:
                print(f"resuming {args.out} at iteration {trainer.iteration} ({trainer.games_played} games)")
            if players is not None:
                shards = trainer.config.selfplay_shards
                where = "Ray actors" if ray is not None else "local processes"
                note = "" if shards > 1 else " (this run has 1 shard: its games are played in this process)"
                print(f"self-play: {shards} shard(s) per iteration on {players.workers} {where}{note}")
            rows = trainer.run(minutes=args.minutes)
    except CarnacError as err:
        print(f"carnac train: {err}", file=sys.stderr)
        return 2
    last = rows[-1] if rows else (trainer.curve[-1] if trainer.curve else {})
    print(f"done: iteration {trainer.iteration}, {trainer.games_played} games, {trainer.wall:.0f} s; last: {last}")
    print(f"model: {trainer.out / 'model.npz'}  best: {trainer.out / 'best.npz'}  curve: {trainer.out / 'curve.csv'}")
    return 0


def run(argv: list[str] | None = None) -> int:
    """Parse ``argv`` and run :func:`main`."""
    parser = argparse.ArgumentParser(prog="python -m carnac_env.train", description=__doc__.splitlines()[0])
    add_arguments(parser)
    return main(parser.parse_args(argv))
