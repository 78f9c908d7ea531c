"""Steps per second of examples/jax_ppo.py's PPO loop on Carnac beside the same loop on Pgx's othello and connect_four.

Every game runs the very same jitted update of examples/jax_ppo.py (``make_ppo``): ``--envs``
games under ``vmap``, a ``lax.scan`` of ``--steps`` learner moves with a uniformly random legal
opponent inside the step and auto-reset, GAE, then ``--epochs`` x ``--minibatches`` PPO steps
with Adam; the same MLP (``--hidden`` units, two layers; only the input and output widths follow
the game) and the same batch. Each game is compiled once, then the updates are timed
``--repeats`` times, interleaved (the machine's load drifts), and the table prints the median
learner steps per second and the ratio to each peer of ``--peers`` (Pgx games, default
``connect_four,othello``: othello is Carnac medium's size, 64 squares against 70, though 65
actions against 285; connect four is the small, cheap reference).

How steps are counted, and what the comparison leaves out: a timed call is one update,
``envs * steps`` *learner* steps for every game, and only those are counted. The opponent's
replies are played inside the same step and come on top. On connect four and othello there is
exactly one reply per learner move (an othello pass is a move: Pgx makes it an action). On
Carnac there are zero to two, because turns do not alternate: a tilter places next, so a learner
who tilts plays again at once, and a learner's placement may be answered by a tilt and a
placement. On average that is one reply, as for the peers (measured with random play: 0.99 on
small and 1.00 on medium). But the replies are played in a ``lax.while_loop`` under ``vmap``, which
runs until the *slowest* game of the batch is back to the learner, and with 64 games some game
needed two replies in every batch measured (320 of 320 learner steps, both boards). So Carnac's
batch pays for two replies per learner step where the peers' batches pay for one. Carnac's
game is also larger, and so is its network: the MLP's inputs and logits follow the board
(medium 630 and 285, othello 128 and 65, connect four 84 and 7), about 3.2x othello's
multiply-adds per sample on medium, 2.0x on small.

    pip install -e ".[jax]" pgx
    python benchmarks/jax_ppo_speed.py                                  # small and medium, 64 x 32
    python benchmarks/jax_ppo_speed.py --boards small --envs 256 --repeats 7
    python benchmarks/jax_ppo_speed.py --peers othello                  # one peer
    python benchmarks/jax_ppo_speed.py --profile                        # and where an update's time goes

``--profile`` also times each game's update with no training epochs (the rollout of ``--steps``
learner moves, the opponent's replies and GAE) and prints it beside the whole update: the
difference is the training (``--epochs`` x ``--minibatches`` gradient steps of the MLP).

With mctx installed (the ``search`` extra) ``--mctx`` adds the Gumbel MuZero self-play loop of
examples/jax_mctx_search.py on each Carnac board: searched moves per second at ``--envs`` games
and ``--simulations`` simulations (Carnac only: that example is written for Carnac's planes).
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def ppo_runner(env, config):
    """A function that runs one jitted PPO update of ``env`` and returns the seconds it took."""
    import jax

    sys.path.insert(0, str(EXAMPLES))
    try:
        import jax_ppo
    finally:
        sys.path.pop(0)
    init, update, _ = jax_ppo.make_ppo(env, config)
    runner = init(jax.random.PRNGKey(0))
    runner, _ = jax.block_until_ready(update(runner))  # compile and warm up

    def timed() -> float:
        nonlocal runner
        start = time.perf_counter()
        runner, _ = jax.block_until_ready(update(runner))
        return time.perf_counter() - start

    return timed


def mctx_runner(board: str, games: int, simulations: int):
    """One batch of Gumbel MuZero self-play games of examples/jax_mctx_search.py; returns (seconds, moves)."""
    import jax

    sys.path.insert(0, str(EXAMPLES))
    try:
        import jax_mctx_search
    finally:
        sys.path.pop(0)
    from carnac_env.jax import Carnac

    env = Carnac(board)
    params = jax_mctx_search.init_params(env, jax.random.PRNGKey(0))
    self_play = jax_mctx_search.make_self_play(env, games, simulations)
    keys = iter(jax.random.split(jax.random.PRNGKey(1), 1000))
    jax.block_until_ready(self_play(params, next(keys)))  # compile

    def timed() -> tuple[float, int]:
        start = time.perf_counter()
        records, _ = jax.block_until_ready(self_play(params, next(keys)))
        return time.perf_counter() - start, int(records["live"].sum())

    return timed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--boards", default="small,medium", help="comma-separated Carnac boards")
    parser.add_argument(
        "--peers", default="connect_four,othello", help="comma-separated Pgx games to run the same loop on (none: '')"
    )
    parser.add_argument("--envs", type=int, default=64, help="games side by side (the batch)")
    parser.add_argument("--steps", type=int, default=32, help="learner steps per game per update")
    parser.add_argument("--hidden", type=int, default=128, help="units in each of the MLP's two layers")
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--minibatches", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=5, help="timed updates per game")
    parser.add_argument(
        "--profile",
        action="store_true",
        help="also time each update without its training epochs and print the rollout's and the training's share",
    )
    parser.add_argument("--mctx", action="store_true", help="also time examples/jax_mctx_search.py's self-play")
    parser.add_argument("--simulations", type=int, default=16, help="search simulations per move (--mctx)")
    args = parser.parse_args()

    import jax

    sys.path.insert(0, str(EXAMPLES))
    try:
        import jax_ppo
    finally:
        sys.path.pop(0)
    from carnac_env.jax import Carnac

    config = jax_ppo.Config(
        envs=args.envs, steps=args.steps, hidden=args.hidden, epochs=args.epochs, minibatches=args.minibatches
    )
    envs = {f"carnac ({board})": Carnac(board) for board in args.boards.split(",")}
    peers = [name for name in args.peers.split(",") if name]
    if peers:
        try:
            import pgx
        except ImportError:
            print(f"pgx is not installed: no {', '.join(peers)} rows (pip install pgx)")
            peers = []
    for name in peers:
        if name not in pgx.available_envs():
            parser.error(f"--peers: unknown Pgx game {name!r}; expected some of {', '.join(pgx.available_envs())}")
        envs[f"pgx {name}"] = pgx.make(name)
    device = f"{jax.devices()[0].device_kind} ({jax.default_backend()})"
    print(
        f"jax {jax.__version__} on {device}; PPO update = {args.envs} games x {args.steps} steps, "
        f"{args.epochs} epochs x {args.minibatches} minibatches, MLP {args.hidden}x{args.hidden}; "
        f"median of {args.repeats}"
    )
    start = time.perf_counter()
    runners = {name: ppo_runner(env, config) for name, env in envs.items()}
    if args.profile:  # the same update without its training epochs: the rollout and GAE alone
        rollout = dataclasses.replace(config, epochs=0)
        runners.update({f"{name} rollout": ppo_runner(env, rollout) for name, env in envs.items()})
    print(f"compiled in {time.perf_counter() - start:.1f}s")
    times: dict[str, list[float]] = {name: [] for name in runners}
    for _ in range(args.repeats):
        for name, runner in runners.items():
            times[name].append(runner())
    rates = {name: args.envs * args.steps / statistics.median(times[name]) for name in envs}
    columns = [f"vs {name}" for name in peers]
    header = f"| {'PPO loop':<24} | {'batch':>9} | {'steps/s':>10} |" + "".join(f" {c:>15} |" for c in columns)
    print(header)
    print("|" + "|".join("-" * len(cell) for cell in header.split("|")[1:-1]) + "|")
    for name, rate in rates.items():
        ratios = "".join(f" {rate / rates[f'pgx {peer}']:>14.2f}x |" for peer in peers)
        print(f"| {name:<24} | {args.envs:>4} x {args.steps:<2} | {rate:>10,.0f} |{ratios}")
    if args.profile:
        print()
        header = f"| {'PPO loop':<24} | {'update ms':>9} | {'rollout + GAE ms':>16} | {'training ms':>11} |"
        print(header)
        print("|" + "|".join("-" * len(cell) for cell in header.split("|")[1:-1]) + "|")
        for name in envs:
            update, rollout = (1e3 * statistics.median(times[key]) for key in (name, f"{name} rollout"))
            print(f"| {name:<24} | {update:>9.1f} | {rollout:>16.1f} | {update - rollout:>11.1f} |")

    if args.mctx:
        try:
            import mctx  # noqa: F401
        except ImportError:
            print("mctx is not installed: no search rows (pip install 'carnac-env[search]')")
            return
        for board in args.boards.split(","):
            timed = mctx_runner(board, args.envs, args.simulations)
            samples = [timed() for _ in range(max(1, args.repeats // 2))]
            seconds = statistics.median(s for s, _ in samples)
            moves = statistics.median(m for _, m in samples)
            print(
                f"Gumbel MuZero self-play (examples/jax_mctx_search.py), {board}, {args.envs} games, "
                f"{args.simulations} simulations: {moves / seconds:,.0f} searched moves/s"
            )


if __name__ == "__main__":
    main()
