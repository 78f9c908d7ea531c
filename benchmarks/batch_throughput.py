"""Steps per second of the batched engine (``carnac_env.batch.BatchGame``) against Pgx's connect_four.

Both engines play random legal games with auto-reset, choosing the actions inside the loop:

* carnac_env: ``games.step(games.sample_actions())`` (the compiled numba engine, as on a
  plain ``pip install carnac-env``; uniform over the legal actions), every call returning
  fresh observation and mask arrays;
* Pgx ``connect_four``: ``jax.jit(jax.vmap(step))`` where ``step`` draws a uniform legal
  action from the mask with ``jax.random.categorical``, steps, and re-initialises finished
  games (``pgx.experimental.auto_reset``); the PRNG key is carried inside the jitted call.

A step is one action in one game, so a batched call at batch ``n`` counts ``n`` steps. The
batch sizes and the two engines are interleaved round by round (this machine is shared and
noisy); the table shows medians over the rounds and the ratio carnac / Pgx. A second table
shows how the cost per step grows with the board (batch 1024); a line compares the Gymnasium
vector env (learner steps, each with the opponent's replies) with the raw engine.

    python benchmarks/batch_throughput.py [--seconds 1] [--rounds 5] [--board medium]

Needs jax and pgx (the ``bench`` extra) for the Pgx column; without them only carnac runs.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from carnac_env.batch import BatchGame
from carnac_env.core.boards import BOARDS

BATCHES = (1, 64, 1024, 4096)


def carnac_runner(board: str, batch: int, seed: int = 0) -> Callable[[float], float]:
    """A function that plays ``batch`` random games for about ``seconds`` and returns steps/s."""
    games = BatchGame(board, num_envs=batch, seed=seed)
    games.reset()
    for _ in range(10):  # warm up: let the games spread over all phases
        games.step(games.sample_actions())

    def run(seconds: float) -> float:
        calls = 0
        start = time.perf_counter()
        while True:
            games.step(games.sample_actions())
            calls += 1
            elapsed = time.perf_counter() - start
            if elapsed >= seconds:
                return calls * batch / elapsed

    return run


def pgx_runner(batch: int, seed: int = 0) -> Callable[[float], float]:
    """The same for Pgx's connect_four under ``jax.jit(jax.vmap(...))``."""
    import jax
    import jax.numpy as jnp
    import pgx
    from pgx.experimental import auto_reset

    env = pgx.make("connect_four")
    step_fn = auto_reset(env.step, env.init)

    def one(state, key):
        key, choose, reset = jax.random.split(key, 3)
        logits = jnp.where(state.legal_action_mask, 0.0, -jnp.inf)
        action = jax.random.categorical(choose, logits)
        return step_fn(state, action, reset), key

    step = jax.jit(jax.vmap(one))
    keys = jax.random.split(jax.random.PRNGKey(seed), batch)
    state = jax.jit(jax.vmap(env.init))(keys)
    carry = [state, keys]
    for _ in range(10):  # compile and warm up
        carry[:] = step(*carry)
    jax.block_until_ready(carry)

    def run(seconds: float) -> float:
        calls = 0
        start = time.perf_counter()
        while True:
            carry[:] = step(*carry)
            calls += 1
            if calls % 16 == 0 or batch >= 1024:
                jax.block_until_ready(carry)
                elapsed = time.perf_counter() - start
                if elapsed >= seconds:
                    return calls * batch / elapsed

    return run


def vector_runner(board: str, batch: int, seed: int = 0) -> Callable[[float], float]:
    """Learner steps per second of ``CarnacVectorEnv`` (random opponent, learner seat random)."""
    from carnac_env.envs.vector import CarnacVectorEnv

    envs = CarnacVectorEnv(batch, board=board, seat="random")
    envs.reset(seed=seed)

    def run(seconds: float) -> float:
        calls = 0
        start = time.perf_counter()
        while True:
            envs.step(envs.games.sample_actions())  # legal learner actions from the engine's sampler
            calls += 1
            elapsed = time.perf_counter() - start
            if elapsed >= seconds:
                return calls * batch / elapsed

    return run


