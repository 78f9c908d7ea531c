"""Settings every test module shares."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True, scope="session")
def _sb3_logs_under_pytests_tmp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Stable-Baselines3 makes a fresh tempdir/SB3-<date> folder at every ``learn()`` unless
    ``SB3_LOGDIR`` names one (its logger's default): point it, and the example scripts run as
    subprocesses, at pytest's own temporary folder so that the tests leave none behind in /tmp."""
    before = os.environ.get("SB3_LOGDIR")
    if before is None:
        os.environ["SB3_LOGDIR"] = str(tmp_path_factory.mktemp("sb3-logs"))
    yield
    if before is None:
        os.environ.pop("SB3_LOGDIR", None)
