"""Evaluations per second of the numpy policy-value network (``PolicyValueNet.forward``)
against the same network in JAX/XLA, per board and batch size, on one CPU thread.

The model is a shipped one (``--model``, default ``small``: 32 channels, 3 blocks, 64 hidden;
it is fully convolutional, so it plays every board). The observations are real: positions
from uniformly random games on each board, seen by the player to act. Ours runs as the tree
search runs it, inside ``blas_single_thread()`` (held around the timed calls), in both
convolutions: ``im2col`` (the default, equal to the definition) and ``winograd`` (opt-in).
The JAX twin is the same network written with ``jax.lax.conv_general_dilated`` (NHWC maps,
HWIO kernels), the weights taken from the same model, one ``jax.jit`` per shape (compiled
before timing), run with one XLA thread (``XLA_FLAGS`` is set below, before jax is imported);
its timed call includes the transfer in and out, as ours includes its conversion of the int8
planes.

Each round times every (board, batch) of each for at least ``--seconds`` of calls,
interleaved (the order reversed every other round); the table shows the medians over
``--rounds`` rounds, the ratios to XLA and the largest difference between ours (im2col) and
XLA's outputs (logits and values).

    python benchmarks/network_speed.py [--boards small,medium,large] [--batches 1,8,64,256]
        [--rounds 5] [--seconds 0.3] [--model small] [--core 1] [--no-jax]

``--core N`` pins the process to CPU ``N`` (every implementation then shares that core).
Without jax installed (the ``bench`` extra) it measures ours only; with an older carnac_env
without the ``convolution`` option, im2col only.
"""

from __future__ import annotations

import os

# One XLA thread: must be set before jax is imported (anywhere in the process).
os.environ["XLA_FLAGS"] = (
    os.environ.get("XLA_FLAGS", "") + " --xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
).strip()
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import argparse
import random
import statistics
import time
from collections.abc import Callable

import numpy as np


def real_observations(board: str, count: int, seed: int = 0) -> np.ndarray:
    """``count`` int8 observations from uniformly random games on ``board``, each seen by the
    player to act (positions from every stage of the game, pending tilts included)."""
    from carnac_env.core.game import GameState
    from carnac_env.core.observation import observation_planes

    rng = random.Random(seed)
    out = []
    while len(out) < count:
        state = GameState(board)
        while not state.is_over and len(out) < count:
            out.append(observation_planes(state, state.to_act))
            legal = state.legal_actions()
            state.apply(legal[int(rng.random() * len(legal))])
    return np.stack(out)


