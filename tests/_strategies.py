"""Hypothesis strategies shared by the env fuzz tests (test_aec.py, test_gym_env.py)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

#: Anything a caller might pass as an action: ints far outside the space, bools, None, floats
#: (NaN too), text, numpy scalars and 0-d/1-d arrays, and a list.
ANY_ACTION = st.one_of(
    st.integers(-(2**70), 2**70),
    st.integers(-3, 170),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=True),
    st.text(max_size=6),
    st.integers(-3, 170).map(np.int64),
    st.integers(-3, 170).map(np.array),
    st.lists(st.integers(0, 170), max_size=3).map(np.array),
    st.just(np.array(3.0)),
    st.just([3]),
)
