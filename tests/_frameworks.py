"""``require(module)``: import an optional framework for a test, or skip with the reason.

Tests that need PyTorch or an RL framework call ``require("torch")`` (or ``"tianshou"``,
``"torchrl"``, ``"ray"``, ...) instead of ``pytest.importorskip``. Where the module is not
installed the test is skipped and says which extra brings it. CI's framework matrix sets
``CARNAC_REQUIRE`` to a comma-separated list of modules that must be there; for those a
missing import fails the test instead of skipping it, so a broken framework venv cannot
pass silently.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

import pytest


def required_modules() -> set[str]:
    """The modules that ``CARNAC_REQUIRE`` says must import (empty when it is unset)."""
    return {name.strip() for name in os.environ.get("CARNAC_REQUIRE", "").split(",") if name.strip()}


def require(module: str, reason: str = "") -> ModuleType:
    """Import ``module`` and return it; skip the test if it is missing, unless CI requires it."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        why = f"{module} is not installed{': ' + reason if reason else ''} ({error})"
        if module in required_modules():
            pytest.fail(f"CARNAC_REQUIRE names {module}, but it does not import: {why}")
        pytest.skip(why, allow_module_level=True)  # works inside a test and at import time
