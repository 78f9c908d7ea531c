"""The shared argument checks (carnac_env._checks): what each accepts and refuses, and the message."""

from __future__ import annotations

import math

import numpy as np
import pytest

from carnac_env import _checks
from carnac_env.errors import CarnacError


@pytest.mark.parametrize("value", [0, 3, np.int64(7), np.uint8(2)])
def test_whole_accepts_integers(value):
    result = _checks.whole("sims", value, 0, 10)
    assert result == int(value) and type(result) is int


@pytest.mark.parametrize("value", [True, False, np.bool_(True), 3.0, "3", None, 2.5, float("nan"), -1, 11])
def test_whole_refuses_the_rest_and_names_the_value(value):
    with pytest.raises(CarnacError, match=r"sims=.*expected a whole number in 0\.\.10"):
        _checks.whole("sims", value, 0, 10)


@pytest.mark.parametrize("value", [0, 1.5, np.float32(0.25), np.int16(3)])
def test_number_accepts_reals(value):
    result = _checks.number("c", value, 0.0, 4.0)
    assert result == float(value) and type(result) is float


@pytest.mark.parametrize("value", [True, "1", None, float("nan"), math.inf, -math.inf, 1j, -0.5, 4.5])
def test_number_refuses_the_rest(value):
    with pytest.raises(CarnacError, match=r"c=.*expected a finite number in \[0, 4\]"):
        _checks.number("c", value, 0.0, 4.0)


def test_number_open_bound_and_infinity_when_allowed():
    with pytest.raises(CarnacError, match=r"lr=0\.0; expected a finite number > 0"):
        _checks.number("lr", 0.0, 0.0, low_open=True)
    assert _checks.number("limit", math.inf, 0.0, finite=False) == math.inf
    with pytest.raises(CarnacError, match="limit=nan"):
        _checks.number("limit", math.nan, 0.0, finite=False)


@pytest.mark.parametrize("value", [True, False, np.bool_(False)])
def test_flag_accepts_bools(value):
    assert _checks.flag("reuse", value) is bool(value)


@pytest.mark.parametrize("value", [1, 0, "true", None, 1.0])
def test_flag_refuses_numbers_and_text(value):
    with pytest.raises(CarnacError, match=r"reuse=.*expected True or False"):
        _checks.flag("reuse", value)


def test_seed_range_and_optional():
    assert _checks.seed(0) == 0 and _checks.seed(2**63 - 1) == 2**63 - 1
    assert _checks.seed(None, optional=True) is None
    for bad in (-1, 2**63, True, 1.0, "0", None):
        with pytest.raises(CarnacError, match="seed="):
            _checks.seed(bad)


def test_choice_matches_exactly():
    assert _checks.choice("mode", "lose", ["raise", "lose"]) == "lose"
    with pytest.raises(CarnacError, match=r"mode='Lose'; expected one of 'raise', 'lose'"):
        _checks.choice("mode", "Lose", ["raise", "lose"])
    with pytest.raises(CarnacError):
        _checks.choice("seat", True, [0, 1])
    with pytest.raises(CarnacError):
        _checks.choice("seat", "0", [0, 1])
