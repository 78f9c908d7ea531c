"""The training examples run end to end in smoke mode (``CARNAC_SMOKE=1``: tiny budgets).

Each example runs in a subprocess from a temporary folder. A framework that is not installed
skips its example with the reason (tests/_frameworks.require); CI runs each one in its
framework's venv, where that skip is a failure (.ci/run).
The tutorials (tests/docs/test_tutorials.py) also run ``sb3_maskable_ppo.py`` and ``selfplay_ppo.py``
with their arena; here they run with the other options (shaping, symmetry augmentation).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _examples import EXAMPLES, import_example, run_example
from _frameworks import require
from _scripts import load_script


@pytest.mark.slow
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
    require("sb3_contrib")
    import numpy as np

    sb3_maskable_ppo = import_example("sb3_maskable_ppo")
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


def test_selfplay_update_survives_a_one_sample_minibatch():
    """A batch one longer than a multiple of the minibatch once turned the weights into NaN."""
    require("torch")
    import argparse

    import numpy as np
    import torch

    from carnac_env.batch import BatchGame

    selfplay = import_example("selfplay_ppo")

    games = BatchGame("small", num_envs=65, seed=0)
    step = games.reset()
    net = selfplay.PolicyValueNet(5, 8, 28, channels=4, hidden=16)
    actions = games.sample_actions()
    with torch.no_grad():
        logits, _ = net(torch.as_tensor(step.observation), torch.as_tensor(step.action_mask))
    logp = torch.distributions.Categorical(logits=logits).log_prob(torch.as_tensor(actions)).numpy()
    batch = {
        "planes": step.observation,
        "mask": step.action_mask,
        "action": actions.astype(np.int64),
        "logp": logp.astype(np.float32),
        "return": np.where(np.arange(65) % 2, 1.0, -1.0).astype(np.float32),
    }
    args = argparse.Namespace(epochs=2, minibatch=64, clip=0.2, ent_coef=0.01)
    stats = selfplay.ppo_update(net, torch.optim.Adam(net.parameters(), lr=1e-3), batch, args)
    assert all(np.isfinite(v) for v in stats.values())
    assert all(torch.isfinite(p).all() for p in net.parameters())


@pytest.mark.slow
def test_selfplay_ppo_with_augmentation(tmp_path):
    output = run_example(
        "selfplay_ppo.py", ["--no-arena", "--augment", "--board", "petit_menec", "--out", "run"], tmp_path, ["torch"]
    )
    log = json.loads((tmp_path / "run" / "log.json").read_text())
    assert len(log["log"]) == 2 and log["settings"]["augment"] is True
    assert (tmp_path / "run" / "policy.pt").exists()
    assert "saved" in output


@pytest.mark.slow
def test_tianshou_dqn(tmp_path):
    output = run_example("tianshou_dqn.py", [], tmp_path, ["torch", "tianshou"])
    assert "after training: learner's mean reward vs random" in output


@pytest.mark.slow
def test_torchrl_ppo(tmp_path):
    output = run_example("torchrl_ppo.py", [], tmp_path, ["torch", "torchrl"])
    assert "games ended; the learner won" in output


@pytest.mark.slow
def test_rllib_ppo(tmp_path):
    output = run_example("rllib_ppo.py", [], tmp_path, ["torch", "ray"])
    assert "iteration 1:" in output


@pytest.mark.parametrize("board", ["small", "medium"])
def test_ladder_models_of_the_ppo_examples_play_legal_games(board: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The trained PPO policies in examples/models/ (the ladder's PPO rows) load through their
    agent specs and finish a game against random on their board."""
    require("torch", "the example models need it")
    require("sb3_contrib", "the MaskablePPO model needs it")
    from carnac_env.arena import play_game

    monkeypatch.chdir(EXAMPLES.parent)  # the specs' paths are relative to the repository
    monkeypatch.syspath_prepend(str(EXAMPLES))
    for spec in (
        f"selfplay_ppo.SelfPlayAgent:path=examples/models/selfplay-ppo-{board}.pt",
        f"sb3_maskable_ppo.MaskablePPOAgent:path=examples/models/sb3-ppo-{board}.zip",
    ):
        record = play_game(board, spec, "random", seed=0)
        assert record.result is not None, spec
        assert record.replay().is_over


def test_tutorial_4_holds_the_selfplay_example_as_it_is() -> None:
    """docs/tutorials/self-play.md carries examples/selfplay_ppo.py for the reader to save (so the
    page runs in any folder): one file, shown twice, kept the same here."""
    make_tutorials = load_script("scripts/make_tutorials.py")
    page = (EXAMPLES.parent / "docs" / "tutorials" / "self-play.md").read_text(encoding="utf-8")
    files = {kind: code for kind, code, _, _ in make_tutorials.blocks(page) if kind.startswith("file:")}
    assert files == {"file:selfplay_ppo.py": (EXAMPLES / "selfplay_ppo.py").read_text(encoding="utf-8")}


def _printed_paths_exist(output: str, cwd: Path) -> None:
    """Every file the arena's last lines name ("ratings plot: P", "games: P; results: P; ...")
    and the training's "saved P, Q and R" line names is where the line says, from the folder
    the example ran in."""
    named, saved = [], []
    for line in output.splitlines():
        if line.startswith(("games: ", "ratings plot: ")):
            named += [part.split(": ", 1)[1].strip() for part in line.split("; ")]
        elif line.startswith("saved "):
            saved += line.removeprefix("saved ").split(" after ")[0].replace(" and ", ", ").split(", ")
    assert any(name.endswith("games.jsonl") for name in named), output[-3000:]
    assert saved, output[-3000:]
    named += saved
    for name in named:
        assert (cwd / name).is_file(), f"the example says {name}, but there is no such file in {cwd}"


@pytest.mark.slow
def test_sb3_maskable_ppo_names_its_arena_files_as_they_are(tmp_path):
    require("matplotlib", "the ratings plot (the plot extra)")
    output = run_example(
        "sb3_maskable_ppo.py", ["--out", "runs/sb3", "--arena-games", "2"], tmp_path, ["torch", "sb3_contrib"]
    )
    assert "runs/sb3/arena/games.jsonl" in output
    _printed_paths_exist(output, tmp_path)


@pytest.mark.slow
def test_selfplay_ppo_names_its_arena_files_as_they_are(tmp_path):
    require("matplotlib", "the ratings plot (the plot extra)")
    output = run_example(
        "selfplay_ppo.py",
        ["--out", "runs/selfplay", "--updates", "1", "--arena-games", "2", "--mcts", "mcts:sims=10"],
        tmp_path,
        ["torch"],
    )
    assert "runs/selfplay/arena/games.jsonl" in output
    _printed_paths_exist(output, tmp_path)
