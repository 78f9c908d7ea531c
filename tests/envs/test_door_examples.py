"""The self-play adapter's example (examples/aec_selfplay_ppo.py) and the CleanRL-style PPO
(examples/cleanrl_ppo.py): smoke runs (CI's train entry, which has PyTorch and sb3-contrib) and
quick checks of the parts a user copies (the snapshot callback, the masked policy)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from _examples import import_example, run_example
from _frameworks import require


@pytest.mark.slow
def test_aec_selfplay_ppo_runs_and_fills_its_pool(tmp_path):
    output = run_example("aec_selfplay_ppo.py", ["--out", "run"], tmp_path, ["torch", "sb3_contrib"])
    result = json.loads((tmp_path / "run" / "result.json").read_text())
    assert result["curve"][-1]["timesteps"] >= 1024
    # 'random' stays; snapshots came in every 256 steps, the newest 2 kept.
    assert result["pool"][0] == "'random'" and len(result["pool"]) == 3
    assert all(member.startswith("Snapshot(") for member in result["pool"][1:])
    low, high = result["test"]["wilson_95"]
    assert 0 <= low <= result["test"]["win"] <= high <= 1
    assert (tmp_path / "run" / "model.zip").exists()
    assert "wins against random in 4 new games" in output


def test_a_snapshot_of_the_learner_plays_legal_moves_as_the_opponent():
    """The callback's snapshots are frozen copies that play through the adapter; training on
    after a snapshot leaves the snapshot as it was."""
    require("torch")
    require("sb3_contrib")
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    from carnac_env.envs.selfplay import OpponentPool

    example = import_example("aec_selfplay_ppo")
    pool = OpponentPool(["random"], size=2)
    venv = DummyVecEnv([lambda: example.make_env("small", pool, seed=0, shaping=0.1, gamma=0.99)])
    model = MaskablePPO(
        "MlpPolicy",
        venv,
        n_steps=64,
        batch_size=32,
        n_epochs=1,
        seed=0,
        device="cpu",
        policy_kwargs={"features_extractor_class": example.CarnacCNN, "features_extractor_kwargs": {"channels": 4}},
    )
    model.learn(192, callback=example.SnapshotCallback(pool, every=64))
    assert len(pool) == 3 and [repr(m) for m in pool.members[1:]] == ["Snapshot(steps=128)", "Snapshot(steps=192)"]
    snapshot = pool.members[1]
    frozen = [p.detach().clone() for p in snapshot.policy.parameters()]
    model.learn(64, callback=example.SnapshotCallback(pool, every=10**9), reset_num_timesteps=False)
    assert all(torch.equal(a, b) for a, b in zip(frozen, snapshot.policy.parameters(), strict=True))
    env = venv.envs[0].unwrapped
    env.set_opponent(snapshot)
    for seed in range(3):
        _, info = env.reset(seed=seed)
        done = False
        while not done:
            _, _, done, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        assert env.game.is_over and not info["illegal_action"]


@pytest.mark.slow
def test_cleanrl_ppo_runs(tmp_path):
    output = run_example("cleanrl_ppo.py", ["--out", "run"], tmp_path, ["torch"])
    result = json.loads((tmp_path / "run" / "result.json").read_text())
    assert result["global_step"] == 4096 and len(result["curve"]) == 8
    assert result["test"]["games"] == 8
    assert abs(result["test"]["win"] + result["test"]["draw"] + result["test"]["loss"] - 1) < 1e-9
    assert (tmp_path / "run" / "agent.pt").exists()
    assert "wins against random in 8 new games" in output


def test_cleanrl_policy_never_samples_an_illegal_action():
    """Masked logits (-1e8): samples and the greedy choice are legal; the log-probabilities and
    the entropy are finite, and illegal actions get no gradient."""
    require("torch")
    import torch

    example = import_example("cleanrl_ppo")
    args = example.parse_args(["--channels", "4"])
    envs = example.make_envs(args, 8, seat=0)  # Red, to place on an empty board: no tilt, no decline
    obs, infos = envs.reset(seed=0)
    agent = example.Agent(envs, channels=4)
    mask = torch.as_tensor(infos["action_mask"], dtype=torch.bool)
    for _ in range(20):
        action, logprob, entropy, value = agent.get_action_and_value(torch.as_tensor(obs), mask)
        assert mask[torch.arange(8), action].all()
        assert torch.isfinite(logprob).all() and torch.isfinite(entropy).all() and value.shape == (8, 1)
    greedy, *_ = agent.get_action_and_value(torch.as_tensor(obs), mask, greedy=True)
    assert mask[torch.arange(8), greedy].all()
    _, logprob, _, _ = agent.get_action_and_value(torch.as_tensor(obs), mask, action)
    logprob.sum().backward()
    logits_grad = agent.actor.bias.grad  # the bias's gradient is d(log p)/d(logit) summed over the batch
    never_legal = ~mask.any(dim=0)
    assert never_legal.any() and torch.all(logits_grad[never_legal].abs() < 1e-6)
    envs.close()
