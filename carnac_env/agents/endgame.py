"""The ``solve=K`` option of ``mcts`` and ``az``: the exact solver's move in small endgames.

When the supply holds at most ``K`` megaliths, :func:`solver_move` asks the exact solver
(:func:`carnac_env.solve.solve`) for a move that achieves the position's game-theoretic result
(win, draw or loss under the full tie-break chain). The solver runs under a node budget,
:data:`NODE_LIMIT`, so that a move never hangs: when it gives up, :func:`solver_move` returns
None and the agent searches as usual (with MCTS-Solver propagation, ``Search(solver=True)``).

Each move starts from an empty transposition table (:func:`~carnac_env.solve.clear_table`), so a
move depends on its position only: the nodes it takes, whether the budget suffices and which of
several moves of the same result is played never depend on what the same thread solved before.
The same seed gives the same games with any number of workers, bit for bit.
"""

from __future__ import annotations

from carnac_env.core.game import GameState
from carnac_env.errors import SolveLimitError
from carnac_env.solve import clear_table, solve

__all__ = ["MAX_SOLVE", "NODE_LIMIT", "SOLVE_HELP", "TABLE_MB", "solver_move"]

#: The largest ``solve=K`` (the solver's own default limit on the supply).
MAX_SOLVE = 8
#: The solver's node budget per move: about 2.5 s at the 200,000 nodes per second measured on the test machine
#: (docs/search.md, "Solving endgames"); past it the agent searches instead.
NODE_LIMIT = 500_000
#: The solver's transposition table, in MiB.
TABLE_MB = 64
#: The option's help text, shared by both agents.
SOLVE_HELP = (
    "play the exact solver's move when at most K megaliths are left (its node budget spent: search), "
    "and prove results in the search (MCTS-Solver); 0 off"
)


def solver_move(state: GameState, solve_left: int) -> int | None:
    """The exact solver's move for ``state`` if its supply holds at most ``solve_left``
    megaliths (``solve_left`` > 0) and the solver finishes within :data:`NODE_LIMIT` nodes;
    else None."""
    if not solve_left or state.supply > solve_left or state.is_over:
        return None
    clear_table()  # a move depends on its position only, not on what was solved before
    try:
        solution = solve(state, max_megaliths_left=solve_left, table_mb=TABLE_MB, node_limit=NODE_LIMIT)
    except SolveLimitError:  # the node budget ran out: the caller searches
        return None
    return solution.best_action if solution.best_action >= 0 else None
