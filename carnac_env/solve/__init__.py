"""Exact endgame solving: :func:`solve` gives the game-theoretic result of a position.

>>> from carnac_env.solve import solve
>>> solution = solve(state)  # doctest: +SKIP
>>> solution.result, solution.best_action, solution.nodes  # doctest: +SKIP

See :mod:`carnac_env.solve.alphabeta` for the algorithm, the memory bound and the limits.
"""

from carnac_env.solve.alphabeta import MAX_TABLE_MB, Solution, clear_table, solve

__all__ = ["MAX_TABLE_MB", "Solution", "clear_table", "solve"]
