"""The deepest the solver reaches into a real game: az against az on petit_menec, solved from
``k`` megaliths left.

The whole game is out of reach of one search (docs/solver.md, "The whole game"), so this
solves a real game as early as it can: ``az`` plays both seats on petit_menec
(``carnac_env.arena.runner.play_game``, seed ``--seed``), and at the first placement with
``k`` megaliths left for each ``k`` of ``--lefts`` the position is solved with a whole-game
run's levers (``RUN_LEVERS``), stopped at ``--cap`` seconds. It prints, and writes to
``--out`` as JSON, each position's value for the player to place, the solver's move, the move
az played there, and the nodes and CPU seconds it took.

    python benchmarks/solve_az_game.py --lefts 10,9,8 --seed 0 --out benchmarks/solve_az_game.json

``--lefts`` goes from the largest down: the transposition table is kept from one position to
the next (they are on one line of play), so a later, smaller one may cost little.
"""

from __future__ import annotations

import argparse
import json
import time

from carnac_env.arena.runner import play_game
from carnac_env.core.game import PLACE, GameState
from carnac_env.core.notation import action_to_text
from carnac_env.errors import CarnacError
from carnac_env.solve import solve
from carnac_env.solve.whole_game import RUN_LEVERS

BOARD = "petit_menec"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lefts", default="10,9,8", help="megaliths left to solve from (largest first)")
    parser.add_argument("--seed", type=int, default=0, help="the game's seed")
    parser.add_argument("--cap", type=float, default=1800.0, help="stop a solve after this many seconds")
    parser.add_argument("--table-mb", type=int, default=1024, help="the transposition table, MiB")
    parser.add_argument("--out", default=None, help="write the results here as JSON")
    args = parser.parse_args()
    record = play_game(BOARD, "az", "az", args.seed)
    rows = []
    for left in (int(k) for k in args.lefts.split(",")):
        state = GameState(BOARD)
        played = None
        for action in record.actions():
            if state.phase == PLACE and state.supply == left:
                played = action
                break
            state.apply(action)
        if played is None:
            print(f"k={left}: the game has no placement with {left} megaliths left")
            continue
        start = time.process_time()
        try:
            solution = solve(state, max_megaliths_left=left, table_mb=args.table_mb, seconds=args.cap, **RUN_LEVERS)
        except CarnacError as error:
            print(f"k={left}: {error}")
            rows.append({"left": left, "value": None, "cpu_seconds": round(time.process_time() - start, 1)})
            continue
        seconds = time.process_time() - start
        mover = state.to_act
        row = {
            "left": left,
            "player": mover,
            "value": solution.result,
            "solver_move": action_to_text(state.board, solution.best_action, mover),
            "az_move": action_to_text(state.board, played, mover),
            "nodes": solution.nodes,
            "cpu_seconds": round(seconds, 1),
        }
        rows.append(row)
        print(json.dumps(row), flush=True)
    if args.out:
        from carnac_env._files import write_json

        command = f"python benchmarks/solve_az_game.py --lefts {args.lefts} --seed {args.seed} --cap {args.cap:g}"
        write_json(args.out, {"board": BOARD, "seed": args.seed, "made_by": command, "positions": rows})


if __name__ == "__main__":
    main()
