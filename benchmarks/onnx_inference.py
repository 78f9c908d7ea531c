"""Positions per CPU second of the policy-value network: numpy (im2col, Winograd) against
onnxruntime (float32 and int8), one thread, per board and batch size.

Issue 29's ablation of a faster CPU inference path. The ONNX graphs are those of the opt-in
backend :mod:`carnac_env.models.onnx_runtime` (``az:backend=onnx`` and ``onnx-int8``): built
from the model's numpy parameters with the ``onnx`` helper API, equal to
:meth:`PolicyValueNet.forward <carnac_env.models.PolicyValueNet.forward>` layer by layer, one
graph per board, run by onnxruntime on one intra-op and one inter-op thread with every graph
optimisation on; the int8 twin quantises the residual blocks' convolutions (static QDQ,
per-channel int8 weights, uint8 activations calibrated on random games' positions).

The script first checks the float32 graph against numpy's forward (largest logit and value
difference over every board and batch), and the int8 graph's accuracy loss: its largest logit
and value difference, and how often the argmax of its policy over the legal moves is numpy's
on sampled positions. Then each round times every (board, batch, implementation), interleaved
(the order reversed every other round), for at least ``--seconds`` of CPU time
(``time.process_time``: the process's CPU time, so a busy machine's other work does not
count); the table gives the medians over ``--rounds`` rounds, and each rate's ratio to numpy
Winograd. numpy runs inside ``blas_single_thread()``, as the search runs it.

    pip install onnx onnxruntime
    python benchmarks/onnx_inference.py [--boards small,medium,large,le_menec] [--batches 8,64]
        [--rounds 7] [--seconds 0.4] [--model general] [--core N] [--no-int8]

Without onnx and onnxruntime installed it says so and exits (status 0).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from network_speed import rate  # benchmarks/ is the script's folder, first on sys.path


def run_session(sess: Any) -> Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """``f(observations) -> (logits, values)`` of an onnxruntime session (the call
    :class:`~carnac_env.models.onnx_runtime.OnnxNet` makes, without its checks)."""
    from carnac_env.models.onnx_runtime import INPUT, LOGITS, VALUES

    outputs = [LOGITS, VALUES]

    def run(obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        logits, values = sess.run(outputs, {INPUT: obs})
        return logits, values

    return run


def agreement(reference: np.ndarray, other: np.ndarray, legal_sets: list[list[int]]) -> tuple[float, float]:
    """The share of positions where the argmax over the legal moves agrees, and the largest
    difference of the legal logits."""
    same, worst = 0, 0.0
    for row_a, row_b, legal in zip(reference, other, legal_sets):
        a, b = row_a[legal], row_b[legal]
        same += int(np.argmax(a) == np.argmax(b))
        worst = max(worst, float(np.abs(a - b).max()))
    return same / len(legal_sets), worst


def move_times(board: Any, positions: int, rounds: int, sims: int) -> dict[str, float]:
    """CPU milliseconds per move of the ``az`` agent (``sims`` simulations, its default 8 lanes)
    with each inference path, median over ``rounds`` rounds of ``positions`` positions of
    seeded random games on ``board`` (the agents interleaved on every position)."""
    import random

    from carnac_env.agents import make
    from carnac_env.core.game import GameState
    from carnac_env.models import load, model_for, model_path

    rng = random.Random(11)
    states: list[GameState] = []
    while len(states) < positions:
        state = GameState(board)
        while not state.is_over and len(states) < positions:
            if rng.random() < 0.25 and len(state.legal_actions()) > 1:
                states.append(state.copy())
            state.apply(rng.choice(state.legal_actions()))
    _, name = model_for(board)
    exact = load(model_path(name))  # the definition's order: the agents' own network computes with Winograd
    agents = {
        "numpy im2col": make(f"az:sims={sims}"),
        "numpy winograd": make(f"az:sims={sims}"),
        "onnx fp32": make(f"az:sims={sims}:backend=onnx"),
        "onnx int8": make(f"az:sims={sims}:backend=onnx-int8"),
    }
    agents["numpy im2col"]._net = exact  # the agent with the im2col network (no option says it)
    for agent in agents.values():
        agent.choose(states[0])  # compile, build the graphs
    totals: dict[str, list[float]] = {key: [] for key in agents}
    for round_ in range(rounds):
        spent = dict.fromkeys(agents, 0.0)
        for index, state in enumerate(states):
            order = list(agents) if (round_ + index) % 2 == 0 else list(agents)[::-1]
            for key in order:
                start = time.process_time()
                agents[key].choose(state)
                spent[key] += time.process_time() - start
        for key in agents:
            totals[key].append(1000 * spent[key] / len(states))
    return {key: statistics.median(values) for key, values in totals.items()}


def selfplay_rates(board: Any, moves: int, rounds: int, games: int = 64, sims: int = 32) -> dict[str, float]:
    """Self-play simulations per CPU second with each inference path (numpy Winograd, as
    self-play runs it, and onnxruntime float32 and int8): ``games`` games from the start, each
    move searched with ``sims`` simulations of Gumbel (16 considered actions, the training
    settings), all leaves in one network batch per simulation; the median over ``rounds``
    rounds of ``moves`` moves, the paths interleaved."""
    from carnac_env.batch import BatchGame
    from carnac_env.models import load, model_for, model_path
    from carnac_env.models.onnx_runtime import OnnxNet
    from carnac_env.search import Gumbel, Network, Search

    _, name = model_for(board)
    fast = load(model_path(name))
    fast.convolution = "winograd"
    nets: dict[str, Any] = {"numpy winograd": fast, "onnx fp32": OnnxNet(fast), "onnx int8": OnnxNet(fast, "int8")}

    def one(net: Any, seed: int) -> float:
        engine = BatchGame(board, num_envs=games, seed=seed)
        engine.reset()
        search = Search(board, Network(net), Gumbel(16, noise=True), trees=games, seed=seed)
        slots = np.arange(games)
        start = time.process_time()
        for _ in range(moves):
            search.set_roots(engine.kernel, slots)
            search.run(sims)
            engine.step(np.asarray([search.gumbel_action(t) for t in range(games)]), observe=False)
        return moves * games * sims / (time.process_time() - start)

    for net in nets.values():
        one(net, 0)  # compile, build the graphs
    rates: dict[str, list[float]] = {key: [] for key in nets}
    for round_ in range(rounds):
        for key in list(nets) if round_ % 2 == 0 else list(nets)[::-1]:
            rates[key].append(one(nets[key], 1 + round_))
    return {key: statistics.median(values) for key, values in rates.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--boards", default="small,medium,large,le_menec")
    parser.add_argument("--batches", default="8,64")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--seconds", type=float, default=0.4, help="CPU seconds of calls per measurement per round")
    parser.add_argument("--model", default="general", help="a shipped model name or a model file")
    parser.add_argument("--samples", type=int, default=512, help="positions per board for the accuracy checks")
    parser.add_argument("--core", type=int, default=None, help="pin the process to this CPU")
    parser.add_argument("--no-int8", action="store_true", help="skip the int8 graph")
    parser.add_argument("--moves", type=int, default=0, help="also time az's moves on this many positions per board")
    parser.add_argument("--sims", type=int, default=200, help="az's simulations per move for --moves")
    parser.add_argument("--selfplay", type=int, default=0, help="also time this many self-play moves per board")
    args = parser.parse_args()
    try:
        import onnx  # noqa: F401
        import onnxruntime
    except ImportError as error:
        print(f"onnx and onnxruntime are needed for this benchmark ({error}): pip install onnx onnxruntime")
        return
    if args.core is not None:
        os.sched_setaffinity(0, {args.core})

    from carnac_env.core.boards import make_board
    from carnac_env.models import blas_single_thread, load, model_path
    from carnac_env.models.onnx_runtime import CALIBRATION_POSITIONS, onnx_graph, quantized, random_positions, session

    exact = load(model_path(args.model))
    fast = load(model_path(args.model))
    fast.convolution = "winograd"
    boards = [make_board(name) for name in args.boards.split(",")]
    batches = [int(b) for b in args.batches.split(",")]
    print(
        f"model {args.model} ({exact.channels} channels, {exact.blocks} blocks, {exact.hidden} hidden), "
        f"onnxruntime {onnxruntime.__version__}, numpy {np.__version__}\n"
    )

    cases: dict[tuple[str, int], dict[str, Callable[[], object]]] = {}
    print("| board | graph | max abs logit diff | max abs value diff | legal argmax agreement | max legal logit diff |")
    print("|---|---|---:|---:|---:|---:|")
    for index, board in enumerate(boards):
        # the checked and timed positions: other games than the int8 calibration's (seed 0)
        pool, legal_sets = random_positions(board, max(args.samples, max(batches)), seed=1 + index)
        graph = onnx_graph(exact, board)
        graphs = {"onnx fp32": run_session(session(graph))}
        if not args.no_int8:
            calibration, _ = random_positions(board, CALIBRATION_POSITIONS, seed=0)
            graphs["onnx int8"] = run_session(session(quantized(graph, calibration)))
        with blas_single_thread():
            ref_logits, _ = exact.forward(pool, board=board)
            for name, fn in graphs.items():
                worst_logit = worst_value = 0.0
                for batch in sorted({1, *batches, len(pool)}):  # every batch size against numpy's own
                    part = pool[:batch]
                    logits, values = fn(part)
                    want_logits, want_values = exact.forward(part, board=board)
                    worst_logit = max(worst_logit, float(np.abs(logits - want_logits).max()))
                    worst_value = max(worst_value, float(np.abs(values - want_values).max()))
                logits, values = fn(pool)
                agree, legal_diff = agreement(ref_logits, logits, legal_sets)
                print(
                    f"| {board.name} | {name} | {worst_logit:.1e} | {worst_value:.1e} | "
                    f"{agree:.1%} | {legal_diff:.1e} |"
                )
        for batch in batches:
            obs = np.ascontiguousarray(pool[:batch])
            runners: dict[str, Callable[[], object]] = {
                "numpy im2col": lambda obs=obs, board=board: exact.forward(obs, board=board),
                "numpy winograd": lambda obs=obs, board=board: fast.forward(obs, board=board),
            }
            for name, fn in graphs.items():
                runners[name] = lambda obs=obs, fn=fn: fn(obs)
            for fn in runners.values():
                fn()
            cases[board.name, batch] = runners

    rates: dict[tuple[str, int, str], list[float]] = {}
    with blas_single_thread():  # as the search holds it
        for round_ in range(args.rounds):
            for (board_name, batch), runners in cases.items():
                names = list(runners) if round_ % 2 == 0 else list(runners)[::-1]
                for name in names:
                    rates.setdefault((board_name, batch, name), []).append(
                        rate(runners[name], batch, args.seconds, time.process_time)
                    )

    names = list(next(iter(cases.values())))
    print(
        f"\npositions per CPU second, one thread, median of {args.rounds} rounds of {args.seconds:g} CPU s "
        "(in brackets: the ratio to numpy winograd)\n"
    )
    print("| board | batch | " + " | ".join(names) + " |")
    print("|---|---:|" + "---:|" * len(names))
    for board_name, batch in cases:
        median = {n: statistics.median(rates[board_name, batch, n]) for n in names}
        base = median["numpy winograd"]
        cells = [f"{median[n]:,.0f} ({median[n] / base:.2f})" for n in names]
        print(f"| {board_name} | {batch} | " + " | ".join(cells) + " |")
    sys.stdout.flush()
    if args.moves:
        print(
            f"\naz:sims={args.sims} (lanes=8, the board's default model), CPU ms per move, median of {args.rounds} "
            f"rounds of {args.moves} positions (in brackets: the ratio of moves per CPU second to numpy winograd)\n"
        )
        print("| board | numpy im2col | numpy winograd | onnx fp32 | onnx int8 |")
        print("|---|---:|---:|---:|---:|")
        for board in boards:
            ms = move_times(board, args.moves, args.rounds, args.sims)
            cells = [f"{ms[key]:.1f} ({ms['numpy winograd'] / ms[key]:.2f})" for key in ms]
            print(f"| {board.name} | " + " | ".join(cells) + " |", flush=True)
    if args.selfplay:
        print(
            f"\nself-play (64 games, 32 simulations of Gumbel, the board's default model), simulations per CPU "
            f"second, median of {args.rounds} rounds of {args.selfplay} moves (in brackets: the ratio to numpy "
            "winograd)\n"
        )
        print("| board | numpy winograd | onnx fp32 | onnx int8 |")
        print("|---|---:|---:|---:|")
        for board in boards:
            sp = selfplay_rates(board, args.selfplay, args.rounds)
            cells = [f"{sp[key]:,.0f} ({sp[key] / sp['numpy winograd']:.2f})" for key in sp]
            print(f"| {board.name} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
