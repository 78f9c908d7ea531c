"""PPO on Carnac's JAX engine, jitted end to end: games, opponent, rollout and update in one XLA program.

    pip install -e ".[jax]"
    python examples/jax_ppo.py                                   # small board, 3 minutes of training
    python examples/jax_ppo.py --board petit_menec --minutes 10
    CARNAC_SMOKE=1 python examples/jax_ppo.py                    # tiny sizes: checks that it runs

The loop has the shape of PureJaxRL's and Pgx's PPO examples, written here in plain JAX (no
flax, haiku, optax or distrax: the ``jax`` extra is jax alone):

* ``--envs`` games run side by side under ``jax.vmap``; one update is a ``lax.scan`` of
  ``--steps`` learner moves in every game, GAE by a reverse ``lax.scan``, then ``--epochs``
  passes of clipped PPO over ``--minibatches`` shuffled minibatches (a ``lax.scan`` each), with
  a hand-written Adam. The whole update is one ``jax.jit``.
* The learner's seat is drawn at random for every game, so one policy learns both colours (the
  observation is relative to the player to act).
* The opponent is a uniformly random legal move, played inside the same compiled step. Carnac
  does not alternate (a tilter places next; after a decline the placer places again), so after
  each learner move the opponent plays under a ``lax.while_loop`` until the learner is to act
  again or the game is over; at most two moves, but the loop reads ``current_player`` and
  assumes nothing.
* Illegal actions are masked out of the logits (``jnp.where(mask, logits, -1e9)``) both when
  acting and in the loss, so the policy never plays one (the engine would end the game with -1).
  The random opponent is ``carnac_env.jax.uniform_legal_action``: one random integer per game,
  and the legal action it falls on found in two levels of blocks, not by a cumsum over all
  actions (with Carnac's hundreds of actions that cost more than the game step on a CPU).
* Finished games are replaced by new ones inside the step (auto-reset), and the reward is the
  game's result (+1/-1/0) for the learner on the move that ends it, the opponent's last replies
  included.
* Every ``--eval-every`` updates the greedy policy (the most likely legal move) plays
  ``--eval-games`` games against random play, half with each colour, inside one jitted
  ``lax.while_loop``, and the win rate is printed.

With mctx installed (the ``search`` extra), ``--search-simulations N`` plays the evaluation games
once more after training, each learner move chosen by mctx's Gumbel MuZero search with the real
rules as the model and the PPO network as prior and value (AlphaZero-style play; the AlphaZero
*training* loop is examples/jax_mctx_search.py).

The same functions train on any Pgx-style two-player environment (``init``, ``step``,
``observation``, ``legal_action_mask``, ``current_player``, ``rewards``, ``terminated``): the
benchmark benchmarks/jax_ppo_speed.py runs this loop on Carnac and on Pgx's connect_four with
the same network and batch. docs/jax.md has the measured result.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import os
import time
from pathlib import Path
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from carnac_env.jax import Carnac, uniform_legal_action

SMOKE = os.environ.get("CARNAC_SMOKE", "") not in ("", "0")
MASKED = -1e9  # the logit of an illegal action: exp underflows to exactly 0, no NaN in the entropy


@dataclasses.dataclass(frozen=True)
class Config:
    """The PPO settings (the defaults train on the small board; ``smoke()`` is the tiny run)."""

    envs: int = 64
    steps: int = 32
    epochs: int = 4
    minibatches: int = 4
    hidden: int = 128
    lr: float = 1e-3
    gamma: float = 0.99
    gae_lambda: float = 0.95
    clip: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5

    @classmethod
    def smoke(cls) -> Config:
        """Tiny sizes for CI: a few seconds after compilation."""
        return cls(envs=8, steps=8, epochs=1, minibatches=2, hidden=16)


# ---------------------------------------------------------------------------- the network


def observation_scale(env: Any) -> np.ndarray:
    """Per-plane factors for the observation: Carnac's supply plane (8) to 0..1, others as they are."""
    scale = np.ones(env.observation_shape[-1], dtype=np.float32)
    board = getattr(env, "board", None)
    if board is not None and env.id == "carnac":
        scale[8] = 1.0 / board.megaliths
    return scale


