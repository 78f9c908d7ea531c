"""Compiled pieces of :meth:`PolicyValueNet.forward <carnac_env.models.PolicyValueNet.forward>`
(numba, ``cache=True``): everything between the matrix products, which stay with BLAS.

A chunk of ``n`` positions flows through these buffers:

* the **stem** (9 planes in) is one product of a column matrix ``(n*rows*cols, 9*9)`` (every
  square's 3x3 neighbourhood in ``(dy, dx, plane)`` order, zeros off the board) with the
  ``(81, channels)`` kernel; :func:`stem_columns` writes it from the observations (each
  square's planes copied into the up to nine rows that read it; the slots off the board are
  never written: the caller allocates the buffer zeroed, once per shape, and it stays zero);
* the **feature maps** live padded, ``(n, 2*ty + 2, 2*tx + 2, channels)`` with ``ty, tx`` the
  number of 2x2 tiles down and across (``ceil(rows/2)``, ``ceil(cols/2)``), the board at
  ``[1:rows+1, 1:cols+1]`` and zeros around it (again written once);
* every 3x3 convolution of the residual blocks is a **Winograd F(2x2, 3x3)** convolution
  (Lavin and Gray, "Fast Algorithms for Convolutional Neural Networks", 2016): each 4x4
  patch of the padded maps is transformed (:func:`winograd_input`, ``V = Bt d B``), 16
  products ``(tiles, channels) @ (channels, channels)`` with the transformed kernels
  ``U = G g Gt`` make ``M`` (one batched ``np.matmul``), and :func:`winograd_output` turns
  each tile back into its 2x2 squares (``Y = At M A``) with the bias, the residual and the
  ReLU, into padded maps again. That is 16 multiplications per 2x2 squares and channel pair
  where the direct convolution makes 36, and no column matrix at all; the transforms are
  additions (the kernels' is done once, in float64, when the network is built). The result
  differs from the direct convolution's by rounding only (measured at most a few 1e-6 on
  the logits; the tests hold it to 1e-5);
* :func:`trunk_heads` reads the last maps square by square into the place logits and the
  pooled vector (mean, maximum and awaiting-square features), and :func:`value_heads`
  finishes the two small heads after their products.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from carnac_env.core.observation import AWAITING, SUPPLY

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
def stem_output(raw: np.ndarray, bias: np.ndarray, rows: int, cols: int, maps: np.ndarray) -> None:  # pragma: no cover
    """``relu(raw + bias)`` of the stem's product ``(n*rows*cols, channels)`` into the padded ``maps``."""
    width = raw.shape[1]
    zero = np.float32(0.0)
    for s in range(maps.shape[0]):
        for r in range(rows):
            for c in range(cols):
                p = (s * rows + r) * cols + c
                for k in range(width):
                    maps[s, r + 1, c + 1, k] = max(raw[p, k] + bias[k], zero)


def winograd_kernels(weight: np.ndarray) -> np.ndarray:
    """The ``(16, in, out)`` float32 Winograd transforms ``G g Gt`` of ``(out, in, 3, 3)``
    kernels, computed in float64 (index ``4*i + j`` for the transform's ``(i, j)``)."""
    g = np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0.0, 0.0, 1.0]])
    u = np.einsum("xa,oiab,yb->xyio", g, weight.astype(np.float64), g)
    return np.ascontiguousarray(u.reshape(16, weight.shape[1], weight.shape[0]), dtype=np.float32)


