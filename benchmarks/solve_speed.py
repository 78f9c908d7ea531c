"""The exact solver's speed (carnac_env.solve): positions solved per second against OpenSpiel's
``alpha_beta_search`` on the same positions, and per built-in board the largest number of
megaliths left that it solves within a second.

The positions come from real games: ``greedy`` against ``greedy`` (seeds ``1000 + g`` and
``2000 + g`` for game ``g``), and from each game the first position where the player to
place has ``k`` megaliths left, for each ``k``. Every solve starts from an empty
transposition table (:func:`carnac_env.solve.clear_table`), so no solve profits from an
earlier one.

* **speed**: on petit_menec (the smallest built-in board, the one OpenSpiel's Python search
  can finish), the endgames with ``--speed-left`` megaliths left. OpenSpiel's
  ``open_spiel.python.algorithms.minimax.alpha_beta_search`` on ``python_carnac``
  (carnac_env.envs.openspiel) and ``carnac_env.solve.solve`` (default table) solve the same
  positions, in ``--rounds`` rounds that alternate between them; the script prints the median
  positions per second of each over the rounds, the ratio, and how many values agree.
* **depth**: per board, for ``k = 1, 2, ...``, the median time of ``solve`` over the games'
  positions with ``k`` left; the largest ``k`` whose median is at most ``--within`` seconds (a
  solve is stopped at ``--cap`` seconds and counts as slower). It stops at the first ``k``
  over the limit.

    python benchmarks/solve_speed.py [--boards small,medium] [--games 5] [--rounds 3] [--quick]

``--quick`` is a smoke run (two games, one round; speed at 2 left, depth on small within 0.25 s).
Needs open_spiel for the speed part (``pip install open_spiel``; skipped with a note without).
"""

from __future__ import annotations

import argparse
import statistics
import time

from carnac_env.agents import make
from carnac_env.core.boards import BOARDS
from carnac_env.core.game import PLACE, GameState
from carnac_env.errors import CarnacError
from carnac_env.solve import clear_table, solve


def game_positions(board: str, game: int) -> dict[int, GameState]:
    """Greedy against greedy on ``board`` (game number ``game``): for each number of megaliths
    left, the first position where the player to place has that many."""
    players = make("greedy", seed=1000 + game), make("greedy", seed=2000 + game)
    state = GameState(board)
    found: dict[int, GameState] = {}
    while not state.is_over:
        if state.phase == PLACE and state.supply not in found:
            found[state.supply] = state.copy()
        state.apply(players[state.to_act].act(state))
    return found


def timed_solve(state: GameState, cap: float) -> tuple[float, int | None]:
    """Seconds to solve ``state`` from an empty table, and its result (None past ``cap``)."""
    clear_table()
    start = time.perf_counter()
    try:
        result = solve(state, max_megaliths_left=state.supply, seconds=cap).result
    except CarnacError:
        return float("inf"), None
    return time.perf_counter() - start, result


def openspiel_round(positions: list[GameState]) -> tuple[float, list[int]]:
    """OpenSpiel's alpha_beta_search on each position: seconds in all, and the values."""
    from open_spiel.python.algorithms.minimax import alpha_beta_search

    from carnac_env.envs.openspiel import load_game

    game = load_game(positions[0].board.name, last_tilt=positions[0].board.last_tilt)
    values = []
    spent = 0.0
    for position in positions:
        state = game.new_initial_state()
        state.game_state = position.copy()
        start = time.perf_counter()
        value, _ = alpha_beta_search(game, state, maximum_depth=2 * position.supply + 2)
        spent += time.perf_counter() - start
        values.append(int(value))
    return spent, values


def carnac_round(positions: list[GameState]) -> tuple[float, list[int]]:
    """carnac_env.solve on each position, each from an empty table: seconds in all, and the values."""
    values = []
    spent = 0.0
    for position in positions:
        seconds, result = timed_solve(position, cap=0.0)
        spent += seconds
        values.append(int(result))  # type: ignore[arg-type]  (no cap: always solved)
    return spent, values


