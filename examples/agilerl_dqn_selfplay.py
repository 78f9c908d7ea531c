"""AgileRL: self-play DQN with action masks and evolutionary HPO, after AgileRL's Connect Four tutorial.

    pip install torch --index-url https://download.pytorch.org/whl/cpu   # PyTorch's CPU build first
    pip install -e . "agilerl==2.58.0" "peft==0.19.1"   # 2.58.0 imports peft without declaring it
    python examples/agilerl_dqn_selfplay.py                 # small board, 60 blocks: about 3.5 CPU minutes
    python examples/agilerl_dqn_selfplay.py --smoke         # tiny budgets (also CARNAC_SMOKE=1)

AgileRL's PettingZoo self-play route is its Connect Four DQN tutorial
(``tutorials/pettingzoo/dqn_curriculum.py``): a population of ``agilerl.algorithms.DQN``
agents (``DQN.population``), each choosing with ``get_action(obs, epsilon, action_mask)``, one
shared ``ReplayBuffer`` of ``TensorDict`` transitions, ``TournamentSelection`` and
``Mutations`` every few blocks, and an opponent pool of frozen clones (``agent.clone()``) of
the elite. The tutorial wraps the AEC game in a vector env of its own that plays the opponent's
single reply after each learner move; on Carnac a seat may act several times in a row, so
that reply is "every opponent move until the learner is to act again", which is what
:class:`carnac_env.envs.selfplay.SelfPlayEnv` does over ``carnac_env.env()``. Gymnasium's
``SyncVectorEnv`` (``SAME_STEP`` autoreset) batches it; every env shares one
:class:`~carnac_env.envs.selfplay.OpponentPool` (``"random"`` plus the newest snapshots).

The user glue is :func:`chw` and :func:`planes_space` (AgileRL's channels-last test looks for
the smallest axis last, and the small board's ``(5, 8, 9)`` planes have it first, so the
planes are moved to ``(9, 5, 8)`` by hand, as the tutorial does), :class:`Snapshot` (a
frozen clone as the adapter's ``policy(observation, action_mask)``), :func:`make_envs` and
:func:`transition`: 38 lines with their docstrings; the rest is AgileRL's loop as the
tutorial writes it, and the measurement (:func:`play`).
The masks go to AgileRL as they come (int8 0/1). The final policy plays ``--test-games`` new
games against ``random`` and ``greedy`` (greedy choice, seats alternating), with the 95%
Wilson interval; ``OUT/result.json`` keeps the numbers and ``OUT/elite.pt`` the weights.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import carnac_env
from carnac_env.arena.ratings import wilson
from carnac_env.core.boards import make_board
from carnac_env.envs.selfplay import OpponentPool, SelfPlayEnv

try:
    import torch
    from agilerl.algorithms import DQN
    from agilerl.algorithms.core.registry import HyperparameterConfig, RLParameter
    from agilerl.components.replay_buffer import ReplayBuffer
    from agilerl.hpo.mutation import Mutations
    from agilerl.hpo.tournament import TournamentSelection
    from tensordict import TensorDict
except ImportError as err:  # pragma: no cover - depends on the install
    raise SystemExit(f'this example needs AgileRL: pip install "agilerl==2.58.0" "peft==0.19.1" ({err})') from None

SMOKE = os.environ.get("CARNAC_SMOKE", "") not in ("", "0") or "--smoke" in sys.argv


def chw(planes: np.ndarray) -> np.ndarray:
    """Carnac's ``(..., rows, cols, 9)`` int8 planes as AgileRL's CNN takes them: ``(..., 9, rows, cols)`` float32."""
    return np.moveaxis(planes, -1, -3).astype(np.float32)


def planes_space(env: SelfPlayEnv) -> gym.spaces.Box:
    """The env's observation space, channels first (AgileRL scales each plane by its bounds: supply / 28)."""
    space = env.observation_space
    return gym.spaces.Box(chw(space.low), chw(space.high), dtype=np.float32)


