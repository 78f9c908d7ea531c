"""The documentation site builds with ``mkdocs build --strict`` (skipped when mkdocs is not installed).

CI installs the ``docs`` extra (mkdocs, mkdocs-material), so there the build always runs: a
broken link, a page missing from the navigation or a nav entry without its page fails it.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


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
    for page in ("index.html", "tutorials/play-by-hand/index.html", "frameworks/index.html"):
        assert (tmp_path / "site" / page).exists(), page


def test_every_docs_page_is_in_the_nav():
    """A page left out of mkdocs.yml's nav would be built but unreachable from the menus."""
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    pages = sorted(str(p.relative_to(ROOT / "docs")) for p in (ROOT / "docs").rglob("*.md"))
    missing = [page for page in pages if page not in nav]
    assert not missing, f"pages not in mkdocs.yml's nav: {missing}"
