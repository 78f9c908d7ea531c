"""Self-play simulations per second: carnac_env's compiled Gumbel search against mctx's
``gumbel_muzero_policy`` on ``carnac_env.jax``, with the same network, in one process, on one core.

Both sides play the same thing: ``--games`` games at once from the start of the game, ``--moves``
moves each, every move searched with ``--sims`` simulations of Gumbel MuZero (sequential halving
over 16 considered actions at the root, completed-Q selection below; Gumbel noise at the root),
the leaves of all games evaluated in one network batch per simulation. The network is the same:
the weights of ``--model`` (by default the board's shipped model), evaluated by
:class:`carnac_env.models.PolicyValueNet` on our side and by the same layers written in
``jax.numpy`` on theirs.

* **carnac_env**: :class:`carnac_env.search.Search` over a :class:`~carnac_env.batch.BatchGame`'s
  slots, numpy inference with one BLAS thread; the moves are the search's (as in training).
* **mctx**: ``jax.jit`` of ``mctx.gumbel_muzero_policy`` with ``recurrent_fn`` stepping
  ``carnac_env.jax.Carnac`` (whose discount is -1 where the player to act changes, +1 where the
  same player acts again), XLA held to one thread; compilation is not timed (a warm-up move).

The process is pinned to one CPU (``os.sched_setaffinity``), so both run on the same core, one
after the other, in alternating rounds; the script prints the median simulations/s of each and
their ratio, then the network's share of our time and the rate our network alone allows (a
ceiling on the ratio that no search speed-up can pass). The defaults are the training
settings of ``carnac train`` for the board (carnac_env/cli/train.py): ``--sims`` and ``--games``.

    pip install 'carnac-env[search]'     # jax and mctx
    python benchmarks/selfplay_speed.py --board small --rounds 5
    python benchmarks/selfplay_speed.py --board medium --rounds 5
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

# one XLA thread; set before jax is imported
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")

import numpy as np

from carnac_env.batch import BatchGame
from carnac_env.core.boards import make_board
from carnac_env.core.observation import AWAITING, SUPPLY
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
class TimedNet:
    """``net`` with the seconds spent in its ``forward`` counted (the network's share)."""

    def __init__(self, net: PolicyValueNet) -> None:
        self.net = net
        self.seconds = 0.0

    def forward(self, observations: np.ndarray, supply_scale: float | None = None) -> tuple[np.ndarray, np.ndarray]:
        start = time.perf_counter()
        out = self.net.forward(observations, supply_scale=supply_scale)
        self.seconds += time.perf_counter() - start
        return out


def carnac_round(
    net: PolicyValueNet, board, games: int, moves: int, sims: int, considered: int, seed: int
) -> tuple[float, float]:
    """Self-play moves with the compiled search: simulations per second, and simulations per
    second of the network's time alone (the rate if the search itself cost nothing)."""
    engine = BatchGame(board, num_envs=games, seed=seed)
    engine.reset()
    timed = TimedNet(net)
    search = Search(board, Network(timed), Gumbel(considered, noise=True), trees=games, seed=seed)
    slots = np.arange(games)
    done = 0
    spent = 0.0
    for _ in range(moves):
        start = time.perf_counter()
        search.set_roots(engine.kernel, slots)
        search.run(sims)
        actions = np.asarray([search.gumbel_action(t) for t in range(games)])
        spent += time.perf_counter() - start
        done += sims * games
        engine.step(actions, observe=False)
    return done / spent, done / timed.seconds


# ----------------------------------------------------------------------------- mctx
def jax_forward(net: PolicyValueNet):
    """The network's layers in jax.numpy, with ``net``'s weights."""
    import jax
    import jax.numpy as jnp

    params = {name: jnp.asarray(value) for name, value in net.params.items()}
    megaliths = float(net.megaliths)

    def conv(x, w, b):
        hwio = jnp.transpose(w, (2, 3, 1, 0))
        return jax.lax.conv_general_dilated(x, hwio, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")) + b

    def forward(obs):
        p = params
        x = obs.astype(jnp.float32)
        x = x.at[..., SUPPLY].divide(megaliths)
        h = jax.nn.relu(conv(x, p["stem.weight"], p["stem.bias"]))
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
    forward = jax_forward(net)
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


def mctx_round(player, games: int, moves: int, sims: int, seed: int) -> float:
    import jax

    start, move = player
    state = start(seed)
    key = jax.random.PRNGKey(seed)
    spent = 0.0
    for _ in range(moves):
        key, sub = jax.random.split(key)
        t = time.perf_counter()
        state = jax.block_until_ready(move(state, sub))
        spent += time.perf_counter() - t
    return games * moves * sims / spent


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
        help="our network's 3x3 convolutions (default winograd, as self-play runs them)",
    )
    parser.add_argument("--cpu", type=int, default=None, help="the CPU to pin to (default: the first allowed)")
    args = parser.parse_args()
    board = make_board(args.board)
    settings = training_settings(board.name)
    games = args.games or settings["games"]
    sims = args.sims or settings["sims"]
    considered = settings["considered"]
    net = load(model_path(args.model)) if args.model else model_for(board)[0]
    net = selfplay_network(net) if args.convolution == "winograd" else net
    cpu = args.cpu if args.cpu is not None else min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpu})
    try:
        import jax  # noqa: F401
        import mctx  # noqa: F401
    except ImportError:
        player = None
        print("jax/mctx not installed (pip install 'carnac-env[search]'): measuring carnac_env alone")
    else:
        player = mctx_player(net, board, games, sims, considered)
        mctx_round(player, games, 1, sims, seed=99)  # compile
    carnac_round(net, board, games, 1, sims, considered, seed=99)  # load the compiled code
    print(f"{board.name}: {games} games, {sims} simulations per move, {args.moves} moves a round, CPU {cpu}")
    ours: list[float] = []
    ceilings: list[float] = []
    theirs: list[float] = []
    for r in range(args.rounds):
        rate, ceiling = carnac_round(net, board, games, args.moves, sims, considered, seed=r)
        ours.append(rate)
        ceilings.append(ceiling)
        line = f"round {r + 1}: carnac_env {ours[-1]:,.0f} sims/s"
        if player is not None:
            theirs.append(mctx_round(player, games, args.moves, sims, seed=r))
            line += f", mctx {theirs[-1]:,.0f} sims/s"
        print(line, flush=True)
    mine = statistics.median(ours)
    print(f"\ncarnac_env Search (Gumbel, numpy {net.convolution}): {mine:,.0f} sims/s (median of {args.rounds})")
    if theirs:
        peer = statistics.median(theirs)
        print(f"mctx gumbel_muzero_policy on carnac_env.jax:  {peer:,.0f} sims/s")
        print(f"ratio carnac_env / mctx: {mine / peer:.2f}x")
    ceiling = statistics.median(ceilings)
    print(
        f"\nthe network's share of carnac_env's time: {mine / ceiling:.0%}; its time alone gives "
        f"{ceiling:,.0f} sims/s, the most the search could reach if everything else cost nothing"
        + (f" ({ceiling / peer:.2f}x mctx)" if theirs else "")
    )


if __name__ == "__main__":
    main()
