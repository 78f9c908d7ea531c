"""MCTS simulations per second: carnac_env's ``mcts`` agent (the compiled search) on a Carnac
board against OpenSpiel's C++ ``pyspiel.MCTSBot`` with ``pyspiel.RandomRolloutEvaluator`` on
``connect_four`` (and its Python ``MCTSBot`` for reference).

Two measurements, each in rounds that alternate between the engines in one process:

* **position**: searches from one early position, again and again (carnac: the medium
  board after ``--opening`` random moves; connect_four after as many). Every search starts
  from a fresh tree.
* **games**: whole self-play games, one search per move (carnac's agent keeps its tree
  between moves, as it does in play; only new simulations are counted).

Both searches run the same number of simulations per move (``--sims``; by default the
default agent's), random rollouts to the end of the game, one per simulation, and
OpenSpiel's solver is off so that neither search stops early. Two carnac rows: ``mcts`` at
its defaults (root ranked by the greedy evaluation, best 8 searched, compiled playouts, tree
reuse; the ranking's time is included) and ``mcts:width=0`` (plain UCT over every action).
Each round times at least ``--seconds`` of search per engine. The script prints the median
sims/s of each and the ratio carnac / OpenSpiel's C++ bot.

    python benchmarks/mcts_speed.py [--sims N] [--seconds 3] [--rounds 5] [--board medium]

Needs open_spiel (``pip install open_spiel``; the ``bench`` extra).
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable

CARNAC_ROWS = {
    "default": "mcts",
    "width=0": "mcts:width=0",
}


def carnac_agent(spec: str, sims: int, seed: int):
    """The carnac agent of ``spec`` with ``sims`` simulations per move."""
    from carnac_env.agents import make

    return make(f"{spec}:sims={sims}", seed=seed)


def carnac_opening(board: str, moves: int, seed: int):
    """The position after ``moves`` uniformly random moves on ``board``."""
    from carnac_env.core.game import GameState

    rng = random.Random(seed)
    state = GameState(board)
    for _ in range(moves):
        legal = state.legal_actions()
        state.apply(legal[int(rng.random() * len(legal))])
    return state


def carnac_position_round(spec: str, board: str, opening: int, sims: int, seconds: float, seed: int) -> float:
    """Searches from one early position, each from a fresh tree, for ``seconds``; sims/s."""
    position = carnac_opening(board, opening, seed=1000 + seed)
    agent = carnac_agent(spec, sims, seed)
    total_sims = 0
    spent = 0.0
    while spent < seconds:
        agent.reset(seed + total_sims)
        start = time.perf_counter()
        agent.choose(position)
        spent += time.perf_counter() - start
        total_sims += agent.last_sims
    return total_sims / spent


def carnac_games_round(spec: str, board: str, sims: int, seconds: float, seed: int) -> float:
    """Self-play games of one carnac agent for at least ``seconds`` of search; sims/s."""
    from carnac_env.core.game import GameState

    agent = carnac_agent(spec, sims, seed)
    total_sims = 0
    spent = 0.0
    game_index = 0
    while spent < seconds:
        state = GameState(board)
        agent.reset(seed + game_index)
        game_index += 1
        while not state.is_over and spent < seconds:
            start = time.perf_counter()
            action = agent.choose(state)
            spent += time.perf_counter() - start
            total_sims += agent.last_sims
            state.apply(action)
    return total_sims / spent


def openspiel_bot(sims: int, seed: int, cpp: bool = True):
    """OpenSpiel's MCTSBot on connect_four with one random rollout per simulation: the C++ bot
    (``pyspiel.MCTSBot``), or with ``cpp=False`` the Python one (``open_spiel.python.algorithms.mcts``)."""
    import pyspiel

    game = pyspiel.load_game("connect_four")
    if cpp:
        evaluator = pyspiel.RandomRolloutEvaluator(1, seed)
        # (game, evaluator, uct_c, max_simulations, max_memory_mb, solve, seed, verbose)
        return game, pyspiel.MCTSBot(game, evaluator, 2.0, sims, 1_000_000, False, seed, False)
    import numpy as np
    from open_spiel.python.algorithms import mcts

    rng = np.random.RandomState(seed)
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=rng)
    return game, mcts.MCTSBot(game, uct_c=2.0, max_simulations=sims, evaluator=evaluator, solve=False, random_state=rng)


def openspiel_position_round(opening: int, sims: int, seconds: float, seed: int, cpp: bool = True) -> float:
    """Searches from one early connect_four position for ``seconds``; sims/s."""
    game, bot = openspiel_bot(sims, seed, cpp)
    rng = random.Random(1000 + seed)
    state = game.new_initial_state()
    for _ in range(opening):
        legal = state.legal_actions()
        state.apply_action(legal[int(rng.random() * len(legal))])
    total_sims = 0
    spent = 0.0
    while spent < seconds:
        start = time.perf_counter()
        if cpp:
            bot.step(state)  # one search of max_simulations from a fresh tree
            total_sims += sims
        else:
            total_sims += bot.mcts_search(state).explore_count
        spent += time.perf_counter() - start
    return total_sims / spent


def openspiel_games_round(sims: int, seconds: float, seed: int, cpp: bool = True) -> float:
    """Self-play connect_four games of OpenSpiel's MCTSBot; sims/s."""
    game, bot = openspiel_bot(sims, seed, cpp)
    total_sims = 0
    spent = 0.0
    while spent < seconds:
        state = game.new_initial_state()
        while not state.is_terminal() and spent < seconds:
            start = time.perf_counter()
            if cpp:
                action = bot.step(state)
                total_sims += sims
            else:
                root = bot.mcts_search(state)
                action = root.best_child().action
                total_sims += root.explore_count
            spent += time.perf_counter() - start
            state.apply_action(action)
    return total_sims / spent


