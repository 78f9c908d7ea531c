"""examples/jax_ppo.py: the jitted PPO over carnac_env.jax (docs/jax.md).

The game loop (learner move, random opponent until the learner is to act again, auto-reset) is
checked against the rules as the engine states them; masked sampling never picks an illegal
action; the greedy evaluation counts every game once; the script runs in smoke mode, with the
mctx search evaluation; and a short training run beats random play (the last two are slow: CI's
jax entry runs them, as it runs every test the earlier entries skipped).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from _frameworks import require
from _paths import ROOT

jax = require("jax", "the jax extra")
jnp = jax.numpy

from carnac_env.jax import Carnac, uniform_legal_action  # noqa: E402

EXAMPLES = ROOT / "examples"
sys.path.insert(0, str(EXAMPLES))
try:
    import jax_ppo
finally:
    sys.path.pop(0)


def test_advance_hands_every_game_back_to_the_learner_and_resets_finished_ones() -> None:
    env = Carnac("small")
    games = 64
    advance = jax.jit(jax.vmap(jax_ppo.make_advance(env), in_axes=(0, 0, 0, None, None, 0)), static_argnums=3)
    state = jax.jit(jax.vmap(env.init))(jax.random.split(jax.random.PRNGKey(0), games))
    fresh = jax.jit(env.init)()
    seat = jnp.arange(games, dtype=jnp.int32) % 2
    none = jnp.zeros(games, jnp.int32)
    state, seat, reward, done = advance(state, seat, none, False, fresh, jax.random.split(jax.random.PRNGKey(1), games))
    assert np.array_equal(np.asarray(state.current_player), np.asarray(seat))  # White's games: Red has placed
    assert not np.asarray(done).any() and not np.asarray(reward).any()
    assert np.asarray(state._step_count)[np.asarray(seat) == 1].min() >= 1
    pick_legal = jax.jit(uniform_legal_action)
    keys = jax.random.split(jax.random.PRNGKey(2), (60, 2))
    finished = results = 0
    for pick, step_key in keys:  # every game of the batch ends at least once (small has 28 megaliths)
        action = pick_legal(pick, state.legal_action_mask)
        before = np.asarray(state._step_count)
        state, seat, reward, done = advance(state, seat, action, True, fresh, jax.random.split(step_key, games))
        done, reward = np.asarray(done), np.asarray(reward)
        assert not np.asarray(state.terminated).any()  # the next game is already there
        assert np.array_equal(np.asarray(state.current_player), np.asarray(seat))
        assert set(np.unique(reward)) <= {-1.0, 0.0, 1.0} and not reward[~done].any()
        moved = np.asarray(state._step_count) - before
        assert (moved[~done] >= 1).all() and (moved[~done] <= 3).all()  # the learner's move and 0-2 replies
        finished += done.sum()
        results += np.abs(reward).sum()
    assert finished >= games and results > 0


def test_masked_sampling_never_picks_an_illegal_action() -> None:
    key = jax.random.PRNGKey(0)
    mask = jax.random.bernoulli(key, 0.05, (4096, 165)).at[:, 7].set(True)
    logits = 5 * jax.random.normal(jax.random.PRNGKey(1), mask.shape)  # illegal moves often the largest
    masked = jax_ppo.masked_logits(logits, mask)
    action = jax.random.categorical(jax.random.PRNGKey(2), masked)
    assert np.asarray(mask[jnp.arange(4096), action]).all()
    probs = jax.nn.softmax(masked)
    assert float(jnp.abs(probs.sum(axis=-1) - 1).max()) < 1e-5 and not np.asarray(probs[~mask]).any()
    entropy = -jnp.sum(probs * jax.nn.log_softmax(masked), axis=-1)
    assert np.isfinite(np.asarray(entropy)).all()


def test_evaluation_counts_every_game_once_and_is_deterministic() -> None:
    """play_against_random with a learner that takes the first legal action: every game counted once."""
    env = Carnac("petit_menec")

    def first_legal(params, state, key):
        return jnp.argmax(state.legal_action_mask, axis=-1).astype(jnp.int32)

    evaluate = jax.jit(lambda key: jax_ppo.play_against_random(env, first_legal, {}, key, 64))
    counts = np.asarray(evaluate(jax.random.PRNGKey(1)))
    assert counts.sum() == 64 and (counts >= 0).all()
    assert np.array_equal(counts, np.asarray(evaluate(jax.random.PRNGKey(1))))
    assert not np.array_equal(counts, np.asarray(evaluate(jax.random.PRNGKey(2)))) or counts.max() == 64


def test_ppo_rejects_a_batch_that_minibatches_do_not_divide() -> None:
    with pytest.raises(ValueError, match="multiple of minibatches"):
        jax_ppo.make_ppo(Carnac("small"), jax_ppo.Config(envs=3, steps=3, minibatches=2))


@pytest.mark.slow
def test_the_script_runs_in_smoke_mode_with_search(tmp_path: Path) -> None:
    """CARNAC_SMOKE=1, and the evaluation by mctx's Gumbel search after training (CI's jax entry has mctx)."""
    require("mctx", "the search extra")
    env = {**os.environ, "CARNAC_SMOKE": "1"}
    out = tmp_path / "curve.json"
    args = ["--board", "petit_menec", "--search-simulations", "4", "--out", str(out)]
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / "jax_ppo.py"), *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = json.loads(out.read_text())
    assert summary["updates"] == 2 and summary["timesteps"] == 2 * 8 * 8
    assert [point["updates"] for point in summary["curve"]] == [0, 1, 2]
    assert all(abs(p["win"] + p["draw"] + p["loss"] - 1) < 1e-9 for p in summary["curve"])
    assert summary["settings"]["board"] == "petit_menec" and summary["settings"]["envs"] == 8
    assert "final win rate vs random" in proc.stdout
    search = summary["search"]
    assert search["simulations"] == 4 and abs(search["win"] + search["draw"] + search["loss"] - 1) < 1e-9
    assert "with Gumbel MuZero search (4 simulations" in proc.stdout


@pytest.mark.slow
def test_a_short_training_run_beats_random_play() -> None:
    """25 updates (25,600 steps) on small: measured 88-91% against random; an untrained policy ~50%."""
    config = jax_ppo.Config(envs=32, steps=32, hidden=64)
    result = jax_ppo.train(Carnac("small"), config, updates=25, eval_every=25, eval_games=200, log=lambda _: None)
    assert result["timesteps"] == 25 * 32 * 32
    assert result["curve"][-1]["win"] >= 0.75, result["curve"]
