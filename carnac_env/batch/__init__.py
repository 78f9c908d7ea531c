"""Thousands of Carnac games at once, as numpy arrays. See :mod:`carnac_env.batch.engine`.

>>> from carnac_env.batch import BatchGame
>>> games = BatchGame(board="medium", num_envs=1024, seed=0)
>>> step = games.step(games.sample_actions())
"""

from carnac_env.batch.engine import BatchGame, BatchStep, batch_scores

__all__ = ["BatchGame", "BatchStep", "batch_scores"]
