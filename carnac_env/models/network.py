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
from typing import Any, NamedTuple

import numpy as np

from carnac_env import _checks
from carnac_env.core.boards import MAX_MEGALITHS, MAX_SIDE
from carnac_env.core.observation import NUM_PLANES
from carnac_env.errors import CarnacError
from carnac_env.models import _kernels

#: The ``format`` field of a model file's header.
FORMAT = "carnac-az"
#: The versions of the model layout this package reads; it writes the last. Version 2 added
#: the ownership head, version 3 the rules inputs and the dolmen-count head.
MODEL_VERSIONS = (1, 2, 3)
MODEL_VERSION = MODEL_VERSIONS[-1]

#: Bounds on an architecture (what a model file may ask this package to allocate).
LIMITS = {"channels": (1, 256), "blocks": (0, 32), "hidden": (1, 1024)}

#: The rules a rules-conditioned network reads (architecture ``rules: true``), in the order of
#: its extra input planes: constant planes over the board, appended to the 9 observation
#: planes inside the network (the public observation does not change). Each is scaled to about
#: 0..1 on the built-in boards: ``board`` 1 on every square (so the stem sees the edges),
#: ``min_dolmen`` ``(min_dolmen - 3) / 2``, ``last_tilt`` 0 or 1, ``megaliths`` the supply at
#: the start over 56, ``rows`` and ``cols`` over 16.
RULES_INPUTS = ("board", "min_dolmen", "last_tilt", "megaliths", "rows", "cols")


class Architecture(NamedTuple):
    """The shape of a network, as a model header's ``architecture`` gives it.

    Attributes:
        channels, blocks, hidden: feature maps per layer, residual blocks, value head units.
        ownership: with the ownership head (training only: each square's final colour).
        rules: with the rules inputs (:data:`RULES_INPUTS`): one network for many rules.
        dolmens: with the dolmen-count head (training only: each side's final dolmens).
    """

    channels: int
    blocks: int
    hidden: int
    ownership: bool = False
    rules: bool = False
    dolmens: bool = False

    def as_header(self) -> dict[str, Any]:
        """The header's ``architecture`` field."""
        return self._asdict()


def rules_vector(rows: int, cols: int, megaliths: int, min_dolmen: int, last_tilt: bool) -> np.ndarray:
    """The values of the :data:`RULES_INPUTS` planes for a board, float32 ``(6,)``."""
    return np.asarray(
        [1.0, (min_dolmen - 3) / 2, float(last_tilt), megaliths / 56, rows / 16, cols / 16], dtype=np.float32
    )


