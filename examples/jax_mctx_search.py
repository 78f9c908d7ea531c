"""AlphaZero-style self-play on Carnac with mctx's Gumbel MuZero search, all inside jax.jit.

The JAX engine (carnac_env.jax) is the search's model: ``recurrent_fn`` steps the real rules,
so this is AlphaZero (a known simulator) driven through mctx's MuZero-shaped API. A tiny
linear network gives the prior and the value; one batch of games is played to the end
with search at every move, and the network takes a few gradient steps on the search's
policy targets and the game outcomes. Swap the linear network for a real one (flax, haiku,
equinox) and loop to train.

Carnac does not strictly alternate: after a tilt the tilter places again, after a decline
the placer places again. So the discount that mctx applies between a node and its child is
+1 when the same player acts again, -1 when the other player acts, and 0 at the end; the
value is always from the point of view of the player to act at the node.

    pip install 'carnac-env[jax]' mctx
    python examples/jax_mctx_search.py --board petit_menec --games 16 --simulations 16
"""

from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp
import mctx

from carnac_env.jax import Carnac


def init_params(env: Carnac, key: jax.Array) -> dict:
    """A linear policy head and a linear value head on the flattened observation planes."""
    features = env.observation_shape[0] * env.observation_shape[1] * env.observation_shape[2]
    k1, k2 = jax.random.split(key)
    return {
        "policy": 0.01 * jax.random.normal(k1, (features, env.num_actions)),
        "value": 0.01 * jax.random.normal(k2, (features,)),
    }


def network(params: dict, observation: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Policy logits (B, A) and value in [-1, 1] (B,) for a batch of observations."""
    x = observation.reshape(observation.shape[0], -1).astype(jnp.float32)
    x = x.at[:, 8::9].multiply(1 / 28)  # plane 8 holds the supply; scale it like the 0/1 planes
    return x @ params["policy"], jnp.tanh(x @ params["value"])


def make_recurrent_fn(env: Carnac):
    step = jax.vmap(env.step)

    def recurrent_fn(params, key, action, state):
        del key  # Carnac has no chance
        mover = state.current_player
        state = step(state, action)
        logits, value = network(params, state.observation)
        logits = jnp.where(state.legal_action_mask, logits, jnp.finfo(logits.dtype).min)
        reward = jnp.take_along_axis(state.rewards, mover[:, None], axis=1)[:, 0]
        discount = jnp.where(state.terminated, 0.0, jnp.where(state.current_player == mover, 1.0, -1.0))
        value = jnp.where(state.terminated, 0.0, value)
        return mctx.RecurrentFnOutput(reward=reward, discount=discount, prior_logits=logits, value=value), state

    return recurrent_fn


def make_self_play(env: Carnac, games: int, simulations: int):
    """A jitted function: params, key -> trajectories of one batch of complete games."""
    recurrent_fn = make_recurrent_fn(env)
    step = jax.vmap(env.step)
    max_steps = 2 * env.board.megaliths  # each placement is followed by at most one tilt or decline

    def move(carry, key):
        params, state = carry
        logits, value = network(params, state.observation)
        root = mctx.RootFnOutput(prior_logits=logits, value=value, embedding=state)
        search = mctx.gumbel_muzero_policy(
            params,
            key,
            root,
            recurrent_fn,
            num_simulations=simulations,
            invalid_actions=~state.legal_action_mask,
            max_num_considered_actions=16,
        )
        after = step(state, search.action)
        record = {
            "observation": state.observation,
            "policy_target": search.action_weights,
            "player": state.current_player,
            "live": ~state.terminated,
            "rewards": after.rewards,
        }
        return (params, after), record

    @jax.jit
    def self_play(params, key):
        init_key, search_key = jax.random.split(key)
        state = jax.vmap(env.init)(jax.random.split(init_key, games))
        _, records = jax.lax.scan(move, (params, state), jax.random.split(search_key, max_steps))
        outcome = records["rewards"].sum(axis=0)  # (games, 2): only the final step has rewards
        records["value_target"] = jnp.take_along_axis(outcome[None], records["player"][..., None], axis=2)[..., 0]
        return records, outcome

    return self_play


def loss_fn(params: dict, records: dict) -> jax.Array:
    """Cross-entropy to the search policy plus squared error to the outcome, on live steps."""
    steps, games = records["player"].shape
    obs = records["observation"].reshape(steps * games, *records["observation"].shape[2:])
    logits, value = network(params, obs)
    target = records["policy_target"].reshape(steps * games, -1)
    live = records["live"].reshape(-1)
    policy_loss = -jnp.sum(target * jax.nn.log_softmax(logits), axis=-1)
    value_loss = (value - records["value_target"].reshape(-1)) ** 2
    return jnp.sum(jnp.where(live, policy_loss + value_loss, 0.0)) / jnp.maximum(jnp.sum(live), 1)


def run(board: str = "petit_menec", games: int = 16, simulations: int = 16, updates: int = 5, seed: int = 0) -> dict:
    """Play one batch of self-play games with search and take a few SGD steps; return a summary."""
    env = Carnac(board)
    key = jax.random.PRNGKey(seed)
    params = init_params(env, key)
    self_play = make_self_play(env, games, simulations)
    start = time.perf_counter()
    records, outcome = jax.block_until_ready(self_play(params, jax.random.PRNGKey(seed + 1)))
    seconds = time.perf_counter() - start
    grad_step = jax.jit(lambda p, r: jax.tree_util.tree_map(lambda w, g: w - 0.01 * g, p, jax.grad(loss_fn)(p, r)))
    losses = [float(loss_fn(params, records))]
    for _ in range(updates):
        params = grad_step(params, records)
        losses.append(float(loss_fn(params, records)))
    return {
        "games": games,
        "moves": int(records["live"].sum()),
        "red_wins": int((outcome[:, 0] > 0).sum()),
        "white_wins": int((outcome[:, 1] > 0).sum()),
        "draws": int((outcome[:, 0] == 0).sum()),
        "seconds_with_compilation": seconds,
        "losses": losses,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--board", default="petit_menec")
    parser.add_argument("--games", type=int, default=16)
    parser.add_argument("--simulations", type=int, default=16)
    parser.add_argument("--updates", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    summary = run(args.board, args.games, args.simulations, args.updates, args.seed)
    print(
        f"{summary['games']} games, {summary['moves']} searched moves in {summary['seconds_with_compilation']:.1f}s "
        f"(compilation included): Red won {summary['red_wins']}, White {summary['white_wins']}, "
        f"{summary['draws']} draws"
    )
    print("loss before and after each update:", " ".join(f"{loss:.3f}" for loss in summary["losses"]))


if __name__ == "__main__":
    main()