def measure(args: argparse.Namespace, mode: str) -> None:
    """Alternating rounds of every engine in ``mode`` ("position" or "games"); prints the table."""
    rounds: dict[str, Callable[[int], float]] = {}
    for label, spec in CARNAC_ROWS.items():
        if mode == "position":
            rounds[label] = lambda seed, spec=spec: carnac_position_round(
                spec, args.board, args.opening, args.sims, args.seconds, seed
            )
        else:
            rounds[label] = lambda seed, spec=spec: carnac_games_round(spec, args.board, args.sims, args.seconds, seed)
    if mode == "position":
        rounds["openspiel"] = lambda seed: openspiel_position_round(args.opening, args.sims, args.seconds, seed)
        if args.python_bot:
            rounds["openspiel python"] = lambda seed: openspiel_position_round(
                args.opening, args.sims, args.seconds, seed, cpp=False
            )
    else:
        rounds["openspiel"] = lambda seed: openspiel_games_round(args.sims, args.seconds, seed)
        if args.python_bot:
            rounds["openspiel python"] = lambda seed: openspiel_games_round(args.sims, args.seconds, seed, cpp=False)
    rates: dict[str, list[float]] = {label: [] for label in rounds}
    saved = args.seconds
    args.seconds = 0.2  # a short untimed round first: numba compiles (or loads) every path here
    for run in rounds.values():
        run(10_000)
    args.seconds = saved
    for round_index in range(args.rounds):
        for label, run in rounds.items():
            rates[label].append(run(round_index))
        print(
            f"{mode} round {round_index + 1}: " + ", ".join(f"{k} {v[-1]:,.0f}" for k, v in rates.items()), flush=True
        )
    theirs = statistics.median(rates["openspiel"])
    where = f"after {args.opening} random moves" if mode == "position" else "whole self-play games"
    print(f"\n{mode}: {where}, {args.sims} sims/move, median of {args.rounds} rounds")
    print(f"  OpenSpiel C++ pyspiel.MCTSBot (connect_four, random rollouts): {theirs:,.0f} sims/s")
    if "openspiel python" in rates:
        python_bot = statistics.median(rates["openspiel python"])
        print(f"  OpenSpiel Python MCTSBot (connect_four): {python_bot:,.0f} sims/s")
    for label, spec in CARNAC_ROWS.items():
        ours = statistics.median(rates[label])
        print(f"  carnac_env {spec} ({args.board}): {ours:,.0f} sims/s, ratio {ours / theirs:.2f}x OpenSpiel C++")
    print(flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sims", type=int, default=None, help="simulations per move for every search (default: the mcts default)"
    )
    parser.add_argument("--seconds", type=float, default=3.0, help="search seconds per round per engine")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--board", default="medium")
    parser.add_argument("--opening", type=int, default=4, help="random moves before the position measured")
    parser.add_argument("--mode", choices=["both", "position", "games"], default="both")
    parser.add_argument("--python-bot", action="store_true", help="also measure OpenSpiel's Python MCTSBot")
    args = parser.parse_args()
    try:
        import pyspiel  # noqa: F401
    except ImportError:
        raise SystemExit("this benchmark needs open_spiel: pip install open_spiel (the bench extra)") from None
    from carnac_env.agents.mcts import MCTSAgent

    if args.sims is None:
        args.sims = MCTSAgent().sims
    MCTSAgent(sims=50).choose(carnac_opening(args.board, args.opening, 0))  # load the compiled search first
    for mode in ("position", "games"):
        if args.mode in ("both", mode):
            measure(args, mode)


if __name__ == "__main__":
    main()
