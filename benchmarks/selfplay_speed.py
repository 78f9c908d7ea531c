"""Self-play simulations per second: carnac_env's compiled Gumbel search against mctx's
``gumbel_muzero_policy`` on ``carnac_env.jax``, with the same network, in one process, on one core.

Both sides play the same thing: ``--games`` games at once from the start of the game, ``--moves``
moves each, every move searched with ``--sims`` simulations of Gumbel MuZero (sequential halving
over 16 considered actions at the root, completed-Q selection below; Gumbel noise at the root),
the leaves of all games evaluated in one network batch per simulation. The network is the same:
the weights of ``--model`` (by default the board's shipped model: the general, rules-conditioned
one), evaluated by :class:`carnac_env.models.PolicyValueNet` on our side and by the same layers
written in ``jax.numpy`` on theirs (:func:`jax_forward`), with the same input: the supply plane
divided by the board's megaliths and, for a network that reads the rules, the stem's response to
the board's rules planes, a constant map of the board built once (``tests/models/test_jax_forward.py``
checks that both forwards agree).

* **carnac_env**: :class:`carnac_env.search.Search` over a :class:`~carnac_env.batch.BatchGame`'s
  slots; the moves are the search's (as in training). The network is ``--backend``'s: ``numpy``
  (Winograd convolutions on one BLAS thread, what self-play runs by default), ``onnx``
  (onnxruntime's float32 graph, ``az:backend=onnx``) or ``onnx-int8`` (its int8 graph, training's
  ``--selfplay-backend onnx-int8``); the onnx ones need the ``onnx`` extra.
* **mctx**: ``jax.jit`` of ``mctx.gumbel_muzero_policy`` with ``recurrent_fn`` stepping
  ``carnac_env.jax.Carnac`` (whose discount is -1 where the player to act changes, +1 where the
  same player acts again), XLA held to one thread; compilation is not timed (a warm-up move).

The process is pinned to one CPU (``os.sched_setaffinity``), so both run on the same core, one
after the other, in alternating rounds; the script prints the median simulations of each per
second of wall clock and per CPU second of the process (``time.process_time``: what another
process taking turns on the core does not change; the steadier ratio on a shared machine), their
ratios, the searched positions (moves) per CPU second, the network's share of our CPU time and
the rate our network alone allows (a ceiling on the ratio that no search speed-up can pass).
``--backend`` may name several backends (``numpy,onnx,onnx-int8``): each is measured in every
round, their positions per CPU second are compared with the first's, and then their searched
moves are compared with the first's in the same positions with the same noise (``--agree-moves``
moves of every game from the start). The defaults are the training settings of
``carnac train`` for the board (carnac_env/cli/train.py): ``--sims`` and ``--games`` (the general
model's own run, ``--board general``, plays its games 16 to a board: ``--games 16``).

    pip install 'carnac-env[search]'     # jax and mctx
    python benchmarks/selfplay_speed.py --board small --rounds 5
    python benchmarks/selfplay_speed.py --board medium --rounds 5
    python benchmarks/selfplay_speed.py --board small --model small --rounds 5     # a specialist
    python benchmarks/selfplay_speed.py --board medium --backend numpy,onnx,onnx-int8 --no-mctx
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from typing import NamedTuple

# one XLA thread; set before jax is imported
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")

import numpy as np

from carnac_env.batch import BatchGame
from carnac_env.core.boards import make_board
from carnac_env.core.observation import AWAITING, NUM_PLANES, SUPPLY
from carnac_env.models import PolicyValueNet, load, model_for, model_path
from carnac_env.search import Gumbel, Network, Search
from carnac_env.train.selfplay import selfplay_network


def training_settings(board: str) -> dict[str, int]:
    """The self-play settings ``carnac train`` uses on ``board`` (sims, games, considered)."""
    from carnac_env.cli.train import BOARD_DEFAULTS
    from carnac_env.train.config import Config

    base = Config()
    values = {"sims": base.sims, "games": base.games, "considered": base.considered}
    values.update({k: v for k, v in BOARD_DEFAULTS.get(board, {}).items() if k in values})
    return values


# ----------------------------------------------------------------------------- carnac_env
#: Our side's network backends: numpy (Winograd convolutions, as self-play runs them by default),
#: onnxruntime's float32 graph (``az:backend=onnx``) and its int8 graph (``--selfplay-backend
#: onnx-int8``), both from carnac_env.models.onnx_runtime (the ``onnx`` extra).
BACKENDS = ("numpy", "onnx", "onnx-int8")


def our_network(net: PolicyValueNet, backend: str, convolution: str = "winograd"):
    """``net`` as our self-play evaluates it with ``backend`` (one of :data:`BACKENDS`); numpy
    with ``convolution`` (``"winograd"``, self-play's, or ``"im2col"``, the agents')."""
    if backend == "numpy":
        return selfplay_network(net) if convolution == "winograd" else net
    if backend == "onnx-int8":
        return selfplay_network(net, "onnx-int8")  # what training's --selfplay-backend onnx-int8 runs
    if backend == "onnx":
        from carnac_env.models.onnx_runtime import OnnxNet

        return OnnxNet(net, "float32")
    raise ValueError(f"backend {backend!r}; expected one of {', '.join(BACKENDS)}")


class TimedNet:
    """``net`` with the CPU seconds spent in its ``forward`` counted (the network's share). It
    reads the rules where ``net`` does, so the search gives it the board as it gives ``net``."""

    def __init__(self, net) -> None:
        self.net = net
        self.reads_rules = bool(getattr(net, "reads_rules", False))
        self.seconds = 0.0

    def forward(self, observations: np.ndarray, supply_scale: float | None = None, board=None):
        start = time.process_time()
        if board is None:
            out = self.net.forward(observations, supply_scale=supply_scale)
        else:
            out = self.net.forward(observations, supply_scale=supply_scale, board=board)
        self.seconds += time.process_time() - start
        return out


class Round(NamedTuple):
    """One round of self-play: simulations per second (wall clock) and per CPU second of the
    process (what another process sharing the core does not change), searched positions (moves)
    per CPU second, and for ours the simulations per CPU second of the network's time alone."""

    sims_per_second: float
    sims_per_cpu_second: float
    positions_per_cpu_second: float
    network_ceiling: float = float("nan")


def carnac_round(net, board, games: int, moves: int, sims: int, considered: int, seed: int) -> Round:
    """``moves`` self-play moves of ``games`` games from the start, each searched with the
    compiled Gumbel search (``sims`` simulations, ``considered`` root actions) and ``net``
    evaluating every simulation's leaves in one batch, as training's self-play does."""
    engine = BatchGame(board, num_envs=games, seed=seed)
    engine.reset()
    timed = TimedNet(net)
    search = Search(board, Network(timed), Gumbel(considered, noise=True), trees=games, seed=seed)
    slots = np.arange(games)
    spent = cpu = 0.0
    for _ in range(moves):
        start, start_cpu = time.perf_counter(), time.process_time()
        search.set_roots(engine.kernel, slots)
        search.run(sims)
        actions = np.asarray([search.gumbel_action(t) for t in range(games)])
        spent += time.perf_counter() - start
        cpu += time.process_time() - start_cpu
        engine.step(actions, observe=False)
    done = sims * games * moves
    return Round(done / spent, done / cpu, games * moves / cpu, done / timed.seconds)


def agreement(nets: dict, board, games: int, moves: int, sims: int, considered: int, seed: int) -> dict[str, int]:
    """How many of the searched moves of each of ``nets`` (by backend) equal the first's, in the
    same positions: ``moves`` moves of ``games`` games from the start, every backend's search
    seeded alike (the same Gumbel noise), the games played on with the first backend's moves."""
    engine = BatchGame(board, num_envs=games, seed=seed)
    engine.reset()
    searches = {
        name: Search(board, Network(net), Gumbel(considered, noise=True), trees=games, seed=seed)
        for name, net in nets.items()
    }
    slots = np.arange(games)
    equal = dict.fromkeys(nets, 0)
    reference = None
    for _ in range(moves):
        chosen = {}
        for name, search in searches.items():
            search.set_roots(engine.kernel, slots)
            search.run(sims)
            chosen[name] = np.asarray([search.gumbel_action(t) for t in range(games)])
        reference = chosen[next(iter(nets))]
        for name, actions in chosen.items():
            equal[name] += int((actions == reference).sum())
        engine.step(reference, observe=False)
    return equal


# ----------------------------------------------------------------------------- mctx
def jax_forward(net: PolicyValueNet, board):
    """The network's forward on ``board`` in jax.numpy, with ``net``'s weights: the input our side's
    search gives :meth:`PolicyValueNet.forward` (the supply plane divided by ``board``'s megaliths;
    for a network that reads the rules, the stem's response to ``board``'s rules planes, built once
    here as a constant map of the board, as ``PolicyValueNet`` builds it), so ``(N, rows, cols, 9)``
    observations in, ``(logits, values)`` out, equal to ``net.forward(obs, board.megaliths, board)``
    up to float32 rounding."""
    import jax
    import jax.numpy as jnp

    params = {name: jnp.asarray(value) for name, value in net.params.items()}
    megaliths = float(board.megaliths)
    # the stem reads the 9 observation planes; the rules planes are constant over the board, so
    # their part of the stem is a fixed (rows, cols, channels) map, the one our side adds
    stem = params["stem.weight"][:, :NUM_PLANES]
    rules_map = 0.0
    if net.reads_rules:
        rules_map = jnp.asarray(net.rules_map(board).reshape(board.rows, board.cols, net.channels))

    def conv(x, w, b):
        hwio = jnp.transpose(w, (2, 3, 1, 0))
        return jax.lax.conv_general_dilated(x, hwio, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")) + b

    def forward(obs):
        p = params
        x = jnp.asarray(obs, jnp.float32)
        x = x.at[..., SUPPLY].divide(megaliths)
        h = jax.nn.relu(conv(x, stem, p["stem.bias"]) + rules_map)
        for i in range(net.blocks):
            y = jax.nn.relu(conv(h, p[f"blocks.{i}.conv1.weight"], p[f"blocks.{i}.conv1.bias"]))
            h = jax.nn.relu(h + conv(y, p[f"blocks.{i}.conv2.weight"], p[f"blocks.{i}.conv2.bias"]))
        n, rows, cols, channels = h.shape
        place = h.reshape(n * rows * cols, channels) @ p["place.weight"][:, :, 0, 0].T + p["place.bias"]
        flat = h.reshape(n, rows * cols, channels)
        awaiting = x[..., AWAITING].reshape(n, rows * cols, 1)
        pooled = jnp.concatenate([flat.mean(1), flat.max(1), (flat * awaiting).sum(1)], axis=1)
        respond = pooled @ p["respond.weight"].T + p["respond.bias"]
        hidden = jax.nn.relu(pooled @ p["value1.weight"].T + p["value1.bias"])
        value = jnp.tanh(hidden @ p["value2.weight"].T + p["value2.bias"])[:, 0]
        return jnp.concatenate([place.reshape(n, rows * cols * 4), respond], axis=1), value

    return forward


def mctx_player(net: PolicyValueNet, board, games: int, sims: int, considered: int):
    """A jitted ``(state, key) -> (state after the searched move)`` for a batch of games."""
    import jax
    import jax.numpy as jnp
    import mctx

    from carnac_env.jax import Carnac

    env = Carnac(board)
    forward = jax_forward(net, board)
    step = jax.vmap(env.step)

    def recurrent_fn(params, key, action, state):
        del params, key
        mover = state.current_player
        state = step(state, action)
        logits, value = forward(state.observation)
        logits = jnp.where(state.legal_action_mask, logits, jnp.finfo(logits.dtype).min)
        reward = jnp.take_along_axis(state.rewards, mover[:, None], axis=1)[:, 0]
        discount = jnp.where(state.terminated, 0.0, jnp.where(state.current_player == mover, 1.0, -1.0))
        value = jnp.where(state.terminated, 0.0, value)
        return mctx.RecurrentFnOutput(reward=reward, discount=discount, prior_logits=logits, value=value), state

    @jax.jit
    def move(state, key):
        logits, value = forward(state.observation)
        root = mctx.RootFnOutput(prior_logits=logits, value=value, embedding=state)
        out = mctx.gumbel_muzero_policy(
            None,
            key,
            root,
            recurrent_fn,
            num_simulations=sims,
            invalid_actions=~state.legal_action_mask,
            max_num_considered_actions=considered,
        )
        return step(state, out.action)

    def start(seed: int):
        return jax.vmap(env.init)(jax.random.split(jax.random.PRNGKey(seed), games))

    return start, move


def mctx_round(player, games: int, moves: int, sims: int, seed: int) -> Round:
    """``moves`` moves of ``games`` games from the start by mctx (``player`` from :func:`mctx_player`)."""
    import jax

    start, move = player
    state = start(seed)
    key = jax.random.PRNGKey(seed)
    spent = cpu = 0.0
    for _ in range(moves):
        key, sub = jax.random.split(key)
        t, t_cpu = time.perf_counter(), time.process_time()
        state = jax.block_until_ready(move(state, sub))
        spent += time.perf_counter() - t
        cpu += time.process_time() - t_cpu
    done = games * moves * sims
    return Round(done / spent, done / cpu, games * moves / cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--board", default="small")
    parser.add_argument("--model", default="", help="model file or shipped name (default: the board's)")
    parser.add_argument("--games", type=int, default=None, help="games at once (default: the training setting)")
    parser.add_argument("--sims", type=int, default=None, help="simulations per move (default: the training setting)")
    parser.add_argument("--moves", type=int, default=8, help="moves per game and round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--convolution",
        choices=["winograd", "im2col"],
        default="winograd",
        help="the numpy backend's 3x3 convolutions (default winograd, as self-play runs them)",
    )
    parser.add_argument(
        "--backend",
        default="numpy",
        help=f"our side's network, or several separated by commas, measured in alternating rounds "
        f"(the first is the reference): {', '.join(BACKENDS)} (onnx ones need the onnx extra)",
    )
    parser.add_argument(
        "--agree-moves",
        type=int,
        default=24,
        help="with several backends: moves from the start over which their searched moves are compared",
    )
    parser.add_argument("--no-mctx", action="store_true", help="measure our side only")
    parser.add_argument("--cpu", type=int, default=None, help="the CPU to pin to (default: the first allowed)")
    args = parser.parse_args()
    backends = [name.strip() for name in args.backend.split(",") if name.strip()]
    unknown = [name for name in backends if name not in BACKENDS]
    if unknown or not backends:
        parser.error(f"--backend {args.backend!r}: expected one or more of {', '.join(BACKENDS)}")
    board = make_board(args.board)
    settings = training_settings(board.name)
    games = args.games or settings["games"]
    sims = args.sims or settings["sims"]
    considered = settings["considered"]
    if args.model:
        net, model = load(model_path(args.model)), args.model
    else:
        net, model = model_for(board)
    nets = {name: our_network(net, name, args.convolution) for name in backends}
    cpu = args.cpu if args.cpu is not None else min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpu})
    player = None
    if not args.no_mctx:
        try:
            import jax  # noqa: F401
            import mctx  # noqa: F401
        except ImportError:
            print("jax/mctx not installed (pip install 'carnac-env[search]'): measuring carnac_env alone")
        else:
            player = mctx_player(net, board, games, sims, considered)
            mctx_round(player, games, 1, sims, seed=99)  # compile
    for ours in nets.values():
        carnac_round(ours, board, games, 1, sims, considered, seed=99)  # load the compiled code, build graphs
    print(
        f"{board.name}: model {model}"
        f"{' (reads the rules)' if net.reads_rules else ''}, {games} games, {sims} simulations per move, "
        f"{args.moves} moves a round, CPU {cpu}"
    )
    rounds: dict[str, list[Round]] = {name: [] for name in nets}
    theirs: list[Round] = []
    for r in range(args.rounds):
        line = f"round {r + 1}:"
        for name, ours in nets.items():
            done = carnac_round(ours, board, games, args.moves, sims, considered, seed=r)
            rounds[name].append(done)
            line += f" carnac_env/{name} {done.sims_per_second:,.0f} ({done.sims_per_cpu_second:,.0f}),"
        if player is not None:
            theirs.append(mctx_round(player, games, args.moves, sims, seed=r))
            line += f" mctx {theirs[-1].sims_per_second:,.0f} ({theirs[-1].sims_per_cpu_second:,.0f})"
        print(line.rstrip(",") + " sims/s (per CPU s)", flush=True)

    def median(measured: list[Round], field: str) -> float:
        return statistics.median(getattr(x, field) for x in measured)

    def versus(value: float, peer: float | None) -> str:
        return f"{value / peer:.2f}x" if peer else "-"

    peer_wall = median(theirs, "sims_per_second") if theirs else None
    peer_cpu = median(theirs, "sims_per_cpu_second") if theirs else None
    print(f"\nmedians of {args.rounds} rounds; ratios to mctx and to {backends[0]} of the medians")
    header = (
        f"{'':<20} {'sims/s':>8} {'/ mctx':>7} {'sims/CPU s':>11} {'/ mctx':>7} {'positions/CPU s':>16} "
        f"{'/ ' + backends[0]:>10} {'network share':>14} {'network alone':>14} {'/ mctx':>7}"
    )
    print(header)
    if theirs:
        positions = median(theirs, "positions_per_cpu_second")
        print(f"{'mctx':<20} {peer_wall:>8,.0f} {'':>7} {peer_cpu:>11,.0f} {'':>7} {positions:>16,.1f}")
    reference = median(rounds[backends[0]], "positions_per_cpu_second")
    for name, measured in rounds.items():
        wall, cpu = median(measured, "sims_per_second"), median(measured, "sims_per_cpu_second")
        positions, ceiling = median(measured, "positions_per_cpu_second"), median(measured, "network_ceiling")
        label = f"carnac_env/{name}" + (
            " (winograd)" if name == "numpy" and nets[name].convolution == "winograd" else ""
        )
        print(
            f"{label:<20} {wall:>8,.0f} {versus(wall, peer_wall):>7} {cpu:>11,.0f} {versus(cpu, peer_cpu):>7} "
            f"{positions:>16,.1f} {positions / reference:>9.2f}x {cpu / ceiling:>14.0%} {ceiling:>14,.0f} "
            f"{versus(ceiling, peer_cpu):>7}"
        )
    print(
        "(network share: of our CPU time; network alone: simulations per CPU second of the network's time "
        "alone, the most the search could reach if everything else cost nothing)"
    )
    if len(nets) > 1 and args.agree_moves > 0:
        equal = agreement(nets, board, games, args.agree_moves, sims, considered, seed=7)
        total = games * args.agree_moves
        print(f"\nsearched moves equal to {backends[0]}'s, same positions and noise ({total} moves from the start):")
        for name in backends[1:]:
            print(f"  {name}: {equal[name]} of {total} ({equal[name] / total:.1%})")


if __name__ == "__main__":
    main()
