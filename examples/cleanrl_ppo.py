"""A CleanRL-style single-file PPO with invalid-action masking, over Carnac's vector env.

    pip install -e . torch
    python examples/cleanrl_ppo.py                          # small board against random: about 2 CPU minutes
    python examples/cleanrl_ppo.py --opponent greedy --total-timesteps 500000
    CARNAC_SMOKE=1 python examples/cleanrl_ppo.py           # tiny budgets: checks that it runs

Written in the manner of CleanRL's ``ppo.py`` (one file, every hyperparameter in one ``Args``
dataclass, the rollout in preallocated tensors, GAE, a clipped surrogate with a clipped value
loss, learning-rate annealing), with the masking of CleanRL's MicroRTS variants: illegal actions
get a logit of -1e8 before the softmax, in the rollout and in the update alike, so the policy
never samples one and their gradient is zero. PyTorch only; no RL library.

The env is ``gymnasium.make_vec("carnac_env/Carnac-v0", num_envs=..., opponent=...)``: Carnac's
own vector env on the batched engine, the learner's seat drawn every game, a fixed opponent
inside it (``--opponent``, an agent spec), the mask in ``infos["action_mask"]`` (int8 0/1).
It runs with ``autoreset_mode=SAME_STEP``, which is what CleanRL's loop assumes: the step that
ends a game returns the next game's first observation, and ``next_done`` cuts the bootstrap.
The reward is the game result (+1 / -1 / 0) on the learner's last step.

At the end the policy (greedy choice) plays ``--eval-games`` new games against random play,
half as Red and half as White, and the win rate is printed with its 95% Wilson interval;
``OUT/result.json`` keeps it and the curve, ``OUT/agent.pt`` the weights.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode

import carnac_env  # noqa: F401 (registers carnac_env/Carnac-v0)
from carnac_env.arena.ratings import wilson

try:
    import torch
    from torch import nn
except ImportError as err:  # pragma: no cover - depends on the install
    raise SystemExit(f"this example needs PyTorch: pip install torch ({err})") from None

SMOKE = os.environ.get("CARNAC_SMOKE", "") not in ("", "0")


@dataclass
class Args:
    """Every setting of the run (each one is a command-line flag: ``--num-envs 32``)."""

    seed: int = 1
    board: str = "small"
    opponent: str = "random"  # the fixed opponent inside the vector env (an agent spec)
    total_timesteps: int = 4096 if SMOKE else 100_000
    learning_rate: float = 2.5e-4
    anneal_lr: bool = True
    num_envs: int = 4 if SMOKE else 16
    num_steps: int = 64 if SMOKE else 128  # steps per env per rollout
    gamma: float = 0.99
    gae_lambda: float = 0.95
    num_minibatches: int = 4 if SMOKE else 8
    update_epochs: int = 2 if SMOKE else 4
    norm_adv: bool = True
    clip_coef: float = 0.2
    clip_vloss: bool = True
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    channels: int = 8 if SMOKE else 64
    eval_every: int = 2 if SMOKE else 10  # updates between evaluations against random play
    eval_games: int = 8 if SMOKE else 1000  # the final evaluation (the ones on the way use a fifth)
    threads: int = 1  # torch CPU threads (one is fastest for a network this small)
    out: str = "runs/cleanrl-ppo"


def parse_args(argv: list[str] | None = None) -> Args:
    """``Args`` from the command line (CleanRL uses tyro for this; argparse does it here)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for field in dataclasses.fields(Args):
        flag = "--" + field.name.replace("_", "-")
        if field.type == "bool":
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=field.default)
        else:
            parser.add_argument(flag, type=type(field.default), default=field.default)
    return Args(**vars(parser.parse_args(argv)))


def make_envs(
    args: Args, num_envs: int, seat: int | str = "random", opponent: str | None = None
) -> gym.vector.VectorEnv:
    """Carnac's vector env: the learner against ``opponent``, same-step autoreset (CleanRL's assumption)."""
    return gym.make_vec(
        "carnac_env/Carnac-v0",
        num_envs=num_envs,
        board=args.board,
        opponent=opponent or args.opponent,
        seat=seat,
        autoreset_mode=AutoresetMode.SAME_STEP,
    )


def warm_up(args: Args) -> None:
    """Play a few moves on a throwaway env, so that numba compiles the batched engine (some seconds,
    once per process) before the clock starts."""
    envs = make_envs(args, 1)
    _, infos = envs.reset(seed=0)
    for _ in range(3):
        _, _, _, _, infos = envs.step(np.array([np.flatnonzero(infos["action_mask"][0])[0]]))
    envs.close()


def layer_init(layer: nn.Module, std: float = math.sqrt(2), bias_const: float = 0.0) -> nn.Module:
    """Orthogonal weights and constant biases, as CleanRL initialises its layers."""
    nn.init.orthogonal_(layer.weight, std)
    nn.init.constant_(layer.bias, bias_const)
    return layer