def jax_network(net) -> Callable[[np.ndarray, float], tuple[np.ndarray, np.ndarray]]:
    """The network of ``net`` (a PolicyValueNet) in JAX: ``f(observations, supply_scale)``."""
    import jax
    import jax.numpy as jnp

    from carnac_env.core.observation import AWAITING, SUPPLY

    p = {k: jnp.asarray(v) for k, v in net.params.items()}
    kernels = {k: jnp.asarray(v.transpose(2, 3, 1, 0)) for k, v in net.params.items() if v.ndim == 4}

    def conv(x, name):
        y = jax.lax.conv_general_dilated(
            x, kernels[f"{name}.weight"], (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")
        )
        return y + p[f"{name}.bias"]

    @jax.jit
    def forward(obs, scale):
        x = obs.astype(jnp.float32)
        x = x.at[..., SUPPLY].divide(scale)
        n, rows, cols, _ = x.shape
        h = jax.nn.relu(conv(x, "stem"))
        for i in range(net.blocks):
            y = jax.nn.relu(conv(h, f"blocks.{i}.conv1"))
            h = jax.nn.relu(h + conv(y, f"blocks.{i}.conv2"))
        place = conv(h, "place").reshape(n, rows * cols * 4)
        flat = h.reshape(n, rows * cols, -1)
        awaiting = x[..., AWAITING].reshape(n, rows * cols, 1)
        pooled = jnp.concatenate([flat.mean(axis=1), flat.max(axis=1), (flat * awaiting).sum(axis=1)], axis=1)
        respond = pooled @ p["respond.weight"].T + p["respond.bias"]
        hidden = jax.nn.relu(pooled @ p["value1.weight"].T + p["value1.bias"])
        values = jnp.tanh(hidden @ p["value2.weight"].T + p["value2.bias"])[:, 0]
        return jnp.concatenate([place, respond], axis=1), values

    def run(obs: np.ndarray, scale: float) -> tuple[np.ndarray, np.ndarray]:
        logits, values = forward(obs, np.float32(scale))
        return np.asarray(logits), np.asarray(values)

    return run


def rate(fn: Callable[[], object], batch: int, seconds: float, clock: Callable[[], float] = time.perf_counter) -> float:
    """Evaluations per second of ``fn`` (one call evaluates ``batch``), over at least ``seconds``
    of ``clock`` (wall time by default; ``time.process_time`` for CPU time)."""
    calls = 0
    start = clock()
    while True:
        fn()
        calls += 1
        elapsed = clock() - start
        if elapsed >= seconds and calls >= 3:
            return calls * batch / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--boards", default="small,medium,large")
    parser.add_argument("--batches", default="1,8,64,256")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=0.3, help="seconds of calls per measurement per round")
    parser.add_argument("--model", default="small", help="a shipped model name or a model file")
    parser.add_argument("--core", type=int, default=None, help="pin the process to this CPU")
    parser.add_argument("--no-jax", action="store_true", help="measure ours only")
    args = parser.parse_args()
    if args.core is not None:
        os.sched_setaffinity(0, {args.core})

    from carnac_env.core.boards import make_board
    from carnac_env.models import blas_single_thread, load, model_path

    net = load(model_path(args.model))
    fast = None
    if hasattr(net, "convolution"):
        fast = load(model_path(args.model))
        fast.convolution = "winograd"
    boards = [make_board(b) for b in args.boards.split(",")]
    batches = [int(b) for b in args.batches.split(",")]
    xla = None
    if not args.no_jax:
        try:
            xla = jax_network(net)
        except ImportError:
            print("jax is not installed (pip install -e .[bench]): measuring carnac_env only\n")

    cases = {}
    for board in boards:
        pool = real_observations(board.name, max(batches), seed=len(cases))
        for batch in batches:
            obs = np.ascontiguousarray(pool[:batch])
            scale = float(board.megaliths)
            runners = {"im2col": lambda obs=obs, scale=scale: net.forward(obs, scale)}
            if fast is not None:
                runners["winograd"] = lambda obs=obs, scale=scale: fast.forward(obs, scale)
            diff = float("nan")
            if xla is not None:
                runners["xla"] = lambda obs=obs, scale=scale: xla(obs, scale)
                (la, va), (lb, vb) = net.forward(obs, scale), xla(obs, scale)  # also compiles
                diff = max(float(np.abs(la - lb).max()), float(np.abs(va - vb).max()))
            for fn in runners.values():
                fn()
            cases[board.name, batch] = (runners, diff)

    rates: dict[tuple[str, int, str], list[float]] = {}
    with blas_single_thread():  # as the search holds it
        for round_ in range(args.rounds):
            for (board_name, batch), (runners, _) in cases.items():
                names = list(runners) if round_ % 2 == 0 else list(runners)[::-1]
                for name in names:
                    rates.setdefault((board_name, batch, name), []).append(rate(runners[name], batch, args.seconds))

    print(
        f"PolicyValueNet.forward, model {args.model} ({net.channels} channels, {net.blocks} blocks, "
        f"{net.hidden} hidden): evaluations/s, one thread, median of {args.rounds} rounds of {args.seconds:g} s\n"
    )
    names = list(next(iter(cases.values()))[0])
    header = "| board | batch | " + " | ".join({"xla": "JAX/XLA"}.get(n, f"ours {n}") for n in names)
    rule = "|---|---:|" + "---:|" * len(names)
    if xla is not None:
        header += "".join(f" | {n} / XLA" for n in names if n != "xla") + " | max abs diff im2col-XLA"
        rule += "---:|" * len(names)
    print(header + " |")
    print(rule)
    for (board_name, batch), (_, diff) in cases.items():
        median = {n: statistics.median(rates[board_name, batch, n]) for n in names}
        line = f"| {board_name} | {batch} | " + " | ".join(f"{median[n]:,.0f}" for n in names)
        if xla is not None:
            line += "".join(f" | {median[n] / median['xla']:.2f}" for n in names if n != "xla") + f" | {diff:.1e}"
        print(line + " |")


if __name__ == "__main__":
    main()
