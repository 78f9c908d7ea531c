"""The cost of greedy playouts in the search: seconds per simulation of ``Search`` with
``Playouts(policy="greedy")`` (the ``mcts:playout=greedy`` agent's evaluator) against
``Playouts()`` (random playouts, the default), from the same positions, in one process.

Each round searches every position (the board after ``--opening`` uniformly random moves, one
position per seed) from a fresh tree with each evaluator, ``--sims`` simulations for random
playouts and ``--greedy-sims`` for greedy ones (they cost far more), UCT with c=1 over all
legal actions. The script prints, per board, the median over ``--rounds`` rounds of each
evaluator's microseconds per simulation and the ratio greedy / random: how many random-playout
simulations one greedy-playout simulation costs, which is what ``mcts:playout=greedy`` must be
given fewer ``sims`` by to play at equal CPU time.

    python benchmarks/greedy_playouts.py [--boards small,medium] [--rounds 5] [--epsilon 0]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time


def opening(board: str, moves: int, seed: int):
    """The position after ``moves`` uniformly random moves on ``board``."""
    from carnac_env.core.game import GameState

    rng = random.Random(seed)
    state = GameState(board)
    for _ in range(moves):
        if state.is_over:
            break
        legal = state.legal_actions()
        state.apply(legal[int(rng.random() * len(legal))])
    return state


def per_simulation(board: str, evaluator, states, sims: int, seed: int) -> float:
    """Seconds per simulation of fresh searches of ``sims`` from each of ``states``."""
    from carnac_env.search import UCT, Search

    search = Search(board, evaluator, UCT(1.0), seed=seed)
    total = 0.0
    for state in states:
        search.set_games([state])
        start = time.perf_counter()
        search.run(sims)
        total += time.perf_counter() - start
    return total / (sims * len(states))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--boards", default="small,medium")
    parser.add_argument("--opening", type=int, default=4, help="random moves before each position")
    parser.add_argument("--positions", type=int, default=3)
    parser.add_argument("--sims", type=int, default=2000, help="simulations per search, random playouts")
    parser.add_argument("--greedy-sims", type=int, default=20, help="simulations per search, greedy playouts")
    parser.add_argument("--epsilon", type=float, default=0.0, help="greedy playouts' share of random moves")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    from carnac_env.search import Playouts

    print(f"{'board':10} {'random us/sim':>14} {'greedy us/sim':>14} {'ratio':>8}")
    for board in args.boards.split(","):
        states = [opening(board, args.opening, seed) for seed in range(args.positions)]
        plain, greedy = Playouts(), Playouts(policy="greedy", epsilon=args.epsilon)
        per_simulation(board, plain, states[:1], 10, 0)  # compile outside the timing
        per_simulation(board, greedy, states[:1], 2, 0)
        randoms, greedys = [], []
        for r in range(args.rounds):
            randoms.append(per_simulation(board, plain, states, args.sims, r))
            greedys.append(per_simulation(board, greedy, states, args.greedy_sims, r))
        a, b = statistics.median(randoms), statistics.median(greedys)
        print(f"{board:10} {a * 1e6:14.1f} {b * 1e6:14.1f} {b / a:8.1f}", flush=True)


if __name__ == "__main__":
    main()
