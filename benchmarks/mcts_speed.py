"""MCTS simulations per second: carnac_env's ``mcts`` agent on a Carnac board against
OpenSpiel's Python ``MCTSBot`` with ``RandomRolloutEvaluator`` on ``connect_four``.

Both searches play whole games against themselves with the same number of simulations
per move (random rollouts to the end of the game, one rollout per simulation, plain UCT:
carnac's ``mcts:width=0`` searches every legal action, and OpenSpiel's solver is switched
off so that neither search stops early). Rounds alternate between the two in one process;
each round times at least ``--seconds`` of search. The script prints the median
simulations per second of each and the ratio (carnac / OpenSpiel), and also the rate of
carnac's default agent (``mcts``, whose root first ranks the actions with the greedy
evaluation and searches the best 8), time for that ranking included.

    python benchmarks/mcts_speed.py [--sims 400] [--seconds 3] [--rounds 5] [--board medium]

Needs open_spiel (``pip install open_spiel``; the ``bench`` extra).
"""

from __future__ import annotations

import argparse
import statistics
import time


def carnac_round(board: str, sims: int, seconds: float, seed: int, width: int = 0) -> float:
    """Self-play games of carnac's MCTS for at least ``seconds`` of search; sims per second."""
    from carnac_env.agents import MCTSAgent
    from carnac_env.core.game import GameState

    agent = MCTSAgent(seed=seed, sims=sims, width=width)
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


def openspiel_round(sims: int, seconds: float, seed: int) -> float:
    """Self-play connect_four games of OpenSpiel's Python MCTSBot; sims per second."""
    import numpy as np
    import pyspiel
    from open_spiel.python.algorithms import mcts

    game = pyspiel.load_game("connect_four")
    rng = np.random.RandomState(seed)
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=rng)
    bot = mcts.MCTSBot(game, uct_c=2.0, max_simulations=sims, evaluator=evaluator, solve=False, random_state=rng)
    total_sims = 0
    spent = 0.0
    while spent < seconds:
        state = game.new_initial_state()
        while not state.is_terminal() and spent < seconds:
            start = time.perf_counter()
            root = bot.mcts_search(state)
            spent += time.perf_counter() - start
            total_sims += root.explore_count
            state.apply_action(root.best_child().action)
    return total_sims / spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=400, help="simulations per move for both searches")
    parser.add_argument("--seconds", type=float, default=3.0, help="search seconds per round per engine")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--board", default="medium")
    args = parser.parse_args()
    try:
        import pyspiel  # noqa: F401
    except ImportError:
        raise SystemExit("this benchmark needs open_spiel: pip install open_spiel (the bench extra)") from None

    ours, theirs, default = [], [], []
    for round_index in range(args.rounds):
        ours.append(carnac_round(args.board, args.sims, args.seconds, seed=round_index))
        theirs.append(openspiel_round(args.sims, args.seconds, seed=round_index))
        default.append(carnac_round(args.board, args.sims, args.seconds, seed=round_index, width=8))
        print(
            f"round {round_index + 1}: carnac {args.board} {ours[-1]:,.0f} sims/s, "
            f"OpenSpiel connect_four {theirs[-1]:,.0f} sims/s, carnac default agent {default[-1]:,.0f} sims/s",
            flush=True,
        )
    a, b, d = statistics.median(ours), statistics.median(theirs), statistics.median(default)
    print(f"carnac_env mcts:width=0 ({args.board}, {args.sims} sims/move): {a:,.0f} sims/s (median of {args.rounds})")
    print(f"OpenSpiel MCTSBot (connect_four, random rollouts, {args.sims} sims/move): {b:,.0f} sims/s")
    print(f"ratio carnac / OpenSpiel: {a / b:.2f}x")
    print(f"carnac_env default mcts (width=8, root ranking included): {d:,.0f} sims/s, {d / b:.2f}x OpenSpiel")


if __name__ == "__main__":
    main()
