"""Thousands of Carnac games at once, compiled with numba. See :mod:`carnac_env.batch.engine`.

>>> from carnac_env.batch import BatchGame
>>> games = BatchGame(board="medium", num_envs=1024, seed=0)
>>> step = games.step(games.sample_actions())

The package is the compiled rules kernel and nothing else, used by :class:`BatchGame` (and
the vector env over it), the search, the ``greedy`` agent and self-play: :mod:`.state` (the
engine's fields, declared once), :mod:`.rules` (the compiled rules: moves, legality, copies,
the result), :mod:`.views` (observations and masks, kept only for observed slots),
:mod:`.scoring` (the compiled scorer and its one flood fill; :func:`dolmen_winner`, callable
from Python and from numba code), :mod:`.rng` (SplitMix64) and :mod:`.engine` (the
:class:`BatchGame` API; :attr:`BatchGame.kernel` is its state for compiled callers). What
searches over it (random and greedy playouts, greedy's lookahead) is :mod:`carnac_env.search`.
"""

from carnac_env.batch.engine import MAX_ENVS, BatchGame, BatchStep, batch_scores
from carnac_env.batch.scoring import dolmen_winner

__all__ = ["MAX_ENVS", "BatchGame", "BatchStep", "batch_scores", "dolmen_winner"]
