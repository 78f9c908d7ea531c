"""Thousands of Carnac games at once, compiled with numba. See :mod:`carnac_env.batch.engine`.

>>> from carnac_env.batch import BatchGame
>>> games = BatchGame(board="medium", num_envs=1024, seed=0)
>>> step = games.step(games.sample_actions())

The package: :mod:`.state` (the engine's fields, declared once), :mod:`.rules` (the
compiled rules), :mod:`.views` (observations and masks), :mod:`.scoring` (the compiled
scorer, :func:`dolmen_winner`, callable from Python and from numba code) and :mod:`.engine`
(the :class:`BatchGame` API). One random game from a core GameState to the end, compiled, is
the search's :func:`carnac_env.search.random_playout`.
"""

from carnac_env.batch.engine import MAX_ENVS, BatchGame, BatchStep, batch_scores
from carnac_env.batch.scoring import dolmen_winner

__all__ = ["MAX_ENVS", "BatchGame", "BatchStep", "batch_scores", "dolmen_winner"]
