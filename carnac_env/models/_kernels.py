"""Compiled pieces of :meth:`PolicyValueNet.forward <carnac_env.models.PolicyValueNet.forward>`
(numba, ``cache=True``): everything between the matrix products, which stay with BLAS.

A chunk of ``n`` positions flows through buffers allocated once per shape:

* the **stem** (9 planes in) is one product of a column matrix ``(n*rows*cols, 9*9)`` (every
  square's 3x3 neighbourhood in ``(dy, dx, plane)`` order, zeros off the board) with the
  ``(81, channels)`` kernel; :func:`stem_columns` writes it from the observations;
* **im2col** (the default): each residual-block convolution is the same kind of product,
  ``(n*rows*cols, 9*channels) @ (9*channels, channels)``; :func:`act_columns` writes its column
  matrix straight from the previous product's raw output, each square's activation (bias,
  residual, ReLU) computed once and copied into the up to nine rows that read it. The slots
  off the board are never written (the caller allocates the buffers zeroed, and they stay
  zero). These are the definition's own operations in the definition's order (the same
  products, the same float32 additions; no ``fastmath`` here), so the outputs equal the
  definition's to the last bit or two;
* **Winograd** (``convolution="winograd"``): the feature maps live padded, ``(n, 2*ty + 2,
  2*tx + 2, channels)`` with ``ty, tx = ceil(rows/2), ceil(cols/2)`` tiles of 2x2 squares,
  the board at ``[1:rows+1, 1:cols+1]`` and zeros around it. Each convolution is Winograd's
  F(2x2, 3x3) (Lavin and Gray, "Fast Algorithms for Convolutional Neural Networks", 2016):
  :func:`winograd_input` transforms every 4x4 patch (``V = Bt d B``), 16 products
  ``(tiles, channels) @ (channels, channels)`` with the transformed kernels ``U = G g Gt``
  (:func:`winograd_kernels`, in float64 once) make ``M`` (one batched ``np.matmul``), and
  :func:`winograd_output` turns each tile back into its 2x2 squares (``Y = At M A``) with the
  bias, the residual and the ReLU. 16 multiplications per tile and channel pair where the
  direct convolution makes 36. As close to the exact convolution as the direct one in float32
  (measured against float64), but rounded differently: its outputs differ from the
  definition's by up to about 3e-7 times their magnitude;
* the heads: the last activations ``(n*rows*cols, channels)`` go through the place product
  (BLAS, as in the definition), :func:`place_logits` and :func:`pooled_features` (mean,
  maximum and awaiting-square features, float32 sums in square order as numpy makes them),
  then :func:`value_heads` after the two small products on the pooled vectors.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from carnac_env.core.observation import AWAITING, SUPPLY

# Reassociation lets LLVM vectorize the Winograd transforms; NaN and infinities keep their meaning.
_MATH = {"reassoc", "contract", "nsz"}


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


@nb.njit(cache=True)
def stem_columns(obs: np.ndarray, scale: float, out: np.ndarray) -> None:  # pragma: no cover - compiled
    """The stem's column matrix ``(n*rows*cols, 9*planes)`` of ``(n, rows, cols, planes)``
    observations, the supply plane divided by ``scale`` (in float32)."""
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


@nb.njit(cache=True)
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
    """``relu((raw + bias) [+ residual])`` of every square into the column matrix ``out`` (and,
    with ``write_h``, into ``h_out``, which may be ``residual``: the block input a later
    residual adds)."""
    m, width = raw.shape
    value = np.empty(width, np.float32)
    zero = np.float32(0.0)
    squares = rows * cols
    for p in range(m):
        if add_residual:
            for k in range(width):
                value[k] = max(residual[p, k] + (raw[p, k] + bias[k]), zero)
        else:
            for k in range(width):
                value[k] = max(raw[p, k] + bias[k], zero)
        if write_h:
            for k in range(width):
                h_out[p, k] = value[k]
        s, q = divmod(p, squares)
        r, c = divmod(q, cols)
        _scatter(value, s, r, c, rows, cols, width, out)


@nb.njit(cache=True)
def activate(
    raw: np.ndarray, bias: np.ndarray, residual: np.ndarray, add_residual: bool, out: np.ndarray
) -> None:  # pragma: no cover - compiled
    """``out = relu((raw + bias) [+ residual])`` (``out`` may be ``residual``)."""
    m, width = raw.shape
    zero = np.float32(0.0)
    for p in range(m):
        if add_residual:
            for k in range(width):
                out[p, k] = max(residual[p, k] + (raw[p, k] + bias[k]), zero)
        else:
            for k in range(width):
                out[p, k] = max(raw[p, k] + bias[k], zero)


@nb.njit(cache=True)
def place_logits(place: np.ndarray, bias: np.ndarray, squares: int, logits: np.ndarray) -> None:  # pragma: no cover
    """``logits[s, q*4 + o] = place[s*squares + q, o] + bias[o]`` (the action encoding's order)."""
    heads = place.shape[1]
    for p in range(place.shape[0]):
        s, q = divmod(p, squares)
        for o in range(heads):
            logits[s, q * heads + o] = place[p, o] + bias[o]


@nb.njit(cache=True)
def pooled_features(h: np.ndarray, obs: np.ndarray, pooled: np.ndarray) -> None:  # pragma: no cover - compiled
    """``pooled[s] = (mean, max, sum weighted by the awaiting plane)`` of every feature over the
    squares, float32 sums in square order (numpy's order for a reduction over that axis)."""
    n, rows, cols, _ = obs.shape
    width = h.shape[1]
    squares = rows * cols
    total = np.empty(width, np.float32)
    top = np.empty(width, np.float32)
    chosen = np.empty(width, np.float32)
    for s in range(n):
        total[:] = 0.0
        top[:] = -np.inf
        chosen[:] = 0.0
        for q in range(squares):
            p = s * squares + q
            weight = np.float32(obs[s, q // cols, q % cols, AWAITING])
            for k in range(width):
                value = h[p, k]
                total[k] += value
                top[k] = max(top[k], value)
                chosen[k] += value * weight
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


# ---------------------------------------------------------------- Winograd F(2x2, 3x3)
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
    tile row, tile column)`` order) into ``out`` ``(16, tiles, channels)``.

    Both passes run over rows of the maps seen flat (a map row's columns and channels in one
    contiguous run), the form the compiler turns into vector instructions: about 12% faster
    than indexing the 4-d maps square by square, with the same sums in the same order."""
    n, height, width, ch = maps.shape
    ty_n, tx_n = (height - 2) // 2, (width - 2) // 2
    row = width * ch
    flat = maps.reshape(n, height, row)
    strip = np.empty((4, row), np.float32)
    t0 = 0
    for s in range(n):
        for ty in range(ty_n):
            r0 = 2 * ty
            # Bt d for the whole strip of four rows (neighbouring tiles share two columns)
            m0, m1, m2, m3 = flat[s, r0], flat[s, r0 + 1], flat[s, r0 + 2], flat[s, r0 + 3]
            s0, s1, s2, s3 = strip[0], strip[1], strip[2], strip[3]
            for q in range(row):
                d1 = m1[q]
                d2 = m2[q]
                s0[q] = m0[q] - d2
                s1[q] = d1 + d2
                s2[q] = d2 - d1
                s3[q] = d1 - m3[q]
            # (Bt d) B: each tile's four columns
            for i in range(4):
                si = strip[i]
                o0, o1, o2, o3 = out[4 * i], out[4 * i + 1], out[4 * i + 2], out[4 * i + 3]
                for tx in range(tx_n):
                    c = 2 * tx * ch
                    t = t0 + tx
                    a0, a1, a2, a3 = o0[t], o1[t], o2[t], o3[t]
                    for k in range(ch):
                        e1 = si[c + ch + k]
                        e2 = si[c + 2 * ch + k]
                        a0[k] = si[c + k] - e2
                        a1[k] = e1 + e2
                        a2[k] = e2 - e1
                        a3[k] = e1 - si[c + 3 * ch + k]
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


@nb.njit(cache=True)
def unpad(maps: np.ndarray, rows: int, cols: int, out: np.ndarray) -> None:  # pragma: no cover - compiled
    """The board part of padded ``maps`` as ``(n*rows*cols, channels)``."""
    width = maps.shape[3]
    for s in range(maps.shape[0]):
        for r in range(rows):
            for c in range(cols):
                p = (s * rows + r) * cols + c
                for k in range(width):
                    out[p, k] = maps[s, r + 1, c + 1, k]


__all__ = [
    "act_columns",
    "activate",
    "place_logits",
    "pooled_features",
    "stem_columns",
    "stem_output",
    "unpad",
    "value_heads",
    "winograd_input",
    "winograd_kernels",
    "winograd_output",
]
