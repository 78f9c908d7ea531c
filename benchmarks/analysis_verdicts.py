"""What the analysis's solver verdicts cost: nodes and time per verdict, by megaliths left.

    python benchmarks/analysis_verdicts.py                  # small and medium, 3 games each
    python benchmarks/analysis_verdicts.py --boards small --games 5 --left 8

Plays fixed-seed games of ``greedy`` against itself (seeds 0, 1, ...; the second seat seed +
100), and for every placement position with at most ``--left`` megaliths left takes the
analysis's verdict (:func:`carnac_env.analysis.verdict`: its own thread, an empty table, the
root and the solver's line) under the analysis's node budget. It prints, per board and
megaliths left, the median nodes, the median time, and how many verdicts the solver gave up on
(no verdict within :data:`~carnac_env.analysis.solved.DEFAULT_SOLVE_NODES` nodes). The first
verdict includes the solver's compile and is left out. Times are this machine's; the nodes are
the same on any machine.
"""

from __future__ import annotations

import argparse
import statistics
import time

from carnac_env.agents import make
from carnac_env.analysis.solved import DEFAULT_SOLVE_NODES, verdict
from carnac_env.core.game import PLACE, GameState


def endgame_positions(board: str, games: int, left: int) -> list[GameState]:
    """The placement positions with at most ``left`` megaliths left of ``games`` greedy games."""
    out = []
    for seed in range(games):
        agents = [make("greedy", seed=seed), make("greedy", seed=seed + 100)]
        state = GameState(board)
        while not state.is_over:
            if state.phase == PLACE and state.supply <= left:
                out.append(state.copy())
            state.apply(agents[state.to_act].act(state))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--boards", default="small,medium")
    parser.add_argument("--games", type=int, default=3)
    parser.add_argument("--left", type=int, default=7)
    args = parser.parse_args()
    verdict(endgame_positions("small", 1, 2)[-1])  # the compile
    print(f"node budget per verdict: {DEFAULT_SOLVE_NODES}")
    print("board    left  verdicts  median nodes  median time  gave up")
    for board in args.boards.split(","):
        rows: dict[int, list[tuple[int, float, bool]]] = {}
        for state in endgame_positions(board, args.games, args.left):
            start = time.perf_counter()
            known = verdict(state)
            spent = time.perf_counter() - start
            rows.setdefault(state.supply, []).append(
                (known.nodes if known else DEFAULT_SOLVE_NODES, spent, known is None)
            )
        for left in sorted(rows):
            got = rows[left]
            nodes = statistics.median(n for n, _, _ in got)
            seconds = statistics.median(t for _, t, _ in got)
            print(f"{board:8} {left:4d}  {len(got):8d}  {nodes:12.0f}  {seconds:10.3f}s  {sum(g for *_, g in got):7d}")


if __name__ == "__main__":
    main()