class Snapshot:
    """A frozen clone of an agent, as the adapter's opponent: ``policy(observation, action_mask) -> action``."""

    def __init__(self, agent: Any, block: int, epsilon: float) -> None:
        self.agent, self.block, self.epsilon = agent.clone(), block, epsilon

    def __call__(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return int(self.agent.get_action(chw(observation[None]), self.epsilon, action_mask[None])[0])

    def __repr__(self) -> str:
        return f"Snapshot(block={self.block})"


def make_envs(board: str, opponent: Any, count: int, seed: int) -> gym.vector.SyncVectorEnv:
    """``count`` self-play envs over the AEC env, the learner's seat alternating, in one vector env."""
    envs = gym.vector.SyncVectorEnv(
        [lambda: SelfPlayEnv(carnac_env.env(board=board), opponent=opponent) for _ in range(count)],
        autoreset_mode=gym.vector.AutoresetMode.SAME_STEP,
    )
    envs.reset(seed=seed)
    return envs


def transition(obs: np.ndarray, actions: np.ndarray, rewards: Any, next_obs: np.ndarray, dones: Any) -> TensorDict:
    """One batched replay transition; after a game's end ``next_obs`` is the next game's start, unused (done)."""
    return TensorDict(
        {
            "obs": torch.from_numpy(chw(obs)),
            "action": torch.from_numpy(np.asarray(actions, dtype=np.int64)).reshape(-1, 1),
            "reward": torch.as_tensor(rewards, dtype=torch.float32).reshape(-1, 1),
            "next_obs": torch.from_numpy(chw(next_obs)),
            "done": torch.as_tensor(dones, dtype=torch.float32).reshape(-1, 1),
        },
        batch_size=[len(actions)],
    )


@torch.no_grad()
def play(agent: Any, board: str, opponent: str, games: int, seed: int, envs: int = 8) -> dict[str, Any]:
    """The agent's greedy results against ``opponent`` over ``games`` new games, seats alternating."""
    venv = make_envs(board, opponent, min(envs, games), seed)
    obs, info = venv.reset(seed=seed)
    results = {"win": 0, "draw": 0, "loss": 0}
    wins_by_seat, games_by_seat = [0, 0], [0, 0]
    while sum(results.values()) < games:
        actions = agent.get_action(chw(obs), 0.0, info["action_mask"])
        obs, _, done, _, info = venv.step(actions)
        for i in np.flatnonzero(done):
            if sum(results.values()) >= games:
                break
            end = info["final_info"]
            seat, winner = int(end["seat"][i]), int(end["winner"][i])
            outcome = "draw" if winner == -1 else "win" if winner == seat else "loss"
            results[outcome] += 1
            games_by_seat[seat] += 1
            wins_by_seat[seat] += outcome == "win"
    venv.close()
    rate = results["win"] / games
    low, high = wilson(rate, games)
    return {
        "opponent": opponent,
        "games": games,
        **{k: v / games for k, v in results.items()},
        "games_as_red": games_by_seat[0],
        "win_as_red": wins_by_seat[0] / max(games_by_seat[0], 1),
        "win_as_white": wins_by_seat[1] / max(games_by_seat[1], 1),
        "wilson_95": [round(low, 4), round(high, 4)],
    }


def train(args: argparse.Namespace) -> dict[str, Any]:
    """AgileRL's tutorial loop over the self-play env; returns result.json's content."""
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    torch.set_num_threads(args.threads)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    pool = OpponentPool(["random"], size=args.pool_size)
    envs = make_envs(args.board, pool, args.envs, args.seed)
    observation_space, action_space = planes_space(envs.envs[0]), envs.single_action_space
    pop = DQN.population(
        size=args.population,
        observation_space=observation_space,
        action_space=action_space,
        net_config={
            "encoder_config": {"channel_size": [args.channels], "kernel_size": [3], "stride_size": [1]},
            "head_config": {"hidden_size": [args.hidden]},
        },
        hp_config=HyperparameterConfig(
            lr=RLParameter(min=1e-4, max=1e-2),
            learn_step=RLParameter(min=1, max=16, dtype=int, grow_factor=1.5, shrink_factor=0.75),
        ),
        device="cpu",
        double=True,
        batch_size=args.batch_size,
        lr=args.lr,
        gamma=args.gamma,
        learn_step=args.learn_step,
        tau=args.tau,
    )
    memory = ReplayBuffer(max_size=args.memory, device="cpu")
    tournament = TournamentSelection(tournament_size=2, elitism=True, population_size=args.population)
    mutations = Mutations(
        no_mutation=0.4,
        architecture=0,
        new_layer_prob=0,
        parameters=0.2,
        activation=0,
        rl_hp=0.4,
        mutation_sd=0.1,
        mutate_elite=False,  # the elite saved and snapshotted is the one the tournament measured
        rand_seed=args.seed,
        device="cpu",
    )
    obs, info = envs.reset(seed=args.seed)
    total_steps, curve, elite = 0, [], pop[0]
    print(f"training {args.population} AgileRL DQNs through SelfPlayEnv on {args.board}, {args.blocks} blocks")
    for block in range(args.blocks):
        epsilon = max(args.eps_end, 1.0 - (1.0 - args.eps_end) * block / max(1, args.blocks * args.eps_fraction))
        for agent in pop:
            for step in range(args.block_steps):
                actions = agent.get_action(chw(obs), epsilon, info["action_mask"])
                next_obs, rewards, done, _, info = envs.step(actions)
                memory.add(transition(obs, actions, rewards, next_obs, done))
                obs = next_obs
                total_steps += args.envs
                if len(memory) >= agent.batch_size and step % agent.learn_step == 0:
                    agent.learn(memory.sample(agent.batch_size))
        if (block + 1) % args.evo_every == 0:
            seed = 10_000 + block
            fitnesses = [play(agent, args.board, "random", args.eval_games, seed)["win"] for agent in pop]
            for agent, fitness in zip(pop, fitnesses, strict=True):
                agent.metrics.add_fitness(fitness)
            elite, pop = tournament.select(pop)[:2]
            pool.add(Snapshot(elite, block + 1, args.opponent_epsilon))
            pop = mutations.mutation(pop)
            cpu = time.process_time() - cpu0
            curve.append({"block": block + 1, "steps": total_steps, "cpu_s": round(cpu, 1), "fitness": fitnesses})
            print(
                f"block {block + 1:>3}  steps {total_steps:>7}  CPU {cpu:6.1f}s  epsilon {epsilon:.2f}  "
                f"vs random (greedy, {args.eval_games} games): {' '.join(f'{f:.0%}' for f in fitnesses)}",
                flush=True,
            )
    envs.close()
    train_cpu, train_wall = time.process_time() - cpu0, time.perf_counter() - wall0
    elite.save_checkpoint(str(out / "elite.pt"))
    tests = {
        name: play(elite, args.board, name, args.test_games, seed=10**6)
        for name in (["random", "greedy"] if args.greedy else ["random"])
    }
    for name, test in tests.items():
        low, high = test["wilson_95"]
        print(
            f"elite: {test['win']:.1%} wins against {name} in {test['games']} new games (95% Wilson interval "
            f"{low:.1%}-{high:.1%}; as Red {test['win_as_red']:.1%}, as White {test['win_as_white']:.1%})"
        )
    print(f"training CPU {train_cpu:.0f} s ({train_wall:.0f} s wall), {total_steps} learner steps")
    result = {
        "settings": {k: v for k, v in vars(args).items() if k != "out"},
        "curve": curve,
        "test": tests,
        "train_cpu_s": round(train_cpu, 1),
        "train_wall_s": round(train_wall, 1),
        "learner_steps": total_steps,
        "pool": [repr(member) for member in pool.members],
    }
    (out / "result.json").write_text(json.dumps(result, indent=1))
    print(f"saved {out / 'elite.pt'} and {out / 'result.json'}")
    return result


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options; ``--smoke`` (or ``CARNAC_SMOKE=1``) shrinks every budget to a few seconds."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--smoke", action="store_true", help="tiny budgets: checks that it runs")
    p.add_argument("--board", default="small")
    p.add_argument("--population", type=int, default=2 if SMOKE else 4)
    p.add_argument("--envs", type=int, default=4 if SMOKE else 16, help="games stepped together per agent")
    p.add_argument("--blocks", type=int, default=2 if SMOKE else 60)
    p.add_argument("--block-steps", type=int, default=8 if SMOKE else 50, help="vector steps per agent per block")
    p.add_argument("--evo-every", type=int, default=1 if SMOKE else 5, help="blocks between tournaments")
    p.add_argument("--batch-size", type=int, default=32 if SMOKE else 128)
    p.add_argument("--memory", type=int, default=2_000 if SMOKE else 50_000, help="replay buffer size")
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--learn-step", type=int, default=1, help="vector steps between learning steps (mutated)")
    p.add_argument("--gamma", type=float, default=0.99)
    p.add_argument("--tau", type=float, default=0.01)
    p.add_argument("--eps-end", type=float, default=0.05)
    p.add_argument("--eps-fraction", type=float, default=0.5, help="share of the blocks over which epsilon decays")
    p.add_argument("--opponent-epsilon", type=float, default=0.1, help="a snapshot's random-move share")
    p.add_argument("--channels", type=int, default=8 if SMOKE else 32)
    p.add_argument("--hidden", type=int, default=32 if SMOKE else 128)
    p.add_argument("--pool-size", type=int, default=2, help="snapshots kept beside 'random' (the newest)")
    p.add_argument("--eval-games", type=int, default=4 if SMOKE else 32, help="games per fitness evaluation")
    p.add_argument("--test-games", type=int, default=4 if SMOKE else 200)
    p.add_argument("--no-greedy", dest="greedy", action="store_false", help="test against random only")
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="runs/agilerl-dqn-selfplay")
    args = p.parse_args(argv)
    make_board(args.board)  # a clear error for an unknown board, before any work
    return args


def main(argv: list[str] | None = None) -> None:
    train(parse_args(argv))


if __name__ == "__main__":
    main()
