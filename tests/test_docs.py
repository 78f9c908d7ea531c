"""docs/environment.md is generated from the real environment and must stay in step with it."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest

from carnac_env.core import BOARDS, PLANE_NAMES
from carnac_env.docs_page import environment_page

ROOT = Path(__file__).resolve().parents[1]


def test_environment_page_is_up_to_date() -> None:
    stored = (ROOT / "docs" / "environment.md").read_text(encoding="utf-8")
    generated = environment_page()
    if stored != generated:
        diff = "\n".join(
            difflib.unified_diff(
                stored.splitlines(), generated.splitlines(), "docs/environment.md", "generated", lineterm=""
            )
        )
        pytest.fail(f"docs/environment.md is stale; run `python -m carnac_env.docs_page`:\n{diff}", pytrace=False)


def test_environment_page_covers_every_board_and_plane() -> None:
    page = environment_page()
    for name, board in BOARDS.items():
        assert f"| `{name}` | {board.rows} x {board.cols} |" in page
        assert f"`Discrete({board.rows * board.cols * 4 + 5})`" in page
        assert f"`({board.rows}, {board.cols}, {len(PLANE_NAMES)})`" in page
    for index, name in enumerate(PLANE_NAMES):
        assert f"| {index} | {name} |" in page


def test_rules_page_exists_and_covers_the_topics() -> None:
    text = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8").lower()
    for topic in ("megalith", "orientation", "tilt", "decline", "dolmen", "tie", "supply", "petit_menec", "kermario"):
        assert topic in text, topic
