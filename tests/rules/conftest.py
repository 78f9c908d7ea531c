"""The ``engine`` fixture: every test under tests/rules/ that takes it runs on the core, the
batched engine and the JAX engine (skipped, with the reason, where JAX is not installed; a
failure instead where CI's ``CARNAC_REQUIRE`` names jax). See :mod:`_engines`."""

from __future__ import annotations

import pytest
from _engines import ENGINES, Engine, engine_param


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest) -> Engine:
    return engine_param(request.param)
