"""carnac_env.jax.uniform_legal_action: a uniformly random legal action drawn inside a compiled
step, in two levels of blocks instead of a scan over the whole action row.

It must pick, for the same key, the very action the plain ``argmax(cumsum(mask) > pick)`` picks,
so the PPO example's random opponent and the throughput benchmark's loop play the games they
played before the sampler became cheap; it never picks an illegal action; and it lowers with no
loop, so its cost on an accelerator does not depend on the action count's scan.
"""

from __future__ import annotations

import numpy as np
import pytest
from _frameworks import require

jax = require("jax", "the jax extra")
jnp = jax.numpy

from carnac_env.jax import Carnac, ranked_action, uniform_legal_action  # noqa: E402


def plain_uniform_legal_action(key, mask):
    """``uniform_legal_action`` as it was first written: argmax of the cumsum past a uniform pick."""
    legal = jnp.sum(mask, axis=-1, dtype=jnp.int32)
    pick = jax.random.randint(key, legal.shape, 0, jnp.iinfo(jnp.int32).max) % jnp.maximum(legal, 1)
    return jnp.argmax(jnp.cumsum(mask, axis=-1, dtype=jnp.int32) > pick[..., None], axis=-1).astype(jnp.int32)


@pytest.mark.parametrize("actions", [1, 7, 16, 17, 65, 285])
def test_the_sampler_picks_the_plain_samplers_action(actions: int) -> None:
    """The two-level sampler plays the very games the cumsum sampler played, seed for seed."""
    sampler, plain = jax.jit(uniform_legal_action), jax.jit(plain_uniform_legal_action)
    rng = np.random.default_rng(actions)
    for density in (0.0, 0.05, 0.5, 1.0):
        mask = jnp.asarray(rng.random((512, actions)) < density)
        for seed in range(3):
            key = jax.random.PRNGKey(seed)
            picked = np.asarray(sampler(key, mask))
            assert np.array_equal(picked, np.asarray(plain(key, mask))), (actions, density, seed)
            legal = np.asarray(mask).any(axis=1)
            assert np.asarray(mask)[legal, picked[legal]].all() and (picked[~legal] == 0).all()


def test_ranked_action_finds_every_rank_of_integer_weights() -> None:
    """Weights above 1 count as that many copies of the action: rank ``pick`` lands on the action
    whose running total first passes it, for every pick of a row."""
    weights = jnp.asarray([[0, 3, 0, 1, 2] + [0] * 14 + [4]], dtype=jnp.int32)
    totals = np.cumsum(np.asarray(weights[0]))
    for pick in range(int(totals[-1])):
        want = int(np.argmax(totals > pick))
        assert int(ranked_action(weights, jnp.asarray([pick]))[0]) == want, pick


def test_the_sampler_draws_every_legal_action_of_a_real_position_about_equally() -> None:
    """On the legal actions of medium's first position (280 placements), 280,000 draws: every
    legal action drawn, none illegal, and each count within 5 standard deviations of 1,000."""
    env = Carnac("medium")
    mask = env.init(jax.random.PRNGKey(0)).legal_action_mask
    masks = jnp.broadcast_to(mask, (280_000, mask.shape[0]))
    drawn = np.asarray(jax.jit(uniform_legal_action)(jax.random.PRNGKey(3), masks))
    legal = np.flatnonzero(np.asarray(mask))
    counts = np.bincount(drawn, minlength=mask.shape[0])
    assert counts[~np.asarray(mask)].sum() == 0
    expected = len(drawn) / len(legal)
    assert (np.abs(counts[legal] - expected) < 5 * np.sqrt(expected)).all(), counts[legal].min()


def test_finding_the_ranked_action_lowers_with_no_loop_and_no_host_callback() -> None:
    """The search for the action (the key's random integers come from threefry, a loop of its own)."""
    mask = jax.ShapeDtypeStruct((1024, 285), jnp.bool_)
    pick = jax.ShapeDtypeStruct((1024,), jnp.int32)
    text = jax.jit(ranked_action).lower(mask, pick).as_text()
    assert "stablehlo.while" not in text and "callback" not in text.lower()
    plain = jax.jit(lambda m, p: jnp.argmax(jnp.cumsum(m, axis=-1) > p[:, None], axis=-1)).lower(mask, pick)
    assert "stablehlo.while" in plain.as_text() or "reduce_window" in plain.as_text()  # the scan it replaces
