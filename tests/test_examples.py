"""The training examples run end to end in smoke mode (``CARNAC_SMOKE=1``: tiny budgets).

Each example runs in a subprocess from a temporary folder; a framework that is not installed
skips its example (CI installs the ``train`` extra; Tianshou, TorchRL and RLlib are optional).
The tutorials (tests/test_tutorials.py) also run ``sb3_maskable_ppo.py`` and ``selfplay_ppo.py``
with their arena; here they run with the other options (shaping, symmetry augmentation).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def run_example(name: str, args: list[str], cwd: Path, needs: list[str], timeout: int = 600) -> str:
    """Run ``examples/name`` with ``args`` in smoke mode; return its output (skip if a module is missing)."""
    missing = [m for m in needs if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"{name} needs {', '.join(missing)}")
    env = {**os.environ, "CARNAC_SMOKE": "1", "MPLBACKEND": "Agg"}
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / name), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"{name} failed:\n{output[-5000:]}"
    return output


def test_sb3_maskable_ppo_with_shaping(tmp_path):
    output = run_example(
        "sb3_maskable_ppo.py", ["--no-arena", "--shaping", "0.1", "--out", "run"], tmp_path, ["torch", "sb3_contrib"]
    )
    curve = json.loads((tmp_path / "run" / "curve.json").read_text())
    assert curve["curve"][0]["timesteps"] == 0
    assert curve["curve"][-1]["timesteps"] >= 2048
    assert all(abs(p["win"] + p["draw"] + p["loss"] - 1) < 1e-9 for p in curve["curve"])
    assert curve["settings"]["shaping"] == 0.1
    assert (tmp_path / "run" / "model.zip").exists()
    assert "vs random: win" in output


def test_sb3_shaping_sums_to_the_result():
    """The potential-based shaping adds terms that cancel over a game: the return is the result."""
    if importlib.util.find_spec("sb3_contrib") is None:
        pytest.skip("needs sb3-contrib")
    sys.path.insert(0, str(EXAMPLES))
    try:
        import numpy as np
        import sb3_maskable_ppo
    finally:
        sys.path.remove(str(EXAMPLES))
    for seed in range(3):
        env = sb3_maskable_ppo.make_env("small", "random", seed, shaping=0.5, gamma=1.0)
        _, info = env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        total, done, reward = 0.0, False, 0.0
        while not done:
            action = int(rng.choice(np.flatnonzero(info["action_mask"])))
            _, reward, terminated, truncated, info = env.step(action)
            total += reward
            done = terminated or truncated
        result = env.unwrapped.game.result().reward(env.unwrapped.seat)
        assert total == pytest.approx(result)


def test_selfplay_ppo_with_augmentation(tmp_path):
    output = run_example(
        "selfplay_ppo.py", ["--no-arena", "--augment", "--board", "petit_menec", "--out", "run"], tmp_path, ["torch"]
    )
    log = json.loads((tmp_path / "run" / "log.json").read_text())
    assert len(log["log"]) == 2 and log["settings"]["augment"] is True
    assert (tmp_path / "run" / "policy.pt").exists()
    assert "saved" in output


def test_tianshou_dqn(tmp_path):
    output = run_example("tianshou_dqn.py", [], tmp_path, ["torch", "tianshou"])
    assert "after training: learner's mean reward vs random" in output


def test_torchrl_ppo(tmp_path):
    output = run_example("torchrl_ppo.py", [], tmp_path, ["torch", "torchrl"])
    assert "games ended; the learner won" in output


def test_rllib_ppo(tmp_path):
    output = run_example("rllib_ppo.py", [], tmp_path, ["torch", "ray"])
    assert "iteration 1:" in output