def parameter_shapes(
    channels: int, blocks: int, hidden: int, ownership: bool = False, rules: bool = False, dolmens: bool = False
) -> dict[str, tuple[int, ...]]:
    """The name and shape of every parameter of the network (PyTorch's naming and layout)."""
    inputs = NUM_PLANES + (len(RULES_INPUTS) if rules else 0)
    shapes: dict[str, tuple[int, ...]] = {
        "stem.weight": (channels, inputs, 3, 3),
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
    if dolmens:
        shapes["dolmens.weight"] = (2, 3 * channels)
        shapes["dolmens.bias"] = (2,)
    return shapes


def architecture_of(header: dict[str, Any], source: str) -> Architecture:
    """The :class:`Architecture` of a header's ``architecture``, checked against :data:`LIMITS`;
    a CarnacError naming ``source`` otherwise."""
    arch = header.get("architecture") if isinstance(header, dict) else None
    if not isinstance(arch, dict):
        raise CarnacError(f"model {source}: its header has no 'architecture' (channels, blocks, hidden)")
    values = []
    for key, (low, high) in LIMITS.items():
        value = arch.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise CarnacError(f"model {source}: architecture {key}={value!r}; expected a whole number in {low}..{high}")
        values.append(value)
    flags = []
    for key in ("ownership", "rules", "dolmens"):
        flag = arch.get(key, False)
        if not isinstance(flag, bool):
            raise CarnacError(f"model {source}: architecture {key}={flag!r}; expected true or false")
        flags.append(flag)
    return Architecture(*values, *flags)


#: How many blocks, in all threads, now run inside :func:`blas_single_thread`, and the limiter
#: the first of them set (None where BLAS already ran one thread). BLAS's thread count is one
#: setting for the whole process, so it is held while any thread is inside and restored when
#: the last one leaves: a thread that restored it on its own way out would let another's next
#: products run on several threads, which OpenBLAS may sum in another order.
_HELD = {"count": 0, "limiter": None}
_HELD_LOCK = threading.Lock()


def blas_single_thread() -> contextlib.AbstractContextManager[None]:
    """Run the block with numpy's BLAS on one thread (threadpoolctl), then restore it.

    Re-entrant and cheap when nested (the search holds it for a whole run; each network call
    inside costs a counter update under a lock), safe across threads (the setting is the
    process's: the first block to enter sets it, the last to leave restores it), and a no-op
    when BLAS already runs one thread (``OPENBLAS_NUM_THREADS=1``: nothing is set or restored).
    Without threadpoolctl's libraries found, it does nothing.
    """
    return _SingleThread()


class _SingleThread:
    """:func:`blas_single_thread`'s context manager."""

    __slots__ = ()

    def __enter__(self) -> None:
        with _HELD_LOCK:
            if _HELD["count"] == 0 and _blas_threaded():
                limiter = _controller().limit(limits=1, user_api="blas")
                limiter.__enter__()
                _HELD["limiter"] = limiter
            _HELD["count"] += 1

    def __exit__(self, *exc: object) -> None:
        with _HELD_LOCK:
            _HELD["count"] -= 1
            limiter = _HELD["limiter"]
            if _HELD["count"] == 0 and limiter is not None:
                _HELD["limiter"] = None
                limiter.__exit__(None, None, None)


_CONTROLLER: Any = None
_BLAS: Any = None


def _controller() -> Any:
    global _CONTROLLER
    if _CONTROLLER is None:
        from threadpoolctl import ThreadpoolController

        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER


def _blas_threaded() -> bool:
    """Whether a loaded BLAS runs more than one thread."""
    return any(lib.get_num_threads() not in (None, 1) for lib in _blas_libraries())


def _blas_libraries() -> list[Any]:
    """threadpoolctl's controllers of the loaded BLAS libraries (found once)."""
    global _BLAS
    if _BLAS is None:
        _BLAS = list(_controller().select(user_api="blas").lib_controllers)
    return _BLAS


#: How :meth:`PolicyValueNet.forward` computes the residual blocks' 3x3 convolutions:
#: ``"im2col"`` (the default: the definition's own products and additions, so the outputs
#: equal it to the last bit or two) or ``"winograd"`` (Winograd F(2x2, 3x3): about 1.6 times
#: as fast from batch 8 up on one core, as accurate in float32, but rounded differently: the
#: outputs differ from the definition's by up to about 3e-7 times their magnitude, so 1e-6..5e-5
#: on the shipped models' logits). See :mod:`carnac_env.models._kernels`.
CONVOLUTIONS = ("im2col", "winograd")

#: Squares per chunk of a batch, per convolution: a chunk's buffers stay in the core's cache.
CHUNK_SQUARES = {"im2col": 512, "winograd": 1024}


class _Workspace:
    """The buffers of one chunk shape, allocated once and reused by every call (per thread).
    Zeroed once where the kernels never write (the slots off the board, see _kernels)."""

    def __init__(self, n: int, rows: int, cols: int, channels: int, convolution: str) -> None:
        m = n * rows * cols
        self.stem = np.zeros((m, 9 * NUM_PLANES), np.float32)
        self.raw = np.empty((m, channels), np.float32)
        if convolution == "im2col":
            self.h = np.empty((m, channels), np.float32)
            self.columns = np.zeros((m, 9 * channels), np.float32)
            return
        tiles_down, tiles_across = (rows + 1) // 2, (cols + 1) // 2
        tiles = n * tiles_down * tiles_across
        padded = (n, 2 * tiles_down + 2, 2 * tiles_across + 2, channels)
        self.maps = np.zeros(padded, np.float32)
        self.inner = np.zeros(padded, np.float32)
        # flat: the first 16*t*channels floats are a contiguous (16, t, channels) for any t
        self.transformed = np.empty(16 * tiles * channels, np.float32)
        self.products = np.empty(16 * tiles * channels, np.float32)
        self.tiles_per_position = tiles_down * tiles_across


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
        #: ``"sha256:<hex>"`` of the model file bytes this network was made from
        #: (:func:`carnac_env.models.load`), or None for one made in memory.
        self.sha256: str | None = None
        arch = self.architecture = architecture_of(header, source)
        channels, blocks, hidden, ownership = arch.channels, arch.blocks, arch.hidden, arch.ownership
        board = header.get("board")
        if not isinstance(board, dict):
            raise CarnacError(
                f"model {source}: its header has no 'board' (name, rows, cols, megaliths, min_dolmen, last_tilt)"
            )
        missing_fields = [key for key in ("name", "rows", "cols", "megaliths", "min_dolmen") if key not in board]
        if missing_fields:
            raise CarnacError(f"model {source}: its header's 'board' lacks {', '.join(missing_fields)}")
        if not isinstance(board["name"], str):
            raise CarnacError(f"model {source}: board name={board['name']!r}; expected text")
        if not isinstance(board.get("last_tilt", True), bool):
            raise CarnacError(f"model {source}: board last_tilt={board['last_tilt']!r}; expected true or false")
        self.rows = _checks.whole(f"model {source}: board rows", board["rows"], 1, MAX_SIDE)
        self.cols = _checks.whole(f"model {source}: board cols", board["cols"], 1, MAX_SIDE)
        # the default divisor of the supply plane: 0 would make every output NaN
        self.megaliths = _checks.whole(f"model {source}: board megaliths", board["megaliths"], 1, MAX_MEGALITHS)
        _checks.whole(f"model {source}: board min_dolmen", board["min_dolmen"], 1, self.rows * self.cols)
        self.header = dict(header, format=FORMAT, version=MODEL_VERSION)
        self.channels, self.blocks, self.hidden, self.has_ownership = channels, blocks, hidden, ownership
        #: Whether the network reads the board's rules (:data:`RULES_INPUTS`) as inputs.
        self.reads_rules = arch.rules
        expected = parameter_shapes(*arch)
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
        # inference layouts: 3x3 kernels as (9*in, out) matrices in (dy, dx, in) order, and
        # the blocks' Winograd transforms (see _kernels)
        p = self.params
        matrices = {
            name: np.ascontiguousarray(p[name].transpose(2, 3, 1, 0).reshape(-1, shape[0]))
            for name, shape in expected.items()
            if name.startswith("blocks.") and name.endswith(".weight")
        }
        # the stem's product reads the 9 observation planes; the rules planes are constant over
        # the board, so their convolution is a fixed map per board, added after it (_rules_map)
        self._stem = np.ascontiguousarray(p["stem.weight"][:, :NUM_PLANES].transpose(2, 3, 1, 0).reshape(-1, channels))
        self._rules_weight = p["stem.weight"][:, NUM_PLANES:]
        self._rules_maps: dict[tuple, np.ndarray] = {}
        self._blocks = [
            (
                matrices[f"blocks.{i}.conv1.weight"],
                p[f"blocks.{i}.conv1.bias"],
                matrices[f"blocks.{i}.conv2.weight"],
                p[f"blocks.{i}.conv2.bias"],
            )
            for i in range(blocks)
        ]
        self._winograd: list[tuple[np.ndarray, np.ndarray]] | None = None
        self._convolution = "im2col"
        self._place = np.ascontiguousarray(p["place.weight"][:, :, 0, 0].T)
        self._respond = np.ascontiguousarray(p["respond.weight"].T)
        self._value1 = np.ascontiguousarray(p["value1.weight"].T)
        self._value2 = np.ascontiguousarray(p["value2.weight"].T)
        self._value2_bias = p["value2.bias"]
        self._local = threading.local()

    def __getstate__(self) -> dict[str, Any]:
        """Pickled (to a self-play worker process, by the trainer) without the per-thread
        buffers, which each process makes again on its first call."""
        state = dict(self.__dict__)
        del state["_local"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._local = threading.local()

    @property
    def board_name(self) -> str:
        """The name of the board the model was trained on."""
        return str(self.header["board"]["name"])

    def board_key(self) -> tuple[int, int, int, int]:
        """``(rows, cols, megaliths, min_dolmen)`` of the model's board."""
        return (self.rows, self.cols, self.megaliths, int(self.header["board"]["min_dolmen"]))

    @property
    def trained_rules(self) -> dict[str, Any]:
        """The rules the model was trained under, from its header: ``board`` (the first or only
        board) and, for a model trained on several, ``boards`` (a description of the mix)."""
        return {"board": dict(self.header["board"]), "boards": self.header.get("boards")}

    def forward(
        self, observations: np.ndarray, supply_scale: float | None = None, board: Any = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Logits and values for a batch of observations.

        Args:
            observations: ``(N, rows, cols, 9)`` planes seen by the player to act (any board size).
            supply_scale: what the supply plane is divided by (default: ``board``'s megaliths,
                else the model board's).
            board: the :class:`~carnac_env.core.boards.Board` the positions are on. A network that
                reads the rules (:attr:`reads_rules`) takes them from it; without it, from the
                model's own board (its header), with the observations' rows and columns.

        Returns:
            ``(logits, values)``: ``(N, rows*cols*4 + 5)`` float32 logits in the action
            encoding's order (illegal actions included: mask them), and ``(N,)`` float32
            values in ``[-1, 1]`` for the player to act.
        """
        obs = np.asarray(observations)
        if obs.ndim != 4 or obs.shape[-1] != NUM_PLANES:
            raise CarnacError(f"observations of shape {obs.shape}: expected (N, rows, cols, {NUM_PLANES})")
        if board is not None and (board.rows, board.cols) != obs.shape[1:3]:
            raise CarnacError(
                f"observations of shape {obs.shape} are not of board {board.name!r} ({board.rows} x {board.cols})"
            )
        scale = float(supply_scale or (board.megaliths if board is not None else self.megaliths))
        rules_map = self._rules_map(obs.shape[1], obs.shape[2], board) if self.reads_rules else None
        with blas_single_thread():
            return self._forward(obs, scale, rules_map)

    def rules_map(self, board: Any) -> np.ndarray:
        """The stem's response to ``board``'s rules planes, the constant map that :meth:`forward`
        adds after the stem of a network that reads the rules (:attr:`reads_rules`):
        ``(rows*cols, channels)`` float32, kept per board; not to be written to. Other runtimes
        of the same network (onnx, a jax port) add this very map."""
        return self._rules_map(board.rows, board.cols, board)

    def _rules_map(self, rows: int, cols: int, board: Any) -> np.ndarray:
        """The stem's response to the rules planes of ``board`` (or of the model's own rules on a
        ``rows x cols`` board): ``(rows*cols, channels)`` float32, kept per board."""
        if board is not None:
            rules = (rows, cols, board.megaliths, board.min_dolmen, bool(board.last_tilt))
        else:
            own = self.header["board"]
            rules = (rows, cols, self.megaliths, int(own["min_dolmen"]), bool(own.get("last_tilt", True)))
        found = self._rules_maps.get(rules)
        if found is None:
            found = self._rules_maps[rules] = rules_response(self._rules_weight, rules_vector(*rules), rows, cols)
        return found

    @property
    def convolution(self) -> str:
        """How :meth:`forward` computes the 3x3 convolutions: one of :data:`CONVOLUTIONS`
        (``"im2col"`` unless set)."""
        return self._convolution

    @convolution.setter
    def convolution(self, value: str) -> None:
        value = _checks.choice("convolution", value, CONVOLUTIONS)
        if value == "winograd" and self._winograd is None:
            self._winograd = [
                (
                    _kernels.winograd_kernels(self.params[f"blocks.{i}.{conv}.weight"]),
                    self.params[f"blocks.{i}.{conv}.bias"],
                )
                for i in range(self.blocks)
                for conv in ("conv1", "conv2")
            ]
        self._convolution = value

    def _workspace(self, n: int, rows: int, cols: int, convolution: str) -> _Workspace:
        spaces = getattr(self._local, "spaces", None)
        if spaces is None:
            spaces = self._local.spaces = {}
        key = (n, rows, cols, convolution)
        space = spaces.get(key)
        if space is None:
            space = spaces[key] = _Workspace(n, rows, cols, self.channels, convolution)
        return space

    def _forward(
        self, obs: np.ndarray, supply_scale: float, rules_map: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray]:
        if obs.dtype != np.int8 and obs.dtype != np.float32:
            obs = obs.astype(np.float32)
        obs = np.ascontiguousarray(obs)
        n, rows, cols, _ = obs.shape
        squares = rows * cols
        logits = np.empty((n, squares * 4 + 5), np.float32)
        pooled = np.empty((n, 3 * self.channels), np.float32)
        if n == 0 or squares == 0:
            return logits, np.zeros(n, np.float32)
        convolution = self._convolution
        chunk = max(1, CHUNK_SQUARES[convolution] // squares)
        space = self._workspace(chunk, rows, cols, convolution)
        trunk = self._trunk_im2col if convolution == "im2col" else self._trunk_winograd
        p = self.params
        # the last activations of the whole batch: the place product is then the definition's
        h_all, place = self._batch_buffers(n * squares)
        for start in range(0, n, chunk):
            stop = min(n, start + chunk)
            trunk(obs[start:stop], space, supply_scale, rules_map, h_all[start * squares : stop * squares])
        np.matmul(h_all, self._place, out=place)
        _kernels.place_logits(place, p["place.bias"], squares, logits)
        _kernels.pooled_features(h_all, obs, pooled)
        # the heads on the pooled vectors of the whole batch
        respond = pooled @ self._respond
        hidden = pooled @ self._value1
        _kernels.value_heads(respond, p["respond.bias"], hidden, p["value1.bias"], logits, squares * 4)
        values = np.matmul(hidden, self._value2)[:, 0]
        values += self._value2_bias
        np.tanh(values, out=values)
        return logits, values

    def _batch_buffers(self, m: int) -> tuple[np.ndarray, np.ndarray]:
        """``(m, channels)`` and ``(m, 4)`` buffers, kept per thread as large as the largest batch."""
        held = getattr(self._local, "batch", None)
        if held is None or held[0].shape[0] < m:
            held = self._local.batch = (np.empty((m, self.channels), np.float32), np.empty((m, 4), np.float32))
        return held[0][:m], held[1][:m]

    def _trunk_im2col(
        self, obs: np.ndarray, space: _Workspace, supply_scale: float, rules_map: np.ndarray | None, out: np.ndarray
    ) -> None:
        """The trunk's last activations of a chunk into ``out`` ``(m, channels)``, by im2col products."""
        rows, cols = obs.shape[1], obs.shape[2]
        m = out.shape[0]
        stem, raw, h, columns = space.stem[:m], space.raw[:m], space.h[:m], space.columns[:m]
        _kernels.stem_columns(obs, supply_scale, stem)
        np.matmul(stem, self._stem, out=raw)
        if rules_map is not None:
            raw.reshape(-1, rows * cols, self.channels)[:] += rules_map
        bias, residual, add = self.params["stem.bias"], raw, False
        for conv1, bias1, conv2, bias2 in self._blocks:
            # the block input relu(raw + bias [+ residual]) into h, and its columns
            _kernels.act_columns(raw, bias, residual, add, h, True, rows, cols, columns)
            np.matmul(columns, conv1, out=raw)
            _kernels.act_columns(raw, bias1, raw, False, raw, False, rows, cols, columns)
            np.matmul(columns, conv2, out=raw)
            bias, residual, add = bias2, h, True
        _kernels.activate(raw, bias, residual, add, out)

    def _trunk_winograd(
        self, obs: np.ndarray, space: _Workspace, supply_scale: float, rules_map: np.ndarray | None, out: np.ndarray
    ) -> None:
        """The trunk's last activations of a chunk into ``out`` ``(m, channels)``, by Winograd convolutions."""
        k, rows, cols = obs.shape[:3]
        m = out.shape[0]
        tiles, width = k * space.tiles_per_position, self.channels
        stem, raw, maps, inner = space.stem[:m], space.raw[:m], space.maps[:k], space.inner[:k]
        transformed = space.transformed[: 16 * tiles * width].reshape(16, tiles, width)
        products = space.products[: 16 * tiles * width].reshape(16, tiles, width)
        _kernels.stem_columns(obs, supply_scale, stem)
        np.matmul(stem, self._stem, out=raw)
        if rules_map is not None:
            raw.reshape(-1, rows * cols, width)[:] += rules_map
        _kernels.stem_output(raw, self.params["stem.bias"], rows, cols, maps)
        assert self._winograd is not None
        for (u1, bias1), (u2, bias2) in zip(self._winograd[::2], self._winograd[1::2]):
            _kernels.winograd_input(maps, transformed)
            np.matmul(transformed, u1, out=products)
            _kernels.winograd_output(products, bias1, maps, False, rows, cols, inner)
            _kernels.winograd_input(inner, transformed)
            np.matmul(transformed, u2, out=products)
            _kernels.winograd_output(products, bias2, maps, True, rows, cols, maps)
        _kernels.unpad(maps, rows, cols, out)


def rules_response(weight: np.ndarray, values: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """The 3x3 convolution (zeros off the board) of constant planes of ``values`` over a
    ``rows x cols`` board with ``weight`` ``(channels, planes, 3, 3)``: ``(rows*cols, channels)``
    float32, what the rules planes add to the stem's product at every square."""
    channels = weight.shape[0]
    taps = np.einsum("okyx,k->yxo", weight.astype(np.float64), values.astype(np.float64))
    inside = np.zeros((rows + 2, cols + 2))
    inside[1:-1, 1:-1] = 1.0
    out = np.zeros((rows, cols, channels))
    for dy in range(3):
        for dx in range(3):
            out += inside[dy : dy + rows, dx : dx + cols, None] * taps[dy, dx]
    return out.reshape(rows * cols, channels).astype(np.float32)
