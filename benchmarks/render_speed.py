"""Frames per second of the rgb_array picture, against peers measured in the same run.

Each row plays random legal games through the AEC API and draws the position after every
step; only the drawing is timed. Rows:

* carnac rgb_array: ``ImageRenderer(board).draw(game)`` (what ``render_mode="rgb_array"``
  returns), one renderer kept for the run, as an environment keeps it;
* carnac ansi: the text renderer (``render_mode="ansi"``), the cheap reference;
* connect_four rgb_array: PettingZoo's connect_four_v3 with ``render_mode="rgb_array"``
  (pygame drawing), the peer of the same kind.

Rounds alternate between the rows; the script prints the median frames per second of each
and the ratios (machines here are noisy: compare ratios, not absolute numbers).

    python benchmarks/render_speed.py [--board medium] [--seconds 1] [--rounds 5] [--cell 48]

Needs the render extra, and pettingzoo's classic extra for connect_four
(``pip install -e .[bench]``); the connect_four row is left out without it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np


def frames_per_second(env: Any, draw: Callable[[], Any], seconds: float, seed: int) -> float:
    """Play random legal games for about ``seconds`` of drawing; return drawn frames per second."""
    rng = np.random.default_rng(seed)
    drawn = 0
    spent = 0.0
    game = 0
    while spent < seconds:
        env.reset(seed=seed + game)
        game += 1
        for _agent in env.agent_iter():
            obs, _reward, terminated, truncated, _info = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.integers(len(legal))]))
            start = time.perf_counter()
            draw()
            spent += time.perf_counter() - start
            drawn += 1
    return drawn / spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--board", default="medium")
    parser.add_argument("--seconds", type=float, default=1.0, help="seconds of drawing per round per row")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cell", type=int, default=48, help="square size of the carnac picture, pixels")
    args = parser.parse_args()

    import carnac_env
    from carnac_env.render.ansi import render_text
    from carnac_env.render.image import ImageRenderer

    carnac = carnac_env.env(board=args.board)
    renderer = ImageRenderer(carnac.unwrapped.board, args.cell)
    game = lambda: carnac.unwrapped.game  # noqa: E731
    shape = renderer.draw(game()).shape
    rows: dict[str, tuple[Any, Callable[[], Any]]] = {
        f"carnac {args.board} rgb_array {shape[1]}x{shape[0]}": (carnac, lambda: renderer.draw(game())),
        f"carnac {args.board} ansi": (carnac, lambda: render_text(game())),
    }
    try:
        os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
        os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
        from pettingzoo.classic import connect_four_v3

        four = connect_four_v3.env(render_mode="rgb_array")
        four.reset(seed=0)
        size = four.render().shape
        rows[f"connect_four rgb_array {size[1]}x{size[0]}"] = (four, four.render)
    except ImportError as err:
        print(f"(connect_four left out: {err}; pip install 'pettingzoo[classic]')")

    results: dict[str, list[float]] = {name: [] for name in rows}
    for round_index in range(args.rounds):
        for name, (env, draw) in rows.items():
            results[name].append(frames_per_second(env, draw, args.seconds, seed=1000 * round_index))
    medians = {name: statistics.median(values) for name, values in results.items()}
    width = max(map(len, medians))
    print(f"frames per second, median of {args.rounds} rounds of {args.seconds:g} s of drawing:")
    for name, value in medians.items():
        print(f"  {name:<{width}}  {value:>10,.0f} frames/s  ({1e3 / value:.3f} ms a frame)")
    ours = next(iter(medians.values()))
    for name, value in list(medians.items())[1:]:
        print(f"ratio carnac rgb_array / {name}: {ours / value:.3f}")


if __name__ == "__main__":
    main()
