"""The learner envs' step, bit for bit: seeded episodes replayed against the golden file.

``tests/golden_learner/episodes.json`` keeps, for the Gymnasium env and the self-play env under
many options (boards, seats, opponents, illegal-action modes, observation layouts), every
reset and step of a few seeded episodes (the action, the moves played, the observation's
sha256, the reward, terminated, truncated and the info, each with its type) and what the envs
do at their edges (errors and their messages, failed opponents and resets). Each test here
plays one case or one env's edges again and compares. ``python tests/golden_learner/regenerate.py``
writes the file; rewrite it only for a change that is meant to change the envs.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from _paths import TESTS
from _scripts import load_script

GOLDEN = TESTS / "golden_learner" / "episodes.json"
golden = load_script("tests/golden_learner/regenerate.py")
STORED = json.loads(GOLDEN.read_text(encoding="utf-8"))


def first_difference(stored: list[Any], now: list[Any]) -> str:
    """Where two event lists part, as a message for the failing assert."""
    for index, (old, new) in enumerate(zip(stored, now, strict=False)):
        if old != new:
            return f"event {index} differs:\n stored {json.dumps(old)}\n now    {json.dumps(new)}"
    return f"{len(stored)} events stored, {len(now)} now"


def test_every_case_is_stored() -> None:
    assert set(STORED["cases"]) == set(golden.CASES)
    assert set(STORED["scenarios"]) == {"gym", "selfplay"}


@pytest.mark.parametrize("name", sorted(golden.CASES))
def test_seeded_episodes_replay_bit_for_bit(name: str, recwarn: pytest.WarningsRecorder) -> None:
    now = golden.as_json(golden.play_case(golden.CASES[name]))
    stored = STORED["cases"][name]
    assert now == stored, first_difference(stored, now)


@pytest.mark.parametrize("kind", ["gym", "selfplay"])
def test_the_edges_replay_bit_for_bit(kind: str, recwarn: pytest.WarningsRecorder) -> None:
    now = golden.as_json(golden.scenario_events(kind))
    stored = STORED["scenarios"][kind]
    assert set(now) == set(stored)
    for name in stored:
        assert now[name] == stored[name], f"{name}: " + first_difference(stored[name], now[name])


def test_the_two_learner_envs_share_one_step() -> None:
    """The Gymnasium env and the self-play env are thin over one reset and one step."""
    from carnac_env.envs.gym import CarnacEnv
    from carnac_env.envs.learner import LearnerEnv
    from carnac_env.envs.selfplay import SelfPlayEnv

    for name in ("reset", "step", "_play_opponent", "_observe", "_info", "action_masks", "render", "close"):
        assert getattr(CarnacEnv, name) is getattr(SelfPlayEnv, name) is getattr(LearnerEnv, name), name
