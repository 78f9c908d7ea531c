"""Trainer iterations with the self-play shards in this process, on 2 local workers and on Ray.

Each round trains the same short run (``--iterations`` iterations, the first a greedy
bootstrap, the rest PUCT self-play; no evaluation) into fresh folders, four ways:

* ``1 shard``: the default, every game in this process with the run's generator;
* ``2 shards here``: ``selfplay_shards=2``, both shards in this process, one after the other;
* ``--workers 2``: the two shards on two spawned processes (started within the timed run,
  as ``carnac train --workers 2`` does);
* ``--ray``: the two shards on two Ray actors (created within the timed run) of a local Ray
  with 2 CPUs, started once before the rounds (its start-up, which ``carnac train --ray``
  pays once per command, is printed separately).

The order rotates between rounds. The script checks that the three sharded runs end with the
same replay buffer and weights, and prints the median wall time of each and the ratios against
the default (below 1: faster).

    python benchmarks/train_workers.py [--board small] [--iterations 3] [--games 32] [--sims 48]
        [--train-steps 100] [--rounds 3]

Needs PyTorch (the ``train`` extra) and Ray (the ``ray`` extra).
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import tempfile
import time
from pathlib import Path

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")  # as python -m carnac_env.train does

MODES = ("1 shard", "2 shards here", "--workers 2", "--ray")


def timed_run(out: Path, args: argparse.Namespace, mode: str) -> tuple[float, object]:
    from carnac_env.cli.train import BOARD_DEFAULTS
    from carnac_env.train.trainer import Config, Trainer
    from carnac_env.train.workers import shard_players

    settings = {
        **BOARD_DEFAULTS.get(args.board, {}),
        "board": args.board,
        "iterations": args.iterations,
        "games": args.games,
        "sims": args.sims,
        "train_steps": args.train_steps,
        "bootstrap_iterations": 1,
        "eval_every": 0,
        "selfplay_shards": 1 if mode == "1 shard" else 2,
    }
    workers = 2 if mode in ("--workers 2", "--ray") else None
    start = time.perf_counter()
    with shard_players(workers, "local" if mode == "--ray" else None) as players:
        trainer = Trainer(out, Config(**settings), progress=False, players=players)
        trainer.run()
    return time.perf_counter() - start, trainer


def same(a, b) -> bool:
    import numpy as np
    import torch

    replay_a, replay_b = a.replay.state(), b.replay.state()
    return all(np.array_equal(replay_a[k], replay_b[k]) for k in replay_a) and all(
        torch.equal(value, b.net.state_dict()[name]) for name, value in a.net.state_dict().items()
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--board", default="small")
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--games", type=int, default=32)
    parser.add_argument("--sims", type=int, default=48)
    parser.add_argument("--train-steps", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    import ray

    start = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False)
    print(f"local Ray start-up (once, not in the times below): {time.perf_counter() - start:.1f} s")
    times: dict[str, list[float]] = {mode: [] for mode in MODES}
    with tempfile.TemporaryDirectory() as tmp:
        for round_index in range(args.rounds):
            order = MODES[round_index % len(MODES) :] + MODES[: round_index % len(MODES)]
            trainers = {}
            for mode in order:
                seconds, trainers[mode] = timed_run(Path(tmp) / f"{round_index}-{mode.strip('-')}", args, mode)
                times[mode].append(seconds)
            agree = same(trainers["2 shards here"], trainers["--workers 2"]) and same(
                trainers["2 shards here"], trainers["--ray"]
            )
            shown = ", ".join(f"{mode} {times[mode][-1]:.1f} s" for mode in MODES)
            print(f"round {round_index + 1}: {shown}; sharded runs identical: {agree}", flush=True)
    ray.shutdown()
    medians = {mode: statistics.median(times[mode]) for mode in MODES}
    print(
        f"{args.board}, {args.iterations} iterations (1 greedy, then self-play), {args.games} games, "
        f"{args.sims} sims, {args.train_steps} train steps; medians of {args.rounds} rounds:"
    )
    for mode in MODES:
        print(f"  {mode:>14}: {medians[mode]:6.1f} s   ratio to 1 shard: {medians[mode] / medians['1 shard']:.2f}")


if __name__ == "__main__":
    main()