@nb.njit(cache=True, fastmath=_MATH)
def winograd_input(maps: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover - compiled
    """``Bt d B`` of every 4x4 patch ``d`` of the padded ``maps`` (the tiles in ``(position,
    tile row, tile column)`` order) into ``out`` ``(16, tiles, channels)``."""
    n, height, width, ch = maps.shape
    ty_n, tx_n = (height - 2) // 2, (width - 2) // 2
    strip = np.empty((4, width, ch), np.float32)
    t0 = 0
    for s in range(n):
        for ty in range(ty_n):
            r0 = 2 * ty
            # Bt d for the whole strip of four rows (neighbouring tiles share two columns)
            for j in range(width):
                for k in range(ch):
                    d0 = maps[s, r0, j, k]
                    d1 = maps[s, r0 + 1, j, k]
                    d2 = maps[s, r0 + 2, j, k]
                    d3 = maps[s, r0 + 3, j, k]
                    strip[0, j, k] = d0 - d2
                    strip[1, j, k] = d1 + d2
                    strip[2, j, k] = d2 - d1
                    strip[3, j, k] = d1 - d3
            # (Bt d) B: each tile's four columns
            for i in range(4):
                for tx in range(tx_n):
                    c0 = 2 * tx
                    t = t0 + tx
                    for k in range(ch):
                        e0 = strip[i, c0, k]
                        e1 = strip[i, c0 + 1, k]
                        e2 = strip[i, c0 + 2, k]
                        e3 = strip[i, c0 + 3, k]
                        out[4 * i, t, k] = e0 - e2
                        out[4 * i + 1, t, k] = e1 + e2
                        out[4 * i + 2, t, k] = e2 - e1
                        out[4 * i + 3, t, k] = e1 - e3
            t0 += tx_n


@nb.njit(cache=True, fastmath=_MATH)
def winograd_output(
    products: np.ndarray,
    bias: np.ndarray,
    residual: np.ndarray,
    add_residual: bool,
    rows: int,
    cols: int,
    maps: np.ndarray,
) -> None:  # pragma: no cover - compiled
    """``relu(At M A + bias [+ residual])`` of every tile's ``(16, channels)`` products into
    its (up to four) squares of the padded ``maps``. ``residual`` (padded like ``maps``, and
    may be ``maps`` itself) is read at the same squares."""
    n, height, width_, ch = maps.shape
    ty_n, tx_n = (height - 2) // 2, (width_ - 2) // 2
    half = np.empty((2, 4, ch), np.float32)
    zero = np.float32(0.0)
    t = 0
    for s in range(n):
        for ty in range(ty_n):
            for tx in range(tx_n):
                # At M: combine the rows
                for j in range(4):
                    for k in range(ch):
                        m1 = products[4 + j, t, k]
                        m2 = products[8 + j, t, k]
                        half[0, j, k] = products[j, t, k] + m1 + m2
                        half[1, j, k] = m1 - m2 - products[12 + j, t, k]
                # (At M) A: then the columns, one square at a time
                for i in range(2):
                    r = 2 * ty + i
                    if r >= rows:
                        continue
                    for j in range(2):
                        c = 2 * tx + j
                        if c >= cols:
                            continue
                        for k in range(ch):
                            if j == 0:
                                y = half[i, 0, k] + half[i, 1, k] + half[i, 2, k]
                            else:
                                y = half[i, 1, k] - half[i, 2, k] - half[i, 3, k]
                            y += bias[k]
                            if add_residual:
                                y += residual[s, r + 1, c + 1, k]
                            maps[s, r + 1, c + 1, k] = max(y, zero)
                t += 1


@nb.njit(cache=True, fastmath=_MATH)
def trunk_heads(
    maps: np.ndarray,
    obs: np.ndarray,
    place_w: np.ndarray,
    place_b: np.ndarray,
    logits: np.ndarray,
    pooled: np.ndarray,
) -> None:  # pragma: no cover - compiled
    """The trunk's last padded ``maps``, read square by square into the place logits
    (``logits[s, square*4 + orientation]``; ``place_w`` is ``(orientations, channels)``) and
    the pooled vector ``pooled[s] = (mean, max, sum weighted by the awaiting plane)``."""
    n, rows, cols, _ = obs.shape
    width = maps.shape[3]
    heads = place_w.shape[0]
    squares = rows * cols
    # float32 sums in square order, as numpy's reductions over that axis make them
    total = np.empty(width, np.float32)
    top = np.empty(width, np.float32)
    chosen = np.empty(width, np.float32)
    for s in range(n):
        total[:] = 0.0
        top[:] = -np.inf
        chosen[:] = 0.0
        for r in range(rows):
            for c in range(cols):
                value = maps[s, r + 1, c + 1]
                q = r * cols + c
                for o in range(heads):
                    acc = np.float32(0.0)
                    for k in range(width):
                        acc += value[k] * place_w[o, k]
                    logits[s, q * heads + o] = acc + place_b[o]
                weight = np.float32(obs[s, r, c, AWAITING])
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


__all__ = [
    "stem_columns",
    "stem_output",
    "trunk_heads",
    "value_heads",
    "winograd_input",
    "winograd_kernels",
    "winograd_output",
]
