"""CPU time per move of the ``az`` agent against the default ``mcts``, on the same positions.

    python benchmarks/az_move_time.py --board small --positions 15

Positions are sampled from games of mostly-greedy play (a seeded mix of greedy and random
moves). Both agents choose a move in each; the script prints the CPU milliseconds per move of
each and their ratio (issue 11: ``az`` at its default budget should take no longer per move than
the default ``mcts``). Set ``OPENBLAS_NUM_THREADS=1`` on a busy machine.
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


def ms_per_move(spec: str, states: list[GameState]) -> float:
    """CPU milliseconds per move of the agent ``spec`` over ``states`` (after one warm-up move)."""
    agent = make(spec, seed=0)
    agent.choose(states[0])
    start = time.process_time()
    for state in states:
        agent.choose(state)
    return (time.process_time() - start) / len(states) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--board", default="small")
    parser.add_argument("--positions", type=int, default=15)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--az", default="az", help="the az spec (default: az, the shipped model, 300 simulations)")
    parser.add_argument("--mcts", default="mcts", help="the peer spec (default: mcts, 5000 simulations)")
    args = parser.parse_args()
    states = sample_positions(args.board, args.positions, args.seed)
    az = ms_per_move(args.az, states)
    mcts = ms_per_move(args.mcts, states)
    print(f"{args.board}, {len(states)} positions: {args.az} {az:.1f} ms CPU per move, {args.mcts} {mcts:.1f} ms")
    print(f"az / mcts time per move: {az / mcts:.2f}x")


if __name__ == "__main__":
    main()
