"""AgileRL's PettingZoo self-play route (examples/agilerl_dqn_selfplay.py): a smoke run (CI's
agilerl entry, which has PyTorch and AgileRL) and quick checks of the parts a user copies (the
channels-first planes, the snapshot opponent, the replay transition)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from _examples import import_example, run_example
from _frameworks import require

NEEDS = "examples/agilerl_dqn_selfplay.py needs it"


@pytest.mark.slow
def test_agilerl_dqn_selfplay_runs_and_fills_its_pool(tmp_path):
    output = run_example("agilerl_dqn_selfplay.py", ["--smoke", "--out", "run"], tmp_path, ["agilerl"])
    result = json.loads((tmp_path / "run" / "result.json").read_text())
    # two blocks of 8 vector steps over 4 games, for each of the 2 agents; a tournament after each block
    assert result["learner_steps"] == 2 * 2 * 8 * 4 and len(result["curve"]) == 2
    assert all(len(point["fitness"]) == 2 for point in result["curve"])
    assert result["pool"] == ["'random'", "Snapshot(block=1)", "Snapshot(block=2)"]
    for name in ("random", "greedy"):
        test = result["test"][name]
        low, high = test["wilson_95"]
        assert test["games"] == 4 and abs(test["win"] + test["draw"] + test["loss"] - 1) < 1e-9
        assert 0 <= low <= test["win"] <= high <= 1
    assert (tmp_path / "run" / "elite.pt").exists()
    assert "wins against random in 4 new games" in output and "wins against greedy in 4 new games" in output


def _agent(example, env, channels=4):
    from agilerl.algorithms import DQN

    return DQN(
        example.planes_space(env),
        env.action_space,
        net_config={
            "encoder_config": {"channel_size": [channels], "kernel_size": [3], "stride_size": [1]},
            "head_config": {"hidden_size": [16]},
        },
        batch_size=8,
    )


def test_the_planes_go_to_agilerl_channels_first():
    """AgileRL takes the smallest axis last for channels-last; the small board's (5, 8, 9) has it
    first, so AgileRL would read 5 channels of 8 x 9. chw() hands it (9, 5, 8), unswapped, with
    every plane scaled to [0, 1] by the space's bounds (the supply plane's high is 28)."""
    require("agilerl", NEEDS)
    from agilerl.utils.algo_utils import needs_image_transpose

    import carnac_env
    from carnac_env.envs.selfplay import SelfPlayEnv

    example = import_example("agilerl_dqn_selfplay")
    env = SelfPlayEnv(carnac_env.env(board="small"))
    assert env.observation_space.shape == (5, 8, 9) and not needs_image_transpose(env.observation_space)
    space = example.planes_space(env)
    assert space.shape == (9, 5, 8) and not needs_image_transpose(space)
    obs, info = env.reset(seed=3)
    planes = example.chw(obs)
    assert planes.dtype == np.float32 and np.array_equal(planes, np.moveaxis(obs, -1, 0))
    agent = _agent(example, env)
    assert not agent.swap_channels
    scaled = agent.preprocess_observation(planes[None])
    assert scaled.shape == (1, 9, 5, 8) and float(scaled.max()) <= 1.0 and float(scaled[0, 8].max()) > 0
    action = agent.get_action(planes[None], 0.0, info["action_mask"][None])  # the int8 mask as it comes
    assert info["action_mask"].dtype == np.int8 and info["action_mask"][int(action[0])] == 1


def test_a_snapshot_plays_legal_moves_and_stays_frozen():
    """A Snapshot is a clone: the agent learning on afterwards leaves it as it was, and it plays
    whole games as the adapter's opponent; the transitions replay as AgileRL's buffer takes them."""
    require("agilerl", NEEDS)
    import torch
    from agilerl.components.replay_buffer import ReplayBuffer

    import carnac_env
    from carnac_env.envs.selfplay import OpponentPool

    example = import_example("agilerl_dqn_selfplay")
    torch.manual_seed(0)
    pool = OpponentPool(["random"], size=2)
    envs = example.make_envs("small", pool, count=2, seed=0)
    agent = _agent(example, envs.envs[0])
    snapshot = example.Snapshot(agent, block=1, epsilon=0.0)
    frozen = [p.detach().clone() for p in snapshot.agent.actor.parameters()]
    memory = ReplayBuffer(max_size=256)
    obs, info = envs.reset(seed=0)
    dones = rewards = 0
    for _ in range(120):
        actions = agent.get_action(example.chw(obs), 0.5, info["action_mask"])
        assert all(info["action_mask"][i, a] == 1 for i, a in enumerate(actions))
        next_obs, reward, done, _, info = envs.step(actions)
        memory.add(example.transition(obs, actions, reward, next_obs, done))
        dones, rewards = dones + int(done.sum()), rewards + float(np.abs(reward).sum())
        obs = next_obs
        if len(memory) >= 8:
            agent.learn(memory.sample(8))
    assert dones > 0 and rewards > 0  # games ended and paid the learner
    batch = memory.sample(16)
    assert batch["obs"].shape == (16, 9, 5, 8) and set(batch["done"].flatten().tolist()) <= {0.0, 1.0}
    assert any(not torch.equal(a, b) for a, b in zip(frozen, agent.actor.parameters(), strict=True))
    assert all(torch.equal(a, b) for a, b in zip(frozen, snapshot.agent.actor.parameters(), strict=True))
    envs.close()
    from carnac_env.envs.selfplay import SelfPlayEnv

    env = SelfPlayEnv(carnac_env.env(board="small"), opponent=snapshot)
    for seed in range(3):
        _, info = env.reset(seed=seed)
        done = False
        while not done:
            _, _, done, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        assert env.game.is_over and not info["illegal_action"]
