"""Time per move of the ``az`` agent against the default ``mcts``, on the same positions.

    python benchmarks/az_move_time.py --board small --positions 15
    python benchmarks/az_move_time.py --board medium --blas    # with and without OPENBLAS_NUM_THREADS=1

Positions are sampled from games of mostly-greedy play (a seeded mix of greedy and random
moves). Both agents choose a move in each; the script prints the CPU and wall milliseconds per
move of each and the ratio az / mcts (the issue's target: ``az`` at its default budget takes no
longer per move than the default ``mcts``).

With ``--blas`` it measures ``az`` twice more, in fresh processes: as a user's shell would start
it (OpenBLAS with its default threads) and with ``OPENBLAS_NUM_THREADS=1``. The package holds
BLAS to one thread around each search itself (``carnac_env.models.blas_single_thread``), so the
two should cost the same; before it did, the first was 10-30x slower per move on a busy machine.
"""

from __future__ import annotations

import argparse
import random
import time

from carnac_env.agents import make
from carnac_env.core.game import GameState


def sample_positions(board: str, count: int, seed: int) -> list[GameState]:
    """``count`` positions from seeded games of 80% greedy, 20% random moves."""
    rng = random.Random(seed)
    greedy = make("greedy", seed=seed)
    states: list[GameState] = []
    while len(states) < count:
        state = GameState(board)
        while not state.is_over and len(states) < count:
            if rng.random() < 0.3:
                states.append(state.copy())
            state.apply(greedy.choose(state) if rng.random() < 0.8 else rng.choice(state.legal_actions()))
    return states


def ms_per_move(spec: str, states: list[GameState]) -> tuple[float, float]:
    """CPU and wall milliseconds per move of the agent ``spec`` over ``states``.

    A throwaway agent first plays every position once, so that no compilation (numba's first
    call of each code path, which one warm-up move does not all reach on a fresh machine) and no
    first model load is timed; the timed agent is a fresh one with the same seed.
    """
    warm_up = make(spec, seed=0)
    for state in states:
        warm_up.choose(state)
    agent = make(spec, seed=0)
    cpu, wall = time.process_time(), time.perf_counter()
    for state in states:
        agent.choose(state)
    return (time.process_time() - cpu) / len(states) * 1000, (time.perf_counter() - wall) / len(states) * 1000


def blas_comparison(args: argparse.Namespace) -> None:
    """``az``'s time per move in fresh processes with the default BLAS threads and with one."""
    import os
    import subprocess
    import sys

    for label, extra in (("default BLAS threads", {}), ("OPENBLAS_NUM_THREADS=1", {"OPENBLAS_NUM_THREADS": "1"})):
        env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
        env.update(extra)
        code = (
            "import sys; sys.path.insert(0, 'benchmarks'); import az_move_time as b; "
            f"s = b.sample_positions({args.board!r}, {args.positions}, {args.seed}); "
            f"print(*b.ms_per_move({args.az!r}, s))"
        )
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        cpu, wall = map(float, out.stdout.split())
        print(f"  {args.az} with {label}: {cpu:.1f} ms CPU, {wall:.1f} ms wall per move")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--board", default="small")
    parser.add_argument("--positions", type=int, default=15)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--az", default="az", help="the az spec (default: az, the shipped model, 300 simulations)")
    parser.add_argument("--mcts", default="mcts", help="the peer spec (default: mcts, 5000 simulations)")
    parser.add_argument("--blas", action="store_true", help="also time az with and without OPENBLAS_NUM_THREADS=1")
    args = parser.parse_args()
    states = sample_positions(args.board, args.positions, args.seed)
    az_cpu, az_wall = ms_per_move(args.az, states)
    mcts_cpu, mcts_wall = ms_per_move(args.mcts, states)
    print(f"{args.board}, {len(states)} positions:")
    print(f"  {args.az}: {az_cpu:.1f} ms CPU, {az_wall:.1f} ms wall per move")
    print(f"  {args.mcts}: {mcts_cpu:.1f} ms CPU, {mcts_wall:.1f} ms wall per move")
    print(f"az / mcts time per move: {az_cpu / mcts_cpu:.2f}x CPU, {az_wall / mcts_wall:.2f}x wall")
    if args.blas:
        blas_comparison(args)


if __name__ == "__main__":
    main()
