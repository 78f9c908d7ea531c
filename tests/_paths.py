"""The repository's folders, for tests at any depth under tests/ (one place instead of ``parents[N]``).

``ROOT`` is the repository root (the checkout under test), ``TESTS`` the tests folder, where the
shared helpers (``_frameworks``, ``_scripts``, ...) and the golden data that the regenerate
scripts and the docs name (``golden``, ``golden_learner``, ``golden_search``) live.
"""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
