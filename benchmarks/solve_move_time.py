"""The exact solver's time per move at K megaliths left: how to choose ``az:solve=K``.

Plays ``--games`` games of ``greedy`` against ``greedy`` on each board (game ``g``: four
uniformly random plies drawn from ``random.Random(seed + g)``, then greedy seeded
``1000 + 2 * (seed + g)`` and ``1001 + 2 * (seed + g)``), keeps the first placing position
with K megaliths left of each game, and solves them one after the other in this process (the
transposition table kept between positions, as the agent keeps it). Prints, per board and K,
the median and the longest time, the median nodes and the solves that passed ``--node-limit``.
The solver's compile comes first and is not timed.

    python benchmarks/solve_move_time.py --boards small=6,7,8 medium=3,4,5 [--games 10] [--seed 0]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from carnac_env.agents import make
from carnac_env.core.game import PLACE, GameState
from carnac_env.errors import CarnacError
from carnac_env.solve import solve


def positions(board: str, lefts: list[int], games: int, seed: int) -> dict[int, list[GameState]]:
    """The first placing position with each number of megaliths left in each game."""
    found: dict[int, list[GameState]] = {k: [] for k in lefts}
    for g in range(seed, seed + games):
        players = make("greedy", seed=1000 + 2 * g), make("greedy", seed=1001 + 2 * g)
        state = GameState(board)
        rng = random.Random(g)
        for _ in range(4):
            state.apply(rng.choice(state.legal_actions()))
        seen: set[int] = set()
        while not state.is_over:
            if state.phase == PLACE and state.supply in found and state.supply not in seen:
                found[state.supply].append(state.copy())
                seen.add(state.supply)
            state.apply(players[state.to_act].act(state))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--boards", nargs="+", default=["small=6,7,8", "medium=3,4,5"], help="BOARD=K,K,...")
    parser.add_argument("--games", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--node-limit", type=int, default=20_000_000)
    parser.add_argument("--stop-after", type=float, default=30.0, help="seconds: skip the rest of a K after one solve")
    args = parser.parse_args()
    solve(GameState("custom", rows=3, cols=3, megaliths=2))  # the compile
    for spec in args.boards:
        board, _, ks = spec.partition("=")
        lefts = [int(k) for k in ks.split(",")]
        for k, found in positions(board, lefts, args.games, args.seed).items():
            times, nodes, gave_up = [], [], 0
            for state in found:
                start = time.perf_counter()
                try:
                    nodes.append(solve(state, max_megaliths_left=8, node_limit=args.node_limit).nodes)
                except CarnacError:
                    gave_up += 1
                times.append(time.perf_counter() - start)
                if times[-1] > args.stop_after:
                    break
            rate = sum(nodes) / max(sum(times), 1e-9)
            print(
                f"{board} K={k}: {len(times)} positions, median {statistics.median(times):.3f} s, "
                f"longest {max(times):.3f} s, median nodes {statistics.median(nodes) if nodes else 0:.0f}, "
                f"{rate:.0f} nodes/s, passed the node limit {gave_up}",
                flush=True,
            )


if __name__ == "__main__":
    main()
