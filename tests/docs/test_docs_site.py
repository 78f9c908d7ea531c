"""The documentation site builds with ``mkdocs build --strict`` (skipped when mkdocs is not installed).

CI installs the ``docs`` extra (mkdocs, mkdocs-material), so there the build always runs: a
broken link, a page missing from the navigation or a nav entry without its page fails it.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest
from _paths import ROOT


def test_mkdocs_build_strict(tmp_path):
    for module in ("mkdocs", "material"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed (pip install -e '.[docs]')")
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, f"mkdocs build --strict failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"
    site = tmp_path / "site"
    for page in ("index.html", "tutorials/play-by-hand/index.html", "frameworks/index.html", "course/index.html"):
        assert (site / page).exists(), page
    # The site embeds a web replay, and offers each tutorial as a notebook.
    rendering = (site / "rendering" / "index.html").read_text(encoding="utf-8")
    assert '<iframe src="../images/replay.html"' in rendering
    assert (site / "images" / "replay.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    for name in ("play-by-hand", "write-an-agent", "train-maskable-ppo", "self-play", "alphazero"):
        assert (site / "tutorials" / "notebooks" / f"{name}.ipynb").exists(), name
    # Pages only: no generator script (docs/*.py) and no evaluation card is published.
    published = sorted(str(p.relative_to(site)) for p in site.rglob("*") if p.suffix in (".py", ".pyc", ".json"))
    assert not [p for p in published if not p.startswith(("assets/", "search/"))], published
    # The rules page shows the generated pictures.
    rules = (site / "rules" / "index.html").read_text(encoding="utf-8")
    for picture in ("orientations.png", "tilt.png", "dolmen.png", "tiebreak.png"):
        assert f"images/{picture}" in rules, picture
    # Tilt and decline are the two choices under step 2 of a turn, not steps of their own.
    turn = rules[rules.index('id="a-turn"') :]
    turn = turn[: turn.index("</ol>")]
    assert turn.count("<li>") == 5 and "<ul>" in turn
    assert turn.index("<ul>") < turn.index("<strong>tilt</strong>") < turn.index("</ul>")


def test_every_docs_page_is_in_the_nav():
    """A page left out of mkdocs.yml's nav would be built but unreachable from the menus."""
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    pages = sorted(str(p.relative_to(ROOT / "docs")) for p in (ROOT / "docs").rglob("*.md"))
    missing = [page for page in pages if page not in nav]
    assert not missing, f"pages not in mkdocs.yml's nav: {missing}"
