"""The arena on Ray against the arena on local processes: the same games, wall time, ratio.

Each round plays the same arena (MCTS against greedy by default) twice into fresh folders:
once with ``--workers 2`` (two spawned processes) and once as Ray tasks on a local Ray of 2
CPUs started once, before the rounds (``ray start --head --num-cpus 2`` does the same on
the command line; its start-up time is printed separately). The order alternates between
rounds. The script checks that both runs wrote the same ``games.jsonl`` and prints the
median wall time of each and the ratio (Ray / workers; 1.10 means Ray is 10% slower).

    python benchmarks/arena_ray_overhead.py [--board petit_menec] [--agents greedy,mcts:sims=200]
        [--games 4] [--rounds 3]

Needs Ray (the ``ray`` extra).
"""

from __future__ import annotations

import argparse
import logging
import statistics
import tempfile
import time
from pathlib import Path


def timed_arena(out: Path, args: argparse.Namespace, ray: str | None) -> float:
    from carnac_env.arena import run_arena, split_agents

    start = time.perf_counter()
    run_arena(
        split_agents(args.agents),
        out,
        board=args.board,
        games=args.games,
        seed=0,
        workers=2,
        progress=False,
        echo=lambda _: None,
        ray=ray,
    )
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--board", default="petit_menec")
    parser.add_argument("--agents", default="greedy,mcts:sims=200")
    parser.add_argument("--games", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    import ray

    start = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False)
    print(f"local Ray start-up (once, not in the times below): {time.perf_counter() - start:.1f} s")
    times: dict[str, list[float]] = {"workers": [], "ray": []}
    with tempfile.TemporaryDirectory() as tmp:
        for round_index in range(args.rounds):
            order = ["workers", "ray"] if round_index % 2 == 0 else ["ray", "workers"]
            for mode in order:
                out = Path(tmp) / f"{mode}-{round_index}"
                times[mode].append(timed_arena(out, args, "local" if mode == "ray" else None))
            same = (Path(tmp) / f"workers-{round_index}" / "games.jsonl").read_bytes() == (
                Path(tmp) / f"ray-{round_index}" / "games.jsonl"
            ).read_bytes()
            print(
                f"round {round_index + 1}: workers {times['workers'][-1]:.1f} s, ray {times['ray'][-1]:.1f} s, "
                f"same games.jsonl: {same}"
            )
    ray.shutdown()
    workers, on_ray = statistics.median(times["workers"]), statistics.median(times["ray"])
    print(f"{args.agents} on {args.board}, {args.games} games per pair, medians of {args.rounds} rounds:")
    print(f"  --workers 2: {workers:.1f} s   --ray (local, 2 CPUs): {on_ray:.1f} s")
    print(f"  ratio ray/workers: {on_ray / workers:.2f}")


if __name__ == "__main__":
    main()
