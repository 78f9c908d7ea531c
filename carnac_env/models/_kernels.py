"""Compiled pieces of :meth:`PolicyValueNet.forward <carnac_env.models.PolicyValueNet.forward>`
(numba, ``cache=True``): everything between the matrix products, which stay with BLAS.

The feature maps of a chunk of ``n`` positions live as ``(n*rows*cols, channels)`` float32
matrices (a matrix product's output, in place). A 3x3 convolution is one product of a column
matrix ``(n*rows*cols, 9*channels)`` (every square's 3x3 neighbourhood, ``(dy, dx, channel)``
order, zeros off the board) with the ``(9*channels, out)`` kernel. The column matrices are
written here, straight from the previous product's raw output: each square's activation
(bias, residual, ReLU) is computed once and copied into the (up to) nine rows that read it.
The slots off the board are never written: the caller allocates the column buffers zeroed,
once per shape, and they stay zero.

The last kernel reads the last block's output square by square and writes the place logits
and the pooled vector (mean, maximum and awaiting-square features) without storing the maps.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from carnac_env.core.observation import AWAITING, NUM_PLANES, SUPPLY

# Reassociation lets LLVM vectorize the reductions; NaN and infinities keep their meaning.
_MATH = {"reassoc", "contract", "nsz"}


@nb.njit(cache=True, fastmath=_MATH)
def stem_columns(obs: np.ndarray, scale: float, out: np.ndarray) -> None:  # pragma: no cover - compiled
    """The stem's column matrix ``(n*rows*cols, 9*NUM_PLANES)`` of ``(n, rows, cols,
    NUM_PLANES)`` observations, the supply plane divided by ``scale``."""
    n, rows, cols, planes = obs.shape
    divisor = np.float32(scale)
    value = np.empty(planes, np.float32)
    for s in range(n):
        for r in range(rows):
            for c in range(cols):
                for k in range(planes):
                    value[k] = np.float32(obs[s, r, c, k])
                value[SUPPLY] = value[SUPPLY] / divisor
                _scatter(value, s, r, c, rows, cols, planes, out)


@nb.njit(cache=True, inline="always")
def _scatter(value, s, r, c, rows, cols, width, out):  # pragma: no cover - compiled
    """Copy square ``(r, c)``'s ``value`` into the column rows of its (up to) nine neighbours."""
    base = s * rows * cols
    for dy in range(3):
        rr = r + 1 - dy  # the square that sees (r, c) at tap dy
        if rr < 0 or rr >= rows:
            continue
        for dx in range(3):
            cc = c + 1 - dx
            if cc < 0 or cc >= cols:
                continue
            row = base + rr * cols + cc
            k0 = (dy * 3 + dx) * width
            for k in range(width):
                out[row, k0 + k] = value[k]


@nb.njit(cache=True, fastmath=_MATH)
def act_columns(
    raw: np.ndarray,
    bias: np.ndarray,
    residual: np.ndarray,
    add_residual: bool,
    h_out: np.ndarray,
    write_h: bool,
    rows: int,
    cols: int,
    out: np.ndarray,
) -> None:  # pragma: no cover - compiled
    """``relu(raw + bias [+ residual])`` of every square, into the column matrix ``out`` (and,
    with ``write_h``, into ``h_out``: the block input a later residual adds)."""
    m, width = raw.shape
    value = np.empty(width, np.float32)
    zero = np.float32(0.0)
    squares = rows * cols
    for p in range(m):
        if add_residual:
            for k in range(width):
                value[k] = max(raw[p, k] + bias[k] + residual[p, k], zero)
        else:
            for k in range(width):
                value[k] = max(raw[p, k] + bias[k], zero)
        if write_h:
            for k in range(width):
                h_out[p, k] = value[k]
        s, q = divmod(p, squares)
        r, c = divmod(q, cols)
        _scatter(value, s, r, c, rows, cols, width, out)


@nb.njit(cache=True, fastmath=_MATH)
def trunk_heads(
    raw: np.ndarray,
    bias: np.ndarray,
    residual: np.ndarray,
    add_residual: bool,
    obs: np.ndarray,
    place_w: np.ndarray,
    place_b: np.ndarray,
    logits: np.ndarray,
    pooled: np.ndarray,
) -> None:  # pragma: no cover - compiled
    """The trunk's last activation ``relu(raw + bias [+ residual])``, read square by square into
    the place logits (``logits[s, square*4 + orientation]``) and the pooled vector
    ``pooled[s] = (mean, max, sum weighted by the awaiting plane)`` of every feature."""
    n, rows, cols, _ = obs.shape
    width = raw.shape[1]
    heads = place_w.shape[1]
    squares = rows * cols
    zero = np.float32(0.0)
    value = np.empty(width, np.float32)
    # float32 sums in square order, as numpy's reductions over that axis make them
    total = np.empty(width, np.float32)
    top = np.empty(width, np.float32)
    chosen = np.empty(width, np.float32)
    for s in range(n):
        total[:] = 0.0
        top[:] = -np.inf
        chosen[:] = 0.0
        for q in range(squares):
            p = s * squares + q
            if add_residual:
                for k in range(width):
                    value[k] = max(raw[p, k] + bias[k] + residual[p, k], zero)
            else:
                for k in range(width):
                    value[k] = max(raw[p, k] + bias[k], zero)
            for o in range(heads):
                acc = np.float32(0.0)
                for k in range(width):
                    acc += value[k] * place_w[k, o]
                logits[s, q * heads + o] = acc + place_b[o]
            weight = np.float32(obs[s, q // cols, q % cols, AWAITING])
            for k in range(width):
                total[k] += value[k]
                top[k] = max(top[k], value[k])
                chosen[k] += value[k] * weight
        for k in range(width):
            pooled[s, k] = total[k] / np.float32(squares)
            pooled[s, width + k] = top[k]
            pooled[s, 2 * width + k] = chosen[k]


@nb.njit(cache=True)
def value_heads(
    respond: np.ndarray,
    respond_b: np.ndarray,
    hidden: np.ndarray,
    hidden_b: np.ndarray,
    logits: np.ndarray,
    offset: int,
) -> None:  # pragma: no cover - compiled
    """The respond logits ``respond + respond_b`` into ``logits[:, offset:]``, and the value
    head's hidden layer ``relu(hidden + hidden_b)`` in place."""
    n, responds = respond.shape
    zero = np.float32(0.0)
    for s in range(n):
        for j in range(responds):
            logits[s, offset + j] = respond[s, j] + respond_b[j]
        for j in range(hidden.shape[1]):
            hidden[s, j] = max(hidden[s, j] + hidden_b[j], zero)


__all__ = ["NUM_PLANES", "act_columns", "stem_columns", "trunk_heads", "value_heads"]
