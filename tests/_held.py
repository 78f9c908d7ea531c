"""Start a ``carnac`` run that stops itself after N stored games and waits to be killed.

The arena reads the test-only variable ``CARNAC_TEST_HOLD_AFTER=N:PATH``
(:data:`carnac_env.arena.run.TEST_HOLD_VARIABLE`): after storing its N-th new game it
writes PATH and waits. A test of a kill or a SIGTERM mid-run starts it with
:func:`start_held`, which returns once PATH exists, so the signal always lands with
exactly N games stored: no race between a poll and the run's end.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from carnac_env.arena.run import TEST_HOLD_VARIABLE


def start_held(command: list[str], after: int, ready: Path, timeout: float = 300, **popen: Any) -> subprocess.Popen:
    """``command`` started in its own process group, returned once it holds after ``after`` games."""
    env = {**os.environ, TEST_HOLD_VARIABLE: f"{after}:{ready}"}
    process = subprocess.Popen(command, env=env, start_new_session=True, **popen)
    deadline = time.monotonic() + timeout
    while not ready.exists():
        if process.poll() is not None:
            _, err = process.communicate()
            pytest.fail(f"the run ended (status {process.returncode}) before holding: {err!r}")
        if time.monotonic() > deadline:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            pytest.fail(f"the run did not store {after} games within {timeout:g} s")
        time.sleep(0.02)
    return process
