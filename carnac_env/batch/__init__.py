"""Thousands of Carnac games at once, compiled with numba. See :mod:`carnac_env.batch.engine`.

>>> from carnac_env.batch import BatchGame
>>> games = BatchGame(board="medium", num_envs=1024, seed=0)
>>> step = games.step(games.sample_actions())

Also here: :func:`random_playout` (one uniformly random game from a core GameState to the
end, compiled, for search) and :func:`dolmen_winner` (the compiled scorer, callable from
Python and from numba code), both from :mod:`carnac_env.batch.kernel`.
"""

from carnac_env.batch.engine import MAX_ENVS, BatchGame, BatchStep, batch_scores
from carnac_env.batch.kernel import dolmen_winner, random_playout

__all__ = ["MAX_ENVS", "BatchGame", "BatchStep", "batch_scores", "dolmen_winner", "random_playout"]
