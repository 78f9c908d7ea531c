"""Random masked games through the AEC API: carnac_env (medium) vs PettingZoo connect_four_v3.

All environments are driven by the same loop (``env.last()``, a uniform choice among the
legal actions from the mask, ``env.step``), through their standard wrappers, alternating
rounds in one process. Prints moves per second for each (median of the rounds) and the ratio.

A third row plays Carnac through PettingZoo's three stock wrapper classes, which reach the raw
env's attributes through ``__getattr__`` and check each action twice; ``carnac_env.env()``
does what they do in one wrapper of its own that reads those attributes directly and checks
once (carnac_env/envs/wrappers.py). The row shows what that is worth; connect_four runs with
the stock wrappers, as shipped.

    python benchmarks/aec_throughput.py [--seconds 2] [--rounds 5]

Needs pettingzoo's classic extra for connect_four (``pip install -e .[bench]``).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def play(env, seconds: float, seed: int) -> float:
    """Play random legal games for about ``seconds``; return moves per second."""
    rng = np.random.default_rng(seed)
    moves = 0
    game = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        env.reset(seed=seed + game)
        game += 1
        for _agent in env.agent_iter():
            obs, _reward, terminated, truncated, _info = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.integers(len(legal))]))
            moves += 1
    return moves / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="seconds per round per env")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--board", default="medium")
    args = parser.parse_args()

    from pettingzoo.classic import connect_four_v3
    from pettingzoo.utils import wrappers

    import carnac_env

    stock = wrappers.TerminateIllegalWrapper(carnac_env.raw_env(board=args.board), illegal_reward=-1)
    stock = wrappers.OrderEnforcingWrapper(wrappers.AssertOutOfBoundsWrapper(stock))
    envs = {
        f"carnac_env ({args.board})": carnac_env.env(board=args.board),
        "carnac, stock wrappers": stock,
        "connect_four_v3": connect_four_v3.env(),
    }
    rates: dict[str, list[float]] = {name: [] for name in envs}
    for round_ in range(args.rounds):
        for name, env in envs.items():
            rates[name].append(play(env, args.seconds, seed=round_))
    medians = {name: statistics.median(r) for name, r in rates.items()}
    for name, median in medians.items():
        spread = ", ".join(f"{r:,.0f}" for r in rates[name])
        print(f"{name:<22} {median:>10,.0f} moves/s (median of {args.rounds}: {spread})")
    carnac, carnac_stock, c4 = medians.values()
    print(f"ratio carnac / connect_four: {carnac / c4:.2f}x (target >= 4.0x)")
    print(f"ratio with stock wrappers:   {carnac_stock / c4:.2f}x")


if __name__ == "__main__":
    main()
