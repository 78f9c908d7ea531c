"""AlphaZero-style self-play on Carnac with mctx's Gumbel MuZero search, all inside jax.jit.

The JAX engine (carnac_env.jax) is the search's model: ``recurrent_fn`` steps the real rules,
so this is AlphaZero (a known simulator) driven through mctx's MuZero-shaped API. A tiny
linear network gives the prior and the value; one batch of games is played to the end
with search at every move, and the network takes a few gradient steps on the search's
policy targets and the game outcomes. ``--iterations N`` repeats that N times (the AlphaZero
loop: self-play with search, then training on its targets), and ``--eval-games G`` measures the
greedy network against random play after each iteration. Swap the linear network for a real one
(flax, haiku, equinox) to train in earnest.

Carnac does not strictly alternate: after a tilt the tilter places again, after a decline
the placer places again. So the discount that mctx applies between a node and its child is
+1 when the same player acts again, -1 when the other player acts, and 0 at the end; the
value is always from the point of view of the player to act at the node.

    pip install 'carnac-env[jax]' mctx
    python examples/jax_mctx_search.py --board petit_menec --games 16 --simulations 16
    python examples/jax_mctx_search.py --board small --games 64 --updates 20 --lr 0.05 --iterations 40 --eval-games 200
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


def make_evaluate(env: Carnac, games: int):
    """A jitted function: params, key -> [wins, draws, losses] of the greedy network (no search)
    against uniformly random legal play, ``games`` games with seats alternating."""
    step = jax.vmap(env.step)
    seat = jnp.arange(games, dtype=jnp.int32) % 2

    @jax.jit
    def evaluate(params, key):
        def move(carry):
            state, result, key = carry
            key, pick = jax.random.split(key)
            logits, _ = network(params, state.observation)
            greedy = jnp.argmax(jnp.where(state.legal_action_mask, logits, -jnp.inf), axis=-1)
            random = jax.random.categorical(pick, jnp.where(state.legal_action_mask, 0.0, -jnp.inf))
            state = step(state, jnp.where(state.current_player == seat, greedy, random).astype(jnp.int32))
            return state, result + state.rewards[jnp.arange(games), seat], key

        state = jax.vmap(env.init)(jax.random.split(key, games))
        carry = (state, jnp.zeros(games), key)
        _, result, _ = jax.lax.while_loop(lambda c: ~jnp.all(c[0].terminated), move, carry)
        return jnp.stack([jnp.sum(result > 0), jnp.sum(result == 0), jnp.sum(result < 0)])

    return evaluate


def run(
    board: str = "petit_menec",
    games: int = 16,
    simulations: int = 16,
    updates: int = 5,
    seed: int = 0,
    iterations: int = 1,
    eval_games: int = 0,
    lr: float = 0.01,
    log=None,
) -> dict:
    """The AlphaZero loop, ``iterations`` times: play one batch of self-play games with search,
    then take ``updates`` SGD steps on its targets; with ``eval_games``, measure the greedy network
    against random play after each iteration. Return a summary of the last batch and the curve."""
    env = Carnac(board)
    key = jax.random.PRNGKey(seed)
    params = init_params(env, key)
    self_play = make_self_play(env, games, simulations)
    evaluate = make_evaluate(env, eval_games) if eval_games else None
    grad_step = jax.jit(lambda p, r: jax.tree_util.tree_map(lambda w, g: w - lr * g, p, jax.grad(loss_fn)(p, r)))
    curve = []
    start = time.perf_counter()
    for iteration in range(iterations):
        records, outcome = jax.block_until_ready(self_play(params, jax.random.PRNGKey(seed + 1 + iteration)))
        if iteration == 0:
            seconds = time.perf_counter() - start
        losses = [float(loss_fn(params, records))]
        for _ in range(updates):
            params = grad_step(params, records)
            losses.append(float(loss_fn(params, records)))
        if evaluate is not None:
            wins, draws, _ = (int(n) for n in evaluate(params, jax.random.PRNGKey(10_000 + iteration)))
            point = {
                "iteration": iteration + 1,
                "games_played": (iteration + 1) * games,
                "seconds": round(time.perf_counter() - start, 1),
                "win": wins / eval_games,
                "draw": draws / eval_games,
            }
            curve.append(point)
            if log is not None:
                log(
                    f"iteration {point['iteration']:>3} ({point['games_played']} self-play games, "
                    f"{point['seconds']}s): greedy network vs random win {point['win']:.1%} draw {point['draw']:.1%}"
                )
    return {
        "games": games,
        "moves": int(records["live"].sum()),
        "red_wins": int((outcome[:, 0] > 0).sum()),
        "white_wins": int((outcome[:, 1] > 0).sum()),
        "draws": int((outcome[:, 0] == 0).sum()),
        "seconds_with_compilation": seconds,
        "losses": losses,
        "curve": curve,
        "total_seconds": time.perf_counter() - start,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--board", default="petit_menec")
    parser.add_argument("--games", type=int, default=16)
    parser.add_argument("--simulations", type=int, default=16)
    parser.add_argument("--updates", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--iterations", type=int, default=1, help="self-play batches, each followed by --updates")
    parser.add_argument("--eval-games", type=int, default=0, help="after each iteration: greedy network vs random")
    parser.add_argument("--lr", type=float, default=0.01)
    args = parser.parse_args()
    summary = run(
        args.board,
        args.games,
        args.simulations,
        args.updates,
        args.seed,
        iterations=args.iterations,
        eval_games=args.eval_games,
        lr=args.lr,
        log=print,
    )
    print(
        f"{summary['games']} games, {summary['moves']} searched moves in {summary['seconds_with_compilation']:.1f}s "
        f"(compilation included): Red won {summary['red_wins']}, White {summary['white_wins']}, "
        f"{summary['draws']} draws"
    )
    if args.iterations > 1:
        print(
            f"(the numbers above are the last of {args.iterations} batches, the time the first's; all in "
            f"{summary['total_seconds']:.1f}s)"
        )
    print("loss before and after each update:", " ".join(f"{loss:.3f}" for loss in summary["losses"]))


if __name__ == "__main__":
    main()