class Agent(nn.Module):
    """A small CNN over the (rows, cols, 9) planes, with a policy head and a value head."""

    def __init__(self, envs: gym.vector.VectorEnv, channels: int) -> None:
        super().__init__()
        rows, cols, planes = envs.single_observation_space.shape
        high = np.asarray(envs.single_observation_space.high, dtype=np.float32)[0, 0]  # the supply plane's is its max
        self.register_buffer("scale", torch.as_tensor(1.0 / np.maximum(high, 1.0)))
        self.body = nn.Sequential(
            layer_init(nn.Conv2d(planes, channels, 3, padding=1)),
            nn.ReLU(),
            layer_init(nn.Conv2d(channels, channels, 3, padding=1)),
            nn.ReLU(),
            nn.Flatten(),
            layer_init(nn.Linear(channels * rows * cols, 256)),
            nn.ReLU(),
        )
        self.actor = layer_init(nn.Linear(256, envs.single_action_space.n), std=0.01)
        self.critic = layer_init(nn.Linear(256, 1), std=1.0)

    def features(self, obs: torch.Tensor) -> torch.Tensor:
        return self.body((obs.float() * self.scale).permute(0, 3, 1, 2))

    def get_value(self, obs: torch.Tensor) -> torch.Tensor:
        return self.critic(self.features(obs))

    def get_action_and_value(
        self, obs: torch.Tensor, mask: torch.Tensor, action: torch.Tensor | None = None, greedy: bool = False
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """Sample (or score) an action from the masked policy: illegal logits are set to -1e8."""
        hidden = self.features(obs)
        logits = torch.where(mask, self.actor(hidden), torch.tensor(-1e8))
        probs = torch.distributions.Categorical(logits=logits)
        if action is None:
            action = logits.argmax(dim=1) if greedy else probs.sample()
        return action, probs.log_prob(action), probs.entropy(), self.critic(hidden)


@torch.no_grad()
def evaluate(agent: Agent, args: Args, games: int, seed: int) -> dict[str, float]:
    """Greedy play against random on ``games`` games (half as Red, half as White): the shares of results."""
    results = []
    for seat in (0, 1):
        n = max(1, games // 2)
        envs = make_envs(args, n, seat=seat, opponent="random")
        obs, infos = envs.reset(seed=seed + seat)
        final = np.full(n, np.nan)
        while np.isnan(final).any():
            mask = torch.as_tensor(infos["action_mask"], dtype=torch.bool)
            action, *_ = agent.get_action_and_value(torch.as_tensor(obs), mask, greedy=True)
            obs, reward, terminated, truncated, infos = envs.step(action.numpy())
            ended = (terminated | truncated) & np.isnan(final)
            final[ended] = reward[ended]
        envs.close()
        results.append(final)
    red, white = results
    every = np.concatenate(results)
    return {
        "games": len(every),
        "win": float((every > 0).mean()),
        "draw": float((every == 0).mean()),
        "loss": float((every < 0).mean()),
        "win_as_red": float((red > 0).mean()),
        "win_as_white": float((white > 0).mean()),
    }


def main(argv: list[str] | None = None) -> dict:
    args = parse_args(argv)
    batch_size = args.num_envs * args.num_steps
    minibatch_size = batch_size // args.num_minibatches
    num_iterations = max(1, args.total_timesteps // batch_size)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)

    envs = make_envs(args, args.num_envs)
    agent = Agent(envs, args.channels)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)

    # Rollout storage.
    num_actions = envs.single_action_space.n
    obs = torch.zeros((args.num_steps, args.num_envs, *envs.single_observation_space.shape), dtype=torch.int8)
    masks = torch.zeros((args.num_steps, args.num_envs, num_actions), dtype=torch.bool)
    actions = torch.zeros((args.num_steps, args.num_envs), dtype=torch.long)
    logprobs = torch.zeros((args.num_steps, args.num_envs))
    rewards = torch.zeros((args.num_steps, args.num_envs))
    dones = torch.zeros((args.num_steps, args.num_envs))
    values = torch.zeros((args.num_steps, args.num_envs))

    warm_up(args)
    global_step, games_done, wins = 0, 0, 0
    start, cpu_start = time.time(), time.process_time()
    eval_cpu = 0.0  # evaluation time, left out of the training CPU time
    curve = []
    next_obs, infos = envs.reset(seed=args.seed)
    next_obs = torch.as_tensor(next_obs)
    next_mask = torch.as_tensor(infos["action_mask"], dtype=torch.bool)
    next_done = torch.zeros(args.num_envs)

    for iteration in range(1, num_iterations + 1):
        if args.anneal_lr:
            optimizer.param_groups[0]["lr"] = (1.0 - (iteration - 1.0) / num_iterations) * args.learning_rate

        for step in range(args.num_steps):
            global_step += args.num_envs
            obs[step], masks[step], dones[step] = next_obs, next_mask, next_done
            with torch.no_grad():
                action, logprob, _, value = agent.get_action_and_value(next_obs, next_mask)
            values[step] = value.flatten()
            actions[step], logprobs[step] = action, logprob
            next_obs, reward, terminations, truncations, infos = envs.step(action.numpy())
            done = np.logical_or(terminations, truncations)
            rewards[step] = torch.as_tensor(reward, dtype=torch.float32)
            next_obs = torch.as_tensor(next_obs)
            next_mask = torch.as_tensor(infos["action_mask"], dtype=torch.bool)
            next_done = torch.as_tensor(done, dtype=torch.float32)
            games_done += int(done.sum())
            wins += int((reward[done] > 0).sum())

        # Generalised advantage estimation, bootstrapped from the value of the last observation.
        with torch.no_grad():
            next_value = agent.get_value(next_obs).reshape(1, -1)
            advantages = torch.zeros_like(rewards)
            lastgaelam = 0
            for t in reversed(range(args.num_steps)):
                if t == args.num_steps - 1:
                    nextnonterminal, nextvalues = 1.0 - next_done, next_value
                else:
                    nextnonterminal, nextvalues = 1.0 - dones[t + 1], values[t + 1]
                delta = rewards[t] + args.gamma * nextvalues * nextnonterminal - values[t]
                advantages[t] = lastgaelam = delta + args.gamma * args.gae_lambda * nextnonterminal * lastgaelam
            returns = advantages + values

        b_obs = obs.reshape((-1, *envs.single_observation_space.shape))
        b_masks = masks.reshape((-1, num_actions))
        b_logprobs, b_actions = logprobs.reshape(-1), actions.reshape(-1)
        b_advantages, b_returns, b_values = advantages.reshape(-1), returns.reshape(-1), values.reshape(-1)

        # The PPO update: clipped surrogate, clipped value loss, entropy bonus, a few epochs of minibatches.
        b_inds = np.arange(batch_size)
        clipfracs = []
        for _epoch in range(args.update_epochs):
            np.random.shuffle(b_inds)
            for begin in range(0, batch_size, minibatch_size):
                mb = b_inds[begin : begin + minibatch_size]
                _, newlogprob, entropy, newvalue = agent.get_action_and_value(b_obs[mb], b_masks[mb], b_actions[mb])
                logratio = newlogprob - b_logprobs[mb]
                ratio = logratio.exp()
                with torch.no_grad():
                    approx_kl = ((ratio - 1) - logratio).mean()
                    clipfracs.append(((ratio - 1.0).abs() > args.clip_coef).float().mean().item())
                mb_advantages = b_advantages[mb]
                if args.norm_adv:
                    mb_advantages = (mb_advantages - mb_advantages.mean()) / (mb_advantages.std() + 1e-8)
                pg_loss = torch.max(
                    -mb_advantages * ratio, -mb_advantages * torch.clamp(ratio, 1 - args.clip_coef, 1 + args.clip_coef)
                ).mean()
                newvalue = newvalue.view(-1)
                if args.clip_vloss:
                    v_clipped = b_values[mb] + torch.clamp(newvalue - b_values[mb], -args.clip_coef, args.clip_coef)
                    v_loss = 0.5 * torch.max((newvalue - b_returns[mb]) ** 2, (v_clipped - b_returns[mb]) ** 2).mean()
                else:
                    v_loss = 0.5 * ((newvalue - b_returns[mb]) ** 2).mean()
                loss = pg_loss - args.ent_coef * entropy.mean() + v_loss * args.vf_coef
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()

        if iteration % args.eval_every == 0 or iteration == num_iterations:
            before = time.process_time()
            rates = evaluate(agent, args, max(2, args.eval_games // 5), seed=10_000 + iteration)
            eval_cpu += time.process_time() - before
            train_cpu = time.process_time() - cpu_start - eval_cpu
            curve.append({"global_step": global_step, "train_cpu_s": round(train_cpu, 1), **rates})
            print(
                f"global_step={global_step} train_cpu={train_cpu:.0f}s SPS={int(global_step / (time.time() - start))} "
                f"training win rate={wins / max(1, games_done):.1%} ({games_done} games) "
                f"approx_kl={approx_kl.item():.4f} clipfrac={np.mean(clipfracs):.3f} "
                f"vs random (greedy, {rates['games']} games): {rates['win']:.1%}",
                flush=True,
            )

    train_cpu = time.process_time() - cpu_start - eval_cpu
    test = evaluate(agent, args, args.eval_games, seed=10**6)
    low, high = wilson(test["win"], test["games"])
    print(
        f"final: {test['win']:.1%} wins against random in {test['games']} new games (95% Wilson interval "
        f"{low:.1%}-{high:.1%}; as Red {test['win_as_red']:.1%}, as White {test['win_as_white']:.1%}) "
        f"after {global_step} steps and {train_cpu:.0f} s of training CPU"
    )
    torch.save(agent.state_dict(), out / "agent.pt")
    result = {
        "args": dataclasses.asdict(args),
        "curve": curve,
        "test": {**test, "wilson_95": [round(low, 4), round(high, 4)]},
        "train_cpu_s": round(train_cpu, 1),
        "global_step": global_step,
    }
    (out / "result.json").write_text(json.dumps(result, indent=1))
    envs.close()
    return result


if __name__ == "__main__":
    main()
