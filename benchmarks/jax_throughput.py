"""Steps per second of the JAX engine (``carnac_env.jax``) against Pgx's connect_four and othello.

Every JAX engine runs the same loop, compiled once per engine and batch size with
``jax.jit`` around a ``lax.scan`` of ``--steps`` iterations of

    action = uniform legal action (one random integer per game: carnac_env.jax.uniform_legal_action)
    state  = vmap(env.step)(state, action, keys)
    state  = where(state.terminated, vmap(env.init)(keys), state)     # auto-reset

so a timed call at batch ``B`` is ``B * steps`` steps. The auto-reset keeps the finished
step's ``terminated`` and ``rewards``, as ``pgx.experimental.auto_reset`` does. Each engine
and batch size is timed ``--repeats`` times after one warm-up call (which also compiles);
the table shows the median and the ratios to Pgx's othello and connect_four at the same
batch size, measured in the same run. The batched engine (``carnac_env.batch.BatchGame``,
compiled with numba) plays the same random legal games with its own auto-reset and sampler,
on the CPU, outside JAX (at most ``--batch-steps`` steps per timed call, to keep the large
batches short).

    python benchmarks/jax_throughput.py                                   # GPU: the full run
    python benchmarks/jax_throughput.py --batch-sizes 1024,16384 --steps 20 --repeats 3   # a CPU

Needs jax (the ``jax`` extra) and pgx for the Pgx rows (``pip install pgx``; without it
only the Carnac rows run). On a GPU machine without network access bring the wheels:
``jax[cuda12]`` (jax, jaxlib, the jax-cuda12 plugin and pjrt, and the nvidia-* CUDA
wheels they pull in), ``pgx`` and its small pure-Python dependencies (``svgwrite``,
``typing-extensions``; ``pip download pgx --no-deps`` plus those two) and this project's
wheel, then ``pip install --no-index --find-links wheels/ ...``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np

#: The parts of the timed loop; ``--profile`` times the loop with some left out.
LOOP = ("step", "reset")


def jax_runner(env, batch: int, steps: int, seed: int = 0, parts: tuple[str, ...] = LOOP) -> Callable[[], float]:
    """A function that plays ``batch`` random games for ``steps`` steps each and returns the seconds.

    ``parts`` says what each iteration does besides drawing the action: ``"step"`` plays it,
    ``"reset"`` starts finished games again, ``"observe"`` reads every game's observation
    (summed into the carry, so that XLA cannot drop it), as a policy would.
    """
    import jax
    import jax.numpy as jnp

    from carnac_env.jax import uniform_legal_action

    init = jax.vmap(env.init)
    step = jax.vmap(env.step)

    def one_step(carry, _):
        state, key, seen = carry
        key, act_key, step_key, init_key = jax.random.split(key, 4)
        action = uniform_legal_action(act_key, state.legal_action_mask)
        if "step" not in parts:  # the sampler alone: the action still feeds the carry
            return (state.replace(_step_count=state._step_count + action), key, seen), None
        state = step(state, action, jax.random.split(step_key, batch))
        if "observe" in parts:
            seen = seen + jnp.sum(state.observation, dtype=jnp.int32)
        if "reset" in parts:
            fresh = init(jax.random.split(init_key, batch))
            fresh = fresh.replace(terminated=state.terminated, truncated=state.truncated, rewards=state.rewards)
            done = state.terminated | state.truncated
            state = jax.tree_util.tree_map(
                lambda new, old: jnp.where(done.reshape(done.shape + (1,) * (old.ndim - 1)), new, old), fresh, state
            )
        return (state, key, seen), None

    @jax.jit
    def run(state, key, seen):
        return jax.lax.scan(one_step, (state, key, seen), None, length=steps)[0]

    key = jax.random.PRNGKey(seed)
    carry = (jax.jit(init)(jax.random.split(key, batch)), key, jnp.int32(0))
    carry = jax.block_until_ready(run(*carry))  # compile and warm up (games spread over all phases)

    def timed() -> float:
        nonlocal carry
        start = time.perf_counter()
        carry = jax.block_until_ready(run(*carry))
        return time.perf_counter() - start

    return timed


def profile(envs: dict, batches: list[int], steps: int, repeats: int) -> None:
    """Where a step of the timed loop goes, per engine: the loop timed whole and with parts left
    out (interleaved, medians), in nanoseconds per game-step.

    sampler = the loop without the step; step = without the reset, less the sampler;
    reset = the whole loop less the loop without it; observation = the loop that also reads
    every observation, less the whole loop (zero-ish for Pgx, whose step builds it anyway).
    The sampler alone sees the same mask on every iteration, so XLA may hoist some of its work
    out of the loop: its figure is a lower bound, and the step's includes that part.
    """
    variants = {"sampler": ("sample",), "no reset": ("step",), "loop": LOOP, "loop + observe": (*LOOP, "observe")}
    print(f"| {'engine':<16} | {'batch':>7} | sampler | step | reset | loop | reading the observation |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for batch in batches:
        runners = {
            (name, v): jax_runner(env, batch, steps, parts=parts)
            for name, env in envs.items()
            for v, parts in variants.items()
        }
        times: dict[tuple, list[float]] = {k: [] for k in runners}
        for _ in range(repeats):
            for k, runner in runners.items():
                times[k].append(runner())
        for name in envs:
            ns = {v: statistics.median(times[name, v]) / (batch * steps) * 1e9 for v in variants}
            print(
                f"| {name:<16} | {batch:>7,} | {ns['sampler']:.0f} | {ns['no reset'] - ns['sampler']:.0f} | "
                f"{ns['loop'] - ns['no reset']:.0f} | {ns['loop']:.0f} | {ns['loop + observe'] - ns['loop']:.0f} |"
            )


def batch_runners(board: str, batch: int, steps: int, seed: int = 0) -> dict[str, Callable[[], float]]:
    """The same loop for the batched ``BatchGame`` (carnac_env.batch, compiled with numba)."""
    from carnac_env.batch import BatchGame

    games = BatchGame(board, num_envs=batch, seed=seed)
    games.reset()
    for _ in range(min(steps, 10)):
        games.step(games.sample_actions())

    def timed() -> float:
        start = time.perf_counter()
        for _ in range(steps):
            games.step(games.sample_actions())
        return time.perf_counter() - start

    return {f"BatchGame ({board})": timed}


def label_propagation_check(board: str, batch: int, repeats: int) -> None:
    """Why the engine keeps dolmen groups up to date instead of finding them at the end.

    Plays ``batch`` random games to the end, then times one scoring pass by max-label
    propagation (``lax.while_loop`` until no label changes, under ``vmap``, so it runs until
    the slowest game has converged) against one full step of the engine, and prints the
    rounds needed and the ratio.
    """
    import jax
    import jax.numpy as jnp

    from carnac_env.jax import Carnac, uniform_legal_action

    env = Carnac(board)
    rows, cols = env.board.rows, env.board.cols
    init, step = jax.jit(jax.vmap(env.init)), jax.jit(jax.vmap(env.step))
    pick = jax.jit(uniform_legal_action)
    key = jax.random.PRNGKey(0)
    state = init(jax.random.split(key, batch))
    middle = None
    while not bool(state.terminated.all()):
        key, sub = jax.random.split(key)
        state = step(state, pick(sub, state.legal_action_mask))
        middle = state if middle is None and int(state._step_count.max()) == 10 else middle

    def shift(x, dr, dc):
        return jnp.pad(x, 1)[1 + dr : 1 + dr + rows, 1 + dc : 1 + dc + cols]

    def propagate(cells):
        grid = cells.reshape(rows, cols).astype(jnp.int32)
        labels = jnp.where(grid > 0, jnp.arange(1, rows * cols + 1).reshape(rows, cols), 0)

        def round_(carry):
            labels, _, rounds = carry
            new = labels
            for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1)):
                new = jnp.maximum(new, jnp.where(shift(grid, dr, dc) == grid, shift(labels, dr, dc), 0))
            new = jnp.where(grid > 0, new, 0)
            return new, jnp.any(new != labels), rounds + 1

        labels, _, rounds = jax.lax.while_loop(lambda carry: carry[1], round_, (labels, True, 0))
        return labels, rounds

    propagate = jax.jit(jax.vmap(propagate))
    _, rounds = jax.block_until_ready(propagate(state._x.cells))
    actions = pick(key, middle.legal_action_mask)
    jax.block_until_ready(step(middle, actions))
    times = {"propagation": [], "step": []}
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(propagate(state._x.cells))
        times["propagation"].append(time.perf_counter() - start)
        start = time.perf_counter()
        jax.block_until_ready(step(middle, actions))
        times["step"].append(time.perf_counter() - start)
    once, one_step = statistics.median(times["propagation"]), statistics.median(times["step"])
    print(
        f"{board}, batch {batch}: label propagation on finished boards needs {int(rounds.max())} rounds "
        f"(mean {float(rounds.mean()):.1f}); one pass {once * 1e3:.2f} ms = {once / one_step:.1f}x "
        f"one full step of the engine ({one_step * 1e3:.2f} ms)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch-sizes", default="1024,16384,131072", help="comma-separated batch sizes")
    parser.add_argument("--steps", type=int, default=200, help="steps per game per timed call (the scan length)")
    parser.add_argument("--repeats", type=int, default=5, help="timed calls per engine and batch size")
    parser.add_argument(
        "--batch-steps", type=int, default=20, help="at most this many steps per timed call for the BatchGame rows"
    )
    parser.add_argument("--board", default="medium", help="the Carnac board")
    parser.add_argument(
        "--engines",
        default="carnac,connect_four,othello,batch",
        help="comma-separated subset of carnac, connect_four, othello, batch (the numba BatchGame)",
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="instead: where a step of the loop goes (sampler, step, reset, reading the observation)",
    )
    parser.add_argument(
        "--observe",
        action="store_true",
        help="the timed loop also reads every game's observation each step, as a policy would",
    )
    parser.add_argument(
        "--label-propagation",
        action="store_true",
        help="instead: time one label-propagation scoring pass against one engine step (docs/jax.md)",
    )
    args = parser.parse_args()
    if args.label_propagation:
        for batch in [int(b) for b in args.batch_sizes.split(",")]:
            label_propagation_check(args.board, batch, args.repeats)
        return
    batches = [int(b) for b in args.batch_sizes.split(",")]
    engines = args.engines.split(",")

    import jax

    from carnac_env.jax import Carnac

    envs = {}
    if "carnac" in engines:
        envs[f"carnac ({args.board})"] = Carnac(args.board)
    try:
        import pgx

        for name in ("connect_four", "othello"):
            if name in engines:
                envs[f"pgx {name}"] = pgx.make(name)
    except ImportError:
        print("pgx is not installed: no Pgx rows (pip install pgx)")
    device = f"{jax.devices()[0].device_kind} ({jax.default_backend()})"
    print(f"jax {jax.__version__} on {device}; {args.steps} steps per game per timed call, median of {args.repeats}")
    if args.profile:
        profile(envs, batches, args.steps, args.repeats)
        return
    if args.observe:
        print("every step also reads every game's observation")

    results: dict[tuple[str, int], float] = {}
    for batch in batches:
        parts = (*LOOP, "observe") if args.observe else LOOP
        runners = {name: jax_runner(env, batch, args.steps, parts=parts) for name, env in envs.items()}
        if "batch" in engines:
            runners.update(batch_runners(args.board, batch, min(args.steps, args.batch_steps)))
        times: dict[str, list[float]] = {name: [] for name in runners}
        for _ in range(args.repeats):  # interleaved: the machine's load drifts
            for name, runner in runners.items():
                times[name].append(runner())
        for name in runners:
            results[name, batch] = batch * args.steps / statistics.median(times[name])

    names = list(dict.fromkeys(name for name, _ in results))
    header = f"| {'engine':<28} | {'batch':>7} | {'steps/s':>14} | {'vs othello':>10} | {'vs connect_four':>15} |"
    print(header)
    print("|" + "|".join("-" * (len(cell)) for cell in header.split("|")[1:-1]) + "|")
    for batch in batches:
        for name in names:
            if (name, batch) not in results:
                continue
            rate = results[name, batch]
            ratios = []
            for peer in ("pgx othello", "pgx connect_four"):
                ratios.append(f"{rate / results[peer, batch]:.2f}x" if (peer, batch) in results else "-")
            print(f"| {name:<28} | {batch:>7,} | {rate:>14,.0f} | {ratios[0]:>10} | {ratios[1]:>15} |")


if __name__ == "__main__":
    np.set_printoptions(linewidth=120)
    main()