def init_params(key: jax.Array, features: int, hidden: int, num_actions: int) -> dict:
    """A two-layer MLP trunk with a policy head and a value head (orthogonal init, as in PureJaxRL)."""
    orthogonal = jax.nn.initializers.orthogonal
    keys = jax.random.split(key, 4)

    def dense(key, n_in, n_out, scale):
        return {"w": orthogonal(scale)(key, (n_in, n_out), jnp.float32), "b": jnp.zeros(n_out, jnp.float32)}

    return {
        "trunk1": dense(keys[0], features, hidden, np.sqrt(2)),
        "trunk2": dense(keys[1], hidden, hidden, np.sqrt(2)),
        "policy": dense(keys[2], hidden, num_actions, 0.01),
        "value": dense(keys[3], hidden, 1, 1.0),
    }


def network(params: dict, observation: jax.Array, scale: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Policy logits ``(B, A)`` and value ``(B,)`` for a batch of observations ``(B, ...planes)``."""
    x = (observation.astype(jnp.float32) * scale).reshape(observation.shape[0], -1)
    for layer in ("trunk1", "trunk2"):
        x = jax.nn.relu(x @ params[layer]["w"] + params[layer]["b"])
    logits = x @ params["policy"]["w"] + params["policy"]["b"]
    value = (x @ params["value"]["w"] + params["value"]["b"])[:, 0]
    return logits, value


def masked_logits(logits: jax.Array, mask: jax.Array) -> jax.Array:
    """Illegal actions get :data:`MASKED`, so that softmax gives them exactly zero."""
    return jnp.where(mask, logits, MASKED)


# ---------------------------------------------------------------------------- Adam, by hand


def adam_init(params: dict) -> dict:
    zeros = jax.tree_util.tree_map(jnp.zeros_like, params)
    return {"m": zeros, "v": zeros, "t": jnp.zeros((), jnp.int32)}


def adam_update(params: dict, grads: dict, state: dict, config: Config) -> tuple[dict, dict]:
    """One Adam step (eps 1e-5) after clipping the gradient's global norm to ``max_grad_norm``."""
    norm = jnp.sqrt(sum(jnp.sum(g**2) for g in jax.tree_util.tree_leaves(grads)))
    grads = jax.tree_util.tree_map(lambda g: g * jnp.minimum(1.0, config.max_grad_norm / (norm + 1e-6)), grads)
    t = state["t"] + 1
    m = jax.tree_util.tree_map(lambda m, g: 0.9 * m + 0.1 * g, state["m"], grads)
    v = jax.tree_util.tree_map(lambda v, g: 0.999 * v + 0.001 * g**2, state["v"], grads)
    correction = jnp.sqrt(1 - 0.999**t) / (1 - 0.9**t)
    params = jax.tree_util.tree_map(lambda p, m, v: p - config.lr * correction * m / (jnp.sqrt(v) + 1e-5), params, m, v)
    return params, {"m": m, "v": v, "t": t}


# ---------------------------------------------------------------------------- the games


def make_advance(env: Any):
    """``advance(state, seat, action, learner, fresh, key)`` for one game (``vmap`` it): play
    ``action`` for the learner if ``learner`` is set, then random legal moves for the opponent
    until the learner (``seat``) is to act again; a game that ends is replaced by ``fresh``, with
    the learner's seat drawn again, and played on up to the learner's first move.

    Returns ``(state, seat, reward, done)``: the game to play next (a new one where ``done``),
    its seat, and the learner's result (+1/-1/0) where the game ended. One ``env.step`` inside
    one ``lax.while_loop`` does it all (learner, opponent, and the new game's first moves), so
    that the step is compiled once. ``fresh`` is a start state (``env.init``), the same for
    every game that ends in this call.
    """

    def on(carry) -> jax.Array:
        state, seat, _, done, learner, _ = carry
        over = state.terminated & ~done  # to replace by a new game (once per call)
        return learner | over | (~state.terminated & (state.current_player != seat))

    def body(carry, action, fresh):
        state, seat, reward, done, learner, key = carry
        key, pick, step_key, seat_key = jax.random.split(key, 4)
        move = jnp.where(learner, action, uniform_legal_action(pick, state.legal_action_mask))
        stepped = env.step(state, move, step_key)
        reset = state.terminated  # the game ended on the previous move: start a new one instead
        state = jax.tree_util.tree_map(lambda new, old: jnp.where(reset, new, old), fresh, stepped)
        reward = reward + jnp.where(reset | done, 0.0, stepped.rewards[seat])
        seat = jnp.where(reset, jax.random.randint(seat_key, (), 0, 2, dtype=jnp.int32), seat)
        return state, seat, reward, done | reset, jnp.bool_(False), key

    def advance(state, seat, action, learner, fresh, key):
        carry = (state, seat, jnp.float32(0.0), jnp.bool_(False), jnp.asarray(learner), key)
        state, seat, reward, done, _, _ = jax.lax.while_loop(on, lambda c: body(c, action, fresh), carry)
        return state, seat, reward, done

    return advance


# ---------------------------------------------------------------------------- PPO


class Transition(NamedTuple):
    observation: jax.Array
    mask: jax.Array
    action: jax.Array
    log_prob: jax.Array
    value: jax.Array
    reward: jax.Array
    done: jax.Array


class Runner(NamedTuple):
    """Everything the update carries: network, optimizer, the games in play and the key."""

    params: dict
    opt_state: dict
    state: Any
    seat: jax.Array
    key: jax.Array


def make_ppo(env: Any, config: Config):
    """``init(key) -> Runner``, ``update(runner) -> (runner, metrics)`` (jitted) and
    ``evaluate(params, key, games) -> (wins, draws, losses)`` (jitted) for ``env``."""
    advance = jax.vmap(make_advance(env), in_axes=(0, 0, 0, None, None, 0))
    scale = jnp.asarray(observation_scale(env))
    features = int(np.prod(env.observation_shape))
    batch = config.envs * config.steps
    if batch % config.minibatches:
        raise ValueError(f"envs * steps = {batch} is not a multiple of minibatches = {config.minibatches}")

    @jax.jit
    def init(key: jax.Array) -> Runner:
        net_key, game_key, seat_key, opponent_key, key = jax.random.split(key, 5)
        params = init_params(net_key, features, config.hidden, env.num_actions)
        state = jax.vmap(env.init)(jax.random.split(game_key, config.envs))
        seat = jax.random.randint(seat_key, (config.envs,), 0, 2, dtype=jnp.int32)
        none = jnp.zeros(config.envs, jnp.int32)
        # the opponent's first moves where the learner is White
        state, seat, _, _ = advance(
            state, seat, none, False, env.init(game_key), jax.random.split(opponent_key, config.envs)
        )
        return Runner(params, adam_init(params), state, seat, key)

    def rollout_step(runner: Runner, _):
        key, act_key, step_key, init_key = jax.random.split(runner.key, 4)
        state = runner.state
        logits, value = network(runner.params, state.observation, scale)
        logits = masked_logits(logits, state.legal_action_mask)
        action = jax.random.categorical(act_key, logits).astype(jnp.int32)
        log_prob = jnp.take_along_axis(jax.nn.log_softmax(logits), action[:, None], axis=1)[:, 0]
        next_state, seat, reward, done = advance(
            state, runner.seat, action, True, env.init(init_key), jax.random.split(step_key, config.envs)
        )
        transition = Transition(state.observation, state.legal_action_mask, action, log_prob, value, reward, done)
        return runner._replace(state=next_state, seat=seat, key=key), transition

    def advantages(traj: Transition, last_value: jax.Array) -> tuple[jax.Array, jax.Array]:
        def back(carry, t: Transition):
            gae, next_value = carry
            live = 1.0 - t.done.astype(jnp.float32)
            delta = t.reward + config.gamma * next_value * live - t.value
            gae = delta + config.gamma * config.gae_lambda * live * gae
            return (gae, t.value), gae

        _, adv = jax.lax.scan(back, (jnp.zeros_like(last_value), last_value), traj, reverse=True)
        return adv, adv + traj.value

    def loss_fn(params: dict, t: Transition, adv: jax.Array, target: jax.Array):
        logits, value = network(params, t.observation, scale)
        log_probs = jax.nn.log_softmax(masked_logits(logits, t.mask))
        log_prob = jnp.take_along_axis(log_probs, t.action[:, None], axis=1)[:, 0]
        ratio = jnp.exp(log_prob - t.log_prob)
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        policy_loss = -jnp.minimum(ratio * adv, jnp.clip(ratio, 1 - config.clip, 1 + config.clip) * adv).mean()
        clipped = t.value + jnp.clip(value - t.value, -config.clip, config.clip)
        value_loss = 0.5 * jnp.maximum((value - target) ** 2, (clipped - target) ** 2).mean()
        entropy = -jnp.sum(jnp.exp(log_probs) * log_probs, axis=-1).mean()
        total = policy_loss + config.vf_coef * value_loss - config.ent_coef * entropy
        return total, (policy_loss, value_loss, entropy)

    grad_fn = jax.value_and_grad(loss_fn, has_aux=True)

    def minibatch_step(carry, data):
        params, opt_state = carry
        (_, aux), grads = grad_fn(params, *data)
        params, opt_state = adam_update(params, grads, opt_state, config)
        return (params, opt_state), jnp.stack(aux)

    def epoch(carry, key):
        params, opt_state, data = carry
        order = jax.random.permutation(key, batch)
        shuffled = jax.tree_util.tree_map(
            lambda x: x.reshape((batch, *x.shape[2:]))[order].reshape((config.minibatches, -1, *x.shape[2:])), data
        )
        (params, opt_state), aux = jax.lax.scan(minibatch_step, (params, opt_state), shuffled)
        return (params, opt_state, data), aux

    @jax.jit
    def update(runner: Runner) -> tuple[Runner, dict]:
        runner, traj = jax.lax.scan(rollout_step, runner, None, length=config.steps)
        _, last_value = network(runner.params, runner.state.observation, scale)
        adv, target = advantages(traj, last_value)
        key, epoch_key = jax.random.split(runner.key)
        (params, opt_state, _), aux = jax.lax.scan(
            epoch, (runner.params, runner.opt_state, (traj, adv, target)), jax.random.split(epoch_key, config.epochs)
        )
        aux = aux.reshape(-1, 3).mean(axis=0)
        metrics = {
            "policy_loss": aux[0],
            "value_loss": aux[1],
            "entropy": aux[2],
            "games_finished": traj.done.sum(),
            "mean_result": jnp.sum(traj.reward) / jnp.maximum(traj.done.sum(), 1),
        }
        return Runner(params, opt_state, runner.state, runner.seat, key), metrics

    def greedy(params: dict, state: Any, key: jax.Array) -> jax.Array:
        logits, _ = network(params, state.observation, scale)
        return jnp.argmax(masked_logits(logits, state.legal_action_mask), axis=-1).astype(jnp.int32)

    evaluate = jax.jit(functools.partial(play_against_random, env, greedy), static_argnames="games")
    return init, update, evaluate


def play_against_random(env: Any, choose: Any, params: dict, key: jax.Array, games: int) -> jax.Array:
    """``games`` games of ``choose(params, states, key) -> actions`` against uniformly random legal
    play, seats alternating (game ``i`` has the learner as player ``i % 2``): ``[wins, draws, losses]``.

    One ``lax.while_loop``, one move in every unfinished game per iteration (the learner's where it
    is to act, else the opponent's); finished games stand still until the last one ends.
    """
    init_key, key = jax.random.split(key)
    seat = jnp.arange(games, dtype=jnp.int32) % 2
    state = jax.vmap(env.init)(jax.random.split(init_key, games))
    lanes = jnp.arange(games)

    def playing(carry):
        return ~jnp.all(carry[0].terminated)

    def move(carry):
        state, result, key = carry
        key, pick, choose_key, step_key = jax.random.split(key, 4)
        random = uniform_legal_action(pick, state.legal_action_mask)
        action = jnp.where(state.current_player == seat, choose(params, state, choose_key), random)
        state = jax.vmap(env.step)(state, action, jax.random.split(step_key, games))
        return state, result + state.rewards[lanes, seat], key

    _, result, _ = jax.lax.while_loop(playing, move, (state, jnp.zeros(games), key))
    return jnp.stack([jnp.sum(result > 0), jnp.sum(result == 0), jnp.sum(result < 0)])


def make_search_evaluate(env: Any, simulations: int, considered: int = 16):
    """``evaluate(params, key, games)`` as :func:`make_ppo`'s, but each learner move is chosen by
    mctx's Gumbel MuZero search (AlphaZero with the real rules as the model), with the PPO network
    as prior (the masked logits) and value (its critic: the expected result for the player to act).

    Needs mctx (the ``search`` extra). Carnac's turns repeat, so the discount between a node and its
    child is +1 when the same player acts again, -1 when the other does, 0 at the end (docs/jax.md).
    """
    import mctx

    scale = jnp.asarray(observation_scale(env))
    step = jax.vmap(env.step)

    def recurrent_fn(params, key, action, state):
        mover = state.current_player
        state = step(state, action)
        logits, value = network(params, state.observation, scale)
        reward = state.rewards[jnp.arange(action.shape[0]), mover]
        discount = jnp.where(state.terminated, 0.0, jnp.where(state.current_player == mover, 1.0, -1.0))
        output = mctx.RecurrentFnOutput(
            reward=reward,
            discount=discount,
            prior_logits=masked_logits(logits, state.legal_action_mask),
            value=jnp.where(state.terminated, 0.0, value),
        )
        return output, state

    def searched(params: dict, state: Any, key: jax.Array) -> jax.Array:
        logits, value = network(params, state.observation, scale)
        root = mctx.RootFnOutput(
            prior_logits=masked_logits(logits, state.legal_action_mask), value=value, embedding=state
        )
        output = mctx.gumbel_muzero_policy(
            params,
            key,
            root,
            recurrent_fn,
            num_simulations=simulations,
            invalid_actions=~state.legal_action_mask,
            max_num_considered_actions=considered,
        )
        return output.action.astype(jnp.int32)

    return jax.jit(functools.partial(play_against_random, env, searched), static_argnames="games")


# ---------------------------------------------------------------------------- the script


def train(
    env: Any,
    config: Config,
    *,
    seconds: float | None = None,
    updates: int | None = None,
    eval_every: int = 10,
    eval_games: int = 200,
    seed: int = 0,
    log: Any = print,
) -> dict:
    """Train until ``seconds`` of training (compilation excluded) or ``updates`` updates have
    passed, evaluating against random play; return the curve and the timings."""
    if seconds is None and updates is None:
        raise ValueError("give seconds or updates (or both): when should training stop?")
    init, update, evaluate = make_ppo(env, config)
    key = jax.random.PRNGKey(seed)
    init_key, eval_key = jax.random.split(key)
    start_wall, start_cpu = time.perf_counter(), time.process_time()
    runner = init(init_key)
    jax.block_until_ready(update.lower(runner).compile())  # compile once; timed apart
    jax.block_until_ready(evaluate.lower(runner.params, eval_key, games=eval_games).compile())
    compile_wall, compile_cpu = time.perf_counter() - start_wall, time.process_time() - start_cpu
    log(f"compiled in {compile_wall:.1f}s ({compile_cpu:.1f}s CPU)")

    curve: list[dict] = []
    train_wall = train_cpu = 0.0

    def evaluation(done_updates: int) -> None:
        nonlocal eval_key
        eval_key, sub = jax.random.split(eval_key)
        wins, draws, losses = (int(n) for n in evaluate(runner.params, sub, games=eval_games))
        point = {
            "updates": done_updates,
            "timesteps": done_updates * config.envs * config.steps,
            "train_seconds": round(train_wall, 2),
            "train_cpu_seconds": round(train_cpu, 2),
            "win": wins / eval_games,
            "draw": draws / eval_games,
            "loss": losses / eval_games,
        }
        curve.append(point)
        log(
            f"update {done_updates:>5} ({point['timesteps']:>8,} steps, {train_wall:6.1f}s, "
            f"{train_cpu:6.1f}s CPU): vs random win {point['win']:.1%} draw {point['draw']:.1%}"
        )

    evaluation(0)
    done = 0
    while (updates is None or done < updates) and (seconds is None or train_wall < seconds):
        wall, cpu = time.perf_counter(), time.process_time()
        runner, metrics = jax.block_until_ready(update(runner))
        train_wall += time.perf_counter() - wall
        train_cpu += time.process_time() - cpu
        done += 1
        if done % eval_every == 0:
            evaluation(done)
    if curve[-1]["updates"] != done:
        evaluation(done)
    timesteps = done * config.envs * config.steps
    return {
        "curve": curve,
        "updates": done,
        "timesteps": timesteps,
        "train_seconds": train_wall,
        "train_cpu_seconds": train_cpu,
        "steps_per_second": timesteps / max(train_wall, 1e-9),
        "compile_seconds": compile_wall,
        "last_metrics": {name: float(value) for name, value in metrics.items()} if done else {},
        "params": runner.params,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--board", default="small")
    parser.add_argument("--minutes", type=float, default=3.0, help="training time, compilation excluded")
    parser.add_argument("--updates", type=int, default=None, help="stop after this many updates instead")
    defaults = Config()
    for field in dataclasses.fields(Config):
        parser.add_argument(f"--{field.name.replace('_', '-')}", type=type(getattr(defaults, field.name)))
    parser.add_argument("--eval-every", type=int, default=10, help="updates between evaluations")
    parser.add_argument("--eval-games", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--search-simulations",
        type=int,
        default=0,
        help="after training, also play --eval-games games choosing with mctx's Gumbel search on the network "
        "(this many simulations a move; needs mctx, the search extra)",
    )
    parser.add_argument("--out", type=Path, default=None, help="write the curve and settings as JSON here")
    args = parser.parse_args()

    config = Config.smoke() if SMOKE else Config()
    config = dataclasses.replace(
        config,
        **{f.name: getattr(args, f.name) for f in dataclasses.fields(Config) if getattr(args, f.name) is not None},
    )
    seconds, updates = args.minutes * 60, args.updates
    eval_every, eval_games = args.eval_every, args.eval_games
    if SMOKE:
        seconds, updates, eval_every, eval_games = None, args.updates or 2, 1, 8
    env = Carnac(args.board)
    print(f"jax {jax.__version__} on {jax.default_backend()}; board {args.board}; {config}")
    result = train(
        env, config, seconds=seconds, updates=updates, eval_every=eval_every, eval_games=eval_games, seed=args.seed
    )
    best = max(point["win"] for point in result["curve"])
    print(
        f"{result['updates']} updates, {result['timesteps']:,} steps in {result['train_seconds']:.1f}s "
        f"({result['train_cpu_seconds']:.1f}s CPU; {result['steps_per_second']:,.0f} steps/s): "
        f"final win rate vs random {result['curve'][-1]['win']:.1%} (best {best:.1%})"
    )
    summary = {key: value for key, value in result.items() if key != "params"}
    if args.search_simulations > 0:
        try:
            import mctx  # noqa: F401
        except ImportError:
            raise SystemExit("--search-simulations needs mctx: pip install 'carnac-env[search]'") from None
        evaluate = make_search_evaluate(env, args.search_simulations)
        start = time.perf_counter()
        counts = evaluate(result["params"], jax.random.PRNGKey(args.seed + 1), games=eval_games)
        wins, draws, losses = (int(n) / eval_games for n in counts)
        summary["search"] = {"simulations": args.search_simulations, "win": wins, "draw": draws, "loss": losses}
        print(
            f"with Gumbel MuZero search ({args.search_simulations} simulations a move, the network as prior and "
            f"value), {eval_games} games: vs random win {wins:.1%} draw {draws:.1%} "
            f"({time.perf_counter() - start:.1f}s, compilation included)"
        )
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        summary["settings"] = {"board": args.board, "seed": args.seed, **dataclasses.asdict(config)}
        args.out.write_text(json.dumps(summary, indent=2) + "\n")


if __name__ == "__main__":
    main()