def speed(games: int, lefts: list[int], rounds: int) -> None:
    """Positions per second of both solvers on the same petit_menec endgames."""
    try:
        import pyspiel  # noqa: F401
    except ImportError:
        print("speed: open_spiel is not installed (pip install open_spiel); skipped")
        return
    positions = [game[k] for g in range(games) for k in lefts if k in (game := game_positions("petit_menec", g))]
    solve(positions[0])  # the first call compiles or loads the solver; not timed
    print(f"speed: petit_menec, {len(positions)} endgames ({games} greedy games x {lefts} megaliths left)")
    rates: dict[str, list[float]] = {"openspiel": [], "carnac": []}
    agree = 0
    for _ in range(rounds):
        spiel_seconds, spiel_values = openspiel_round(positions)
        carnac_seconds, carnac_values = carnac_round(positions)
        rates["openspiel"].append(len(positions) / spiel_seconds)
        rates["carnac"].append(len(positions) / carnac_seconds)
        agree = sum(a == b for a, b in zip(spiel_values, carnac_values, strict=True))
    spiel, carnac = statistics.median(rates["openspiel"]), statistics.median(rates["carnac"])
    print(f"  openspiel alpha_beta_search  {spiel:12.2f} positions/s (median of {rounds})")
    print(f"  carnac_env.solve             {carnac:12.2f} positions/s (median of {rounds})")
    print(f"  ratio carnac / openspiel     {carnac / spiel:12.1f}x   values agree on {agree} of {len(positions)}")


def depth(boards: list[str], games: int, within: float, cap: float, most: int) -> None:
    """Per board, the largest number of megaliths left solved within ``within`` s (median)."""
    print(f"depth: the largest k solved within {within:g} s (median over {games} greedy games' positions)")
    print(f"  {'board':<12} {'k':>3}  median seconds at k = 1, 2, ...")
    for board in boards:
        found = [game_positions(board, g) for g in range(games)]
        solve(found[0][min(found[0])])  # compile or load the solver, on its smallest endgame; not timed
        best = 0
        medians = []
        for k in range(1, most + 1):
            times = [timed_solve(game[k], cap)[0] for game in found if k in game]
            if not times:
                break
            median = statistics.median(times)
            medians.append("over" if median == float("inf") else f"{median:.3f}")
            if median > within:
                break
            best = k
        print(f"  {board:<12} {best:>3}  {' '.join(medians)}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--boards", default=",".join(BOARDS), help="boards for the depth part (comma-separated)")
    parser.add_argument("--games", type=int, default=5, help="greedy games per board (positions per k)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds of the speed part")
    parser.add_argument("--speed-left", default="2,3", help="megaliths left of the speed part's endgames")
    parser.add_argument("--within", type=float, default=1.0, help="the depth part's time limit (median, s)")
    parser.add_argument("--cap", type=float, default=3.0, help="stop a depth solve after this many seconds")
    parser.add_argument("--most", type=int, default=16, help="the largest k the depth part tries")
    parser.add_argument("--skip-speed", action="store_true", help="only the depth part")
    parser.add_argument("--skip-depth", action="store_true", help="only the speed part")
    parser.add_argument("--quick", action="store_true", help="a smoke run: small, 2 games, 1 round, 0.25 s")
    args = parser.parse_args()
    boards = args.boards.split(",")
    lefts = [int(k) for k in args.speed_left.split(",")]
    if args.quick:
        boards, lefts, args.games, args.rounds, args.within, args.cap, args.most = ["small"], [2], 2, 1, 0.25, 0.5, 8
    if not args.skip_speed:
        speed(args.games, lefts, args.rounds)
    if not args.skip_depth:
        depth(boards, args.games, args.within, args.cap, args.most)


if __name__ == "__main__":
    main()
