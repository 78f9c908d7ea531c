"""The policy-value network in numpy: :class:`PolicyValueNet`.

The network reads the 9 observation planes of the player to act and returns a logit for every
action and a value in ``[-1, 1]`` (the expected result for that player). It is a small residual
convolutional network, fully convolutional so that one model runs on any board size:

* a 3x3 convolution from the 9 planes (the supply plane divided by the board's megaliths)
  to ``channels`` feature maps, then ``blocks`` residual blocks of two 3x3 convolutions;
* the **place** logits: a 1x1 convolution to 4 maps, one per orientation, which read off in
  the action encoding's order ``(row*cols + col)*4 + orientation``;
* a pooled vector: the mean and the maximum of every feature map over the board, and the
  features at the megalith awaiting a tilt decision (plane 4 as a selector);
* the **respond** logits (tilt north, east, south, west, decline): a linear layer on it;
* the **value**: a hidden layer on it, then ``tanh``;
* optionally (``ownership`` in the architecture) an **ownership** head used only in training:
  a 1x1 convolution to 3 maps, the predicted final state of each square (the player's colour,
  the opponent's, empty). It teaches the trunk what the end of the game looks like; play
  never reads it.

Inference is a few numpy matrix products (each 3x3 convolution one product over an im2col
matrix), run with one BLAS thread (:func:`blas_single_thread`): on a small or busy machine
OpenBLAS's threads fight over these small products (measured 10-30x slower per call under
load). Neither PyTorch nor JAX is imported here; the trainer's PyTorch twin
(:mod:`carnac_env.train.model`) has the same parameter names, and a test checks that both give
the same outputs.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np

from carnac_env.core.observation import AWAITING, NUM_PLANES, SUPPLY
from carnac_env.errors import CarnacError

#: The ``format`` field of a model file's header.
FORMAT = "carnac-az"
#: The versions of the model layout this package reads; it writes the last.
MODEL_VERSIONS = (1, 2)
MODEL_VERSION = MODEL_VERSIONS[-1]

#: Bounds on an architecture (what a model file may ask this package to allocate).
LIMITS = {"channels": (1, 256), "blocks": (0, 32), "hidden": (1, 1024)}


def parameter_shapes(channels: int, blocks: int, hidden: int, ownership: bool = False) -> dict[str, tuple[int, ...]]:
    """The name and shape of every parameter of the network (PyTorch's naming and layout)."""
    shapes: dict[str, tuple[int, ...]] = {
        "stem.weight": (channels, NUM_PLANES, 3, 3),
        "stem.bias": (channels,),
    }
    for i in range(blocks):
        for conv in ("conv1", "conv2"):
            shapes[f"blocks.{i}.{conv}.weight"] = (channels, channels, 3, 3)
            shapes[f"blocks.{i}.{conv}.bias"] = (channels,)
    shapes.update(
        {
            "place.weight": (4, channels, 1, 1),
            "place.bias": (4,),
            "respond.weight": (5, 3 * channels),
            "respond.bias": (5,),
            "value1.weight": (hidden, 3 * channels),
            "value1.bias": (hidden,),
            "value2.weight": (1, hidden),
            "value2.bias": (1,),
        }
    )
    if ownership:
        shapes["ownership.weight"] = (3, channels, 1, 1)
        shapes["ownership.bias"] = (3,)
    return shapes


def architecture_of(header: dict[str, Any], source: str) -> tuple[int, int, int, bool]:
    """``(channels, blocks, hidden, ownership)`` from a header's ``architecture``, checked
    against :data:`LIMITS`; a CarnacError naming ``source`` otherwise."""
    arch = header.get("architecture") if isinstance(header, dict) else None
    if not isinstance(arch, dict):
        raise CarnacError(f"model {source}: its header has no 'architecture' (channels, blocks, hidden)")
    values = []
    for key, (low, high) in LIMITS.items():
        value = arch.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise CarnacError(f"model {source}: architecture {key}={value!r}; expected a whole number in {low}..{high}")
        values.append(value)
    ownership = arch.get("ownership", False)
    if not isinstance(ownership, bool):
        raise CarnacError(f"model {source}: architecture ownership={ownership!r}; expected true or false")
    return values[0], values[1], values[2], ownership


_LOCAL = threading.local()


@contextlib.contextmanager
def blas_single_thread() -> Iterator[None]:
    """Run the block with numpy's BLAS on one thread (threadpoolctl), then restore it.

    Re-entrant and cheap when nested (the search holds it for a whole run; each network call
    inside costs nothing more). Without threadpoolctl's libraries found, it does nothing.
    """
    depth = getattr(_LOCAL, "depth", 0)
    if depth:
        _LOCAL.depth = depth + 1
        try:
            yield
        finally:
            _LOCAL.depth -= 1
        return
    _LOCAL.depth = 1
    try:
        with _controller().limit(limits=1, user_api="blas"):
            yield
    finally:
        _LOCAL.depth = 0


_CONTROLLER: Any = None


def _controller() -> Any:
    global _CONTROLLER
    if _CONTROLLER is None:
        from threadpoolctl import ThreadpoolController

        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER


def _conv3x3(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """A 3x3 convolution with zero padding on ``(N, R, C, Cin)`` maps; ``weight`` is the
    ``(9*Cin, Cout)`` matrix prepared by :class:`PolicyValueNet`."""
    n, rows, cols, cin = x.shape
    padded = np.zeros((n, rows + 2, cols + 2, cin), dtype=np.float32)
    padded[:, 1:-1, 1:-1] = x
    columns = np.empty((n, rows, cols, 3, 3, cin), dtype=np.float32)
    for dy in range(3):
        for dx in range(3):
            columns[:, :, :, dy, dx] = padded[:, dy : dy + rows, dx : dx + cols]
    out = columns.reshape(n * rows * cols, 9 * cin) @ weight
    out += bias
    return out.reshape(n, rows, cols, -1)


class PolicyValueNet:
    """The policy-value network in numpy: evaluate observations.

    Args:
        header: the model's description: ``board`` (name, rows, cols, megaliths, min_dolmen,
            last_tilt), ``architecture`` (channels, blocks, hidden, optionally ownership), and
            optionally ``training`` (how it was made). ``format`` and ``version`` are set here.
        params: every array of :func:`parameter_shapes`, by name (float32, finite).
        source: how messages name the model (a file name).

    Raises:
        CarnacError: a missing, unexpected, misshapen or non-finite parameter, or a header
            without the fields above.
    """

    def __init__(self, header: dict[str, Any], params: dict[str, np.ndarray], source: str = "<memory>") -> None:
        self.source = source
        channels, blocks, hidden, ownership = architecture_of(header, source)
        try:
            board = header["board"]
            self.rows, self.cols = int(board["rows"]), int(board["cols"])
            self.megaliths = int(board["megaliths"])
            int(board["min_dolmen"])
            str(board["name"])
        except (KeyError, TypeError, ValueError, OverflowError) as err:
            raise CarnacError(
                f"model {source}: its header's 'board' lacks {err} (expected name, rows, cols, megaliths, min_dolmen)"
            ) from None
        self.header = dict(header, format=FORMAT, version=MODEL_VERSION)
        self.channels, self.blocks, self.hidden, self.has_ownership = channels, blocks, hidden, ownership
        expected = parameter_shapes(channels, blocks, hidden, ownership)
        missing = sorted(set(expected) - set(params))
        if missing:
            raise CarnacError(f"model {source}: parameters {missing} are missing (expected {sorted(expected)})")
        extra = sorted(set(params) - set(expected))
        if extra:
            raise CarnacError(f"model {source}: unexpected parameters {extra} for this architecture")
        self.params: dict[str, np.ndarray] = {}
        for name, shape in expected.items():
            value = np.asarray(params[name])
            if value.dtype.kind != "f":
                raise CarnacError(f"model {source}: parameter {name} has dtype {value.dtype}, expected float32")
            value = value.astype(np.float32)
            if value.shape != shape:
                raise CarnacError(f"model {source}: parameter {name} has shape {value.shape}, expected {shape}")
            if not np.isfinite(value).all():
                raise CarnacError(f"model {source}: parameter {name} holds NaN or infinite values")
            self.params[name] = value
        # inference layouts: 3x3 kernels as (9*Cin, Cout) matrices in (dy, dx, cin) order
        p = self.params
        self._convs = {}
        for name, shape in expected.items():
            if name.endswith(".weight") and len(shape) == 4 and shape[2] == 3:
                w = p[name]
                self._convs[name] = np.ascontiguousarray(w.transpose(2, 3, 1, 0).reshape(-1, w.shape[0]))
        self._place = np.ascontiguousarray(p["place.weight"][:, :, 0, 0].T)
        self._respond = np.ascontiguousarray(p["respond.weight"].T)
        self._value1 = np.ascontiguousarray(p["value1.weight"].T)
        self._value2 = np.ascontiguousarray(p["value2.weight"].T)

    @property
    def board_name(self) -> str:
        """The name of the board the model was trained on."""
        return str(self.header["board"]["name"])

    def board_key(self) -> tuple[int, int, int, int]:
        """``(rows, cols, megaliths, min_dolmen)`` of the model's board."""
        return (self.rows, self.cols, self.megaliths, int(self.header["board"]["min_dolmen"]))

    def forward(self, observations: np.ndarray, supply_scale: float | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Logits and values for a batch of observations.

        Args:
            observations: ``(N, rows, cols, 9)`` planes seen by the player to act (any board size).
            supply_scale: what the supply plane is divided by (default: the model board's megaliths).

        Returns:
            ``(logits, values)``: ``(N, rows*cols*4 + 5)`` float32 logits in the action
            encoding's order (illegal actions included: mask them), and ``(N,)`` float32
            values in ``[-1, 1]`` for the player to act.
        """
        obs = np.asarray(observations)
        if obs.ndim != 4 or obs.shape[-1] != NUM_PLANES:
            raise CarnacError(f"observations of shape {obs.shape}: expected (N, rows, cols, {NUM_PLANES})")
        with blas_single_thread():
            return self._forward(obs, float(supply_scale or self.megaliths))

    def _forward(self, obs: np.ndarray, supply_scale: float) -> tuple[np.ndarray, np.ndarray]:
        x = obs.astype(np.float32)
        x[..., SUPPLY] /= supply_scale
        n, rows, cols, _ = x.shape
        p = self.params
        h = np.maximum(_conv3x3(x, self._convs["stem.weight"], p["stem.bias"]), 0.0)
        for i in range(self.blocks):
            y = np.maximum(_conv3x3(h, self._convs[f"blocks.{i}.conv1.weight"], p[f"blocks.{i}.conv1.bias"]), 0.0)
            y = _conv3x3(y, self._convs[f"blocks.{i}.conv2.weight"], p[f"blocks.{i}.conv2.bias"])
            h = np.maximum(h + y, 0.0)
        place = h.reshape(n * rows * cols, self.channels) @ self._place + p["place.bias"]
        flat = h.reshape(n, rows * cols, self.channels)
        awaiting = x[..., AWAITING].reshape(n, rows * cols, 1)
        pooled = np.concatenate([flat.mean(axis=1), flat.max(axis=1), (flat * awaiting).sum(axis=1)], axis=1)
        respond = pooled @ self._respond + p["respond.bias"]
        hidden = np.maximum(pooled @ self._value1 + p["value1.bias"], 0.0)
        values = np.tanh(hidden @ self._value2 + p["value2.bias"])[:, 0]
        logits = np.concatenate([place.reshape(n, rows * cols * 4), respond], axis=1)
        return logits.astype(np.float32), values.astype(np.float32)
