"""docs/environment.md is generated from the real environment and must stay in step with it."""

from __future__ import annotations

import difflib
import importlib.util
from pathlib import Path

import pytest

from carnac_env.core import BOARDS, PLANE_NAMES

ROOT = Path(__file__).resolve().parents[1]


def _load_generator():
    """docs/gen_environment.py, the page's generator (a script beside docs/make_images.py)."""
    spec = importlib.util.spec_from_file_location("gen_environment", ROOT / "docs" / "gen_environment.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


environment_page = _load_generator().environment_page


def test_environment_page_is_up_to_date() -> None:
    stored = (ROOT / "docs" / "environment.md").read_text(encoding="utf-8")
    generated = environment_page()
    if stored != generated:
        diff = "\n".join(
            difflib.unified_diff(
                stored.splitlines(), generated.splitlines(), "docs/environment.md", "generated", lineterm=""
            )
        )
        pytest.fail(f"docs/environment.md is stale; run `python docs/gen_environment.py`:\n{diff}", pytrace=False)


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


def test_generator_writes_where_asked(tmp_path: Path) -> None:
    target = tmp_path / "env.md"
    assert _load_generator().main([str(target)]) == 0
    assert target.read_text(encoding="utf-8") == environment_page()


def test_no_docs_generator_in_the_package() -> None:
    """The generators write into docs/, so they must not ship in the wheel (site-packages)."""
    package = ROOT / "carnac_env"
    assert not (package / "docs_page.py").exists()
    assert not list(package.rglob("gen_environment.py"))
