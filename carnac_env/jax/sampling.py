"""Drawing actions inside a compiled step: a uniformly random legal action, found without a
scan over the whole action row.

Carnac has 165 to 669 actions (285 on medium), Pgx's othello 65 and connect_four 7. The usual
ways to draw one legal action under ``jit`` cost in proportion to the row: ``jax.random.categorical``
draws a Gumbel number per action, and ``argmax(cumsum(mask) > pick)`` lowers to an associative
scan on a CPU, which cost about 4x Carnac's own game step at batch 1,024 (docs/jax.md, "What a
step costs"). :func:`uniform_legal_action` gives the very action of the cumsum form, for the
same key, in two levels of :data:`SAMPLER_BLOCK` actions; random opponents, random rollouts and
benchmarks draw with it.

>>> import jax, jax.numpy as jnp
>>> from carnac_env.jax import Carnac, uniform_legal_action
>>> env = Carnac(board="medium")
>>> state = jax.vmap(env.init)(jax.random.split(jax.random.PRNGKey(0), 4))
>>> action = uniform_legal_action(jax.random.PRNGKey(1), state.legal_action_mask)
>>> bool(state.legal_action_mask[jnp.arange(4), action].all())
True
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

__all__ = ["SAMPLER_BLOCK", "ranked_action", "uniform_legal_action"]

#: The sampler's block: a row of weights is read as blocks of this many actions (see ``ranked_action``).
SAMPLER_BLOCK = 16


def ranked_action(weights: jax.Array, pick: jax.Array) -> jax.Array:
    """The first action whose running total of ``weights`` passes ``pick``, per row:
    ``argmax(cumsum(weights) > pick)`` for non-negative integer ``weights (..., A)`` and
    ``0 <= pick < sum(weights)`` (``pick (...)``); the caller handles a row with no weight.

    Found in two levels, the block of :data:`SAMPLER_BLOCK` actions that holds it and then its
    place in the block: a few small fused comparisons, where a ``cumsum`` over the whole row is
    a scan whose cost grows with the number of actions (see the module's docstring).
    """
    actions, width = weights.shape[-1], SAMPLER_BLOCK
    blocks = -(-actions // width)
    pad = [(0, 0)] * (weights.ndim - 1) + [(0, blocks * width - actions)]
    padded = jnp.pad(weights.astype(jnp.int32), pad).reshape((*weights.shape[:-1], blocks, width))
    counts = jnp.sum(padded, axis=-1)
    up_to = jnp.tril(jnp.ones((blocks, blocks), dtype=jnp.int32))  # up_to[i, j]: block j is at or before i
    block = jnp.sum(jnp.sum(counts[..., None, :] * up_to, axis=-1) <= pick[..., None], axis=-1)
    block = jnp.minimum(block, blocks - 1)
    before = jnp.sum(jnp.where(jnp.arange(blocks) < block[..., None], counts, 0), axis=-1)
    row = jnp.take_along_axis(padded, block[..., None, None], axis=-2)[..., 0, :]
    in_row = jnp.tril(jnp.ones((width, width), dtype=jnp.int32))
    place = jnp.sum(jnp.sum(row[..., None, :] * in_row, axis=-1) <= (pick - before)[..., None], axis=-1)
    return jnp.minimum(block * width + place, actions - 1).astype(jnp.int32)


def uniform_legal_action(key: jax.Array, mask: jax.Array) -> jax.Array:
    """A uniformly random legal action from one random integer (0 where no action is legal).

    Args:
        key: a PRNG key; one random integer is drawn per row.
        mask: ``(..., A)`` legal-action mask (bool or integer 0/1), e.g. ``state.legal_action_mask``.

    Returns:
        ``(...)`` int32 actions: per row the legal action of rank ``pick``, a uniform integer below
        the number of legal actions; the same distribution as ``jax.random.categorical`` over
        ``log(mask)``, and for the same key the very action ``argmax(cumsum(mask) > pick)`` gives
        (tests/jax_engine/test_jax_sampling.py), found by :func:`ranked_action`.
    """
    legal = jnp.sum(mask, axis=-1, dtype=jnp.int32)
    pick = jax.random.randint(key, legal.shape, 0, jnp.iinfo(jnp.int32).max) % jnp.maximum(legal, 1)
    return jnp.where(legal > 0, ranked_action(mask, pick), 0).astype(jnp.int32)
