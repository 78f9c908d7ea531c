"""The repository's examples as the tests run them: imported as modules, or run in smoke mode.

Shared by the examples' tests (tests/docs/test_examples.py) and the framework doors' tests
(tests/envs/test_door_examples.py, tests/envs/test_agilerl_door.py).
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

from _frameworks import require
from _paths import ROOT

EXAMPLES = ROOT / "examples"


def import_example(name: str):
    """Import ``examples/name.py`` as a module."""
    sys.path.insert(0, str(EXAMPLES))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(EXAMPLES))


def run_example(name: str, args: list[str], cwd: Path, needs: list[str], timeout: int = 600) -> str:
    """Run ``examples/name`` with ``args`` in smoke mode; return its output (skip if a module is missing)."""
    for module in needs:
        require(module, f"examples/{name} needs it")
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