def measure(runners: dict[str, Callable[[float], float]], seconds: float, rounds: int) -> dict[str, list[float]]:
    """Run every runner once per round, interleaved; return all the rates."""
    rates: dict[str, list[float]] = {name: [] for name in runners}
    for _ in range(rounds):
        for name, run in runners.items():
            rates[name].append(run(seconds))
    return rates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="seconds per round per measurement")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--board", default="medium", help="carnac board for the Pgx comparison")
    parser.add_argument("--batches", type=int, nargs="+", default=list(BATCHES))
    parser.add_argument("--no-boards", action="store_true", help="skip the board-size table")
    args = parser.parse_args()

    try:
        import jax  # noqa: F401
        import pgx  # noqa: F401

        have_pgx = True
    except ImportError:
        have_pgx = False
        print("jax/pgx not installed (pip install -e .[bench]): measuring carnac_env only\n")
    backends = ["numba"]  # the one batched implementation (the numpy path was removed)

    runners: dict[str, Callable[[float], float]] = {}
    for batch in args.batches:
        for backend in backends:
            runners[f"{backend} {batch}"] = carnac_runner(args.board, batch)
        if have_pgx:
            runners[f"pgx {batch}"] = pgx_runner(batch)
    rates = measure(runners, args.seconds, args.rounds)
    median = {name: statistics.median(r) for name, r in rates.items()}

    print(f"Random legal games, steps/s (median of {args.rounds} interleaved rounds of {args.seconds:g} s)\n")
    header = "| batch | " + " | ".join(f"carnac {args.board} ({b})" for b in backends)
    rule = "|---:|" + "---:|" * len(backends)
    if have_pgx:
        header += " | Pgx connect_four | " + " | ".join(f"ratio {b} / Pgx" for b in backends)
        rule += "---:|" * (1 + len(backends))
    print(header + " |")
    print(rule)
    for batch in args.batches:
        cells = [f"{median[f'{b} {batch}']:,.0f}" for b in backends]
        if have_pgx:
            pgx_rate = median[f"pgx {batch}"]
            cells.append(f"{pgx_rate:,.0f}")
            cells += [f"{median[f'{b} {batch}'] / pgx_rate:.2f}x" for b in backends]
            if batch == 1024:
                cells[-1] += " (target >= 3.0x)"
        print(f"| {batch} | " + " | ".join(cells) + " |")

    vector_runners = {"raw": carnac_runner(args.board, 1024), "vector": vector_runner(args.board, 1024)}
    vector_rates = {k: statistics.median(v) for k, v in measure(vector_runners, args.seconds, args.rounds).items()}
    print(f"\nCarnacVectorEnv ({backends[0]}, {args.board}, batch 1024, random opponent, seat random): ")
    print(
        f"{vector_rates['vector']:,.0f} learner steps/s against {vector_rates['raw']:,.0f} raw engine steps/s "
        f"({vector_rates['vector'] / vector_rates['raw']:.2f}x)"
    )

    if args.no_boards:
        return
    order = sorted(BOARDS, key=lambda name: BOARDS[name].squares)
    board_runners = {f"{b} {name}": carnac_runner(name, 1024) for name in order for b in backends}
    board_rates = measure(board_runners, args.seconds, args.rounds)
    board_median = {name: statistics.median(r) for name, r in board_rates.items()}
    print(f"\nCost per step by board, batch 1024 (median of {args.rounds} interleaved rounds), us per step per game")
    print("(in brackets: relative to petit_menec)\n")
    print("| board | squares | actions | " + " | ".join(f"{b} steps/s | {b} us/step" for b in backends) + " |")
    print("|---|---:|---:|" + "---:|---:|" * len(backends))
    for name in order:
        b = BOARDS[name]
        cells = []
        for backend in backends:
            rate = board_median[f"{backend} {name}"]
            base = board_median[f"{backend} {order[0]}"]
            cells += [f"{rate:,.0f}", f"{1e6 / rate:.2f} ({base / rate:.1f}x)"]
        print(f"| {name} | {b.squares} | {b.num_actions} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
