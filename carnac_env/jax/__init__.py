"""Carnac in JAX: a pure-functional engine for ``jit``/``vmap`` self-play, shaped like Pgx.

>>> import jax, jax.numpy as jnp
>>> from carnac_env.jax import Carnac
>>> env = Carnac(board="medium")
>>> init, step = jax.jit(jax.vmap(env.init)), jax.jit(jax.vmap(env.step))
>>> state = init(jax.random.split(jax.random.PRNGKey(0), 1024))   # 1,024 games at once
>>> state = step(state, jnp.zeros(1024, dtype=jnp.int32))         # each places on a1
>>> state.current_player[:3]
Array([1, 1, 1], dtype=int32)

The state carries ``current_player``, ``observation`` (the planes of
:func:`carnac_env.core.observation.observation_planes`, seen by the player to act),
``legal_action_mask``, ``rewards`` (2,), ``terminated`` and ``truncated``, like a
``pgx.State``; :func:`from_core` turns a :class:`carnac_env.core.GameState` into a state
(hand-built positions). The rules are a pure :class:`Game` in Pgx's shape
(:mod:`carnac_env.jax.game`: ``init``, ``step``, ``observe``, ``legal_action_mask``,
``is_terminal``, ``returns``), and :class:`Carnac` (:mod:`carnac_env.jax.env`) is the thin
environment around it. :func:`uniform_legal_action` (:mod:`carnac_env.jax.sampling`) draws
a uniformly random legal action per game inside a compiled step, at a cost that does not grow
with the number of actions. The guide is docs/jax.md.

Needs the ``jax`` extra: ``pip install 'carnac-env[jax]'``.
"""

from __future__ import annotations

try:
    import jax  # noqa: F401  (the real jax; this package is carnac_env.jax)
except ImportError as error:  # pragma: no cover - depends on the install
    raise ImportError("carnac_env.jax needs JAX: pip install 'carnac-env[jax]' (or pip install jax)") from error

from carnac_env.jax.env import Carnac, State, from_core
from carnac_env.jax.game import Game, GameState
from carnac_env.jax.sampling import ranked_action, uniform_legal_action

__all__ = ["Carnac", "Game", "GameState", "State", "from_core", "ranked_action", "uniform_legal_action"]
