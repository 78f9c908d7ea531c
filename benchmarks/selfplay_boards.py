"""Self-play cost per board: training positions per CPU second at the general run's settings.

    python benchmarks/selfplay_boards.py                    # every built-in board, the general model
    python benchmarks/selfplay_boards.py --boards small,le_menec --games 16 --rounds 3

Each round plays ``--games`` self-play games at once on each board (one group of the general
run: Gumbel search, ``--sims`` simulations, 16 considered actions, 4-ply random openings) and
counts the positions it yields per CPU second of this process (``time.process_time``); the
table gives each board's median over the rounds and its cost relative to ``small`` (how many
small positions one position of the board costs), which is what the board mix's weights pay
for. A warm-up round first compiles the kernels.
"""

from __future__ import annotations

import argparse
import statistics
import time

from carnac_env.core.boards import BOARDS, make_board
from carnac_env.models import load, model_path
from carnac_env.models.network import blas_single_thread
from carnac_env.train.selfplay import Shard, play_shard


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--boards", default=",".join(BOARDS), help="comma-separated built-in boards")
    parser.add_argument("--model", default="general", help="model file or shipped name (default general)")
    parser.add_argument("--games", type=int, default=16, help="games per round and board (default 16)")
    parser.add_argument("--sims", type=int, default=32, help="simulations per move (default 32)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds (default 3)")
    args = parser.parse_args()
    net = load(model_path(args.model))
    boards = [make_board(b) for b in args.boards.split(",")]
    with blas_single_thread():
        play_shard(make_board("petit_menec"), Shard("selfplay", 2, 0, sims=4, openings=4), net)  # warm-up
        rates: dict[str, list[float]] = {b.name: [] for b in boards}
        for r in range(args.rounds):
            for board in boards:
                start = time.process_time()
                _, stats = play_shard(board, Shard("selfplay", args.games, r, sims=args.sims, openings=4), net)
                rates[board.name].append(stats["positions"] / (time.process_time() - start))
    base = statistics.median(rates["small"]) if "small" in rates else None
    print(f"self-play, {args.games} games at once, {args.sims} sims, model {args.model}, {args.rounds} rounds")
    print(f"{'board':12} {'squares':>7} {'positions/CPU s':>16} {'cost vs small':>14}")
    for board in boards:
        rate = statistics.median(rates[board.name])
        ratio = f"{base / rate:13.2f}x" if base else "-"
        print(f"{board.name:12} {board.squares:7} {rate:16.0f} {ratio:>14}")


if __name__ == "__main__":
    main()
