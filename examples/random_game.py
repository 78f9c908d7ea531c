"""Play one game of Carnac between two random agents through the standard PettingZoo loop.

    python examples/random_game.py                      # medium board, seed 0
    python examples/random_game.py --board small --seed 3 --render

Each agent picks uniformly among the legal actions given by the action mask. At the end
the final board and the result (dolmens, BGA scores, rewards) are printed.
"""

from __future__ import annotations

import argparse

import numpy as np

import carnac_env
from carnac_env.core import BOARDS
from carnac_env.render.ansi import render_text


def play(board: str, seed: int, render: bool) -> dict[str, float]:
    """Play one random game; return each agent's final reward."""
    env = carnac_env.env(board=board, render_mode="human" if render else None)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    rewards: dict[str, float] = {}
    moves = 0
    for agent in env.agent_iter():
        observation, reward, terminated, truncated, _info = env.last()
        if terminated or truncated:
            rewards[agent] = reward
            action = None
        else:
            legal = np.flatnonzero(observation["action_mask"])
            action = int(rng.choice(legal))
            if render:
                print(f"{agent} plays {env.unwrapped.action_to_text(action)}")
            moves += 1
        env.step(action)
    game = env.unwrapped.game
    print(render_text(game))
    print(f"{moves} decisions; rewards: {rewards}")
    env.close()
    return rewards


def main() -> None:
    parser = argparse.ArgumentParser(description="Play one random game of Carnac.")
    parser.add_argument("--board", default="medium", choices=sorted(BOARDS), help="board to play on")
    parser.add_argument("--seed", type=int, default=0, help="seed for the random agents")
    parser.add_argument("--render", action="store_true", help="print the board after every move")
    args = parser.parse_args()
    play(args.board, args.seed, args.render)


if __name__ == "__main__":
    main()
