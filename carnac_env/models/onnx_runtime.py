"""The policy-value network on onnxruntime (the optional ``onnx`` extra): :class:`OnnxNet`.

An opt-in CPU inference path (``az:backend=onnx`` or ``az:backend=onnx-int8``): the network of
a :class:`~carnac_env.models.PolicyValueNet` written as an ONNX graph from its numpy parameters
(:func:`onnx_graph`, the ``onnx`` package's helper API; no PyTorch) and run by onnxruntime on
one thread. The graph is :meth:`PolicyValueNet.forward
<carnac_env.models.PolicyValueNet.forward>` layer by layer:

* the int8 ``(N, rows, cols, 9)`` planes cast to float32 and transposed to NCHW; the supply
  plane's division by the board's megaliths folded into the stem's weights;
* the stem (3x3, zeros off the board), the residual blocks (``relu(x + conv2(relu(conv1(x))))``)
  and, for a network that reads the rules, the stem's response to the constant rules planes
  (:meth:`~carnac_env.models.PolicyValueNet.rules_map`) added as a constant map of the board;
* the place logits (a 1x1 convolution to 4 maps, read off as ``(row*cols + col)*4 + o``), the
  pooled vector (mean, maximum, and the features at the awaiting megalith), the respond logits
  and the value head (hidden layer, ReLU, ``tanh``).

One graph per board and supply divisor (the board's rows, columns and rules are constants of
the graph; the batch is dynamic), built on the first call for it. Two precisions:

* ``float32`` (``backend=onnx``): equal to numpy's forward to about 1e-5 on the shipped models'
  logits; about as fast as numpy's Winograd convolutions (0.85-1.05 times), 1.3-1.8 times
  numpy's default im2col (``benchmarks/onnx_inference.py``);
* ``int8`` (``backend=onnx-int8``): static QDQ quantisation of the residual blocks'
  convolutions (per-channel int8 weights, uint8 activations calibrated by their minimum and
  maximum on :data:`CALIBRATION_POSITIONS` positions of uniformly random games on the board,
  seeded: the same graph every time), which onnxruntime runs as ``QLinearConv``; the stem and
  the heads stay float32. About twice numpy Winograd's positions per CPU second, but not equal
  to the network: on the general model its logits differ by up to about 1.4 and its values by
  up to about 0.1, and the best legal move of the raw policy is numpy's on about 95% of
  positions.
"""

from __future__ import annotations

import random
import tempfile
import threading
from pathlib import Path
from typing import Any

import numpy as np

from carnac_env import _checks
from carnac_env.core.observation import AWAITING, NUM_PLANES, SUPPLY
from carnac_env.errors import CarnacError
from carnac_env.models.network import PolicyValueNet

__all__ = ["CALIBRATION_POSITIONS", "PRECISIONS", "OnnxNet", "onnx_graph", "quantized", "random_positions", "session"]

#: The precisions of :class:`OnnxNet`.
PRECISIONS = ("float32", "int8")
#: Positions the int8 graph's activation ranges are calibrated on.
CALIBRATION_POSITIONS = 1024
#: The graph's input and outputs.
INPUT, LOGITS, VALUES = "observations", "logits", "values"
#: What the graph's nodes are named that stay float32 in the int8 graph (quantising the stem,
#: whose input mixes 0/1 planes with the supply count, doubled the logit error for no speed).
FLOAT_NODES = ("stem", "place")

_INSTALL = "pip install 'carnac-env[onnx]' (onnx and onnxruntime)"


def _modules() -> tuple[Any, Any]:
    """``(onnx, onnxruntime)``, or a CarnacError saying how to install them."""
    try:
        import onnx
        import onnxruntime
    except ImportError as error:
        raise CarnacError(f"the onnx backend needs onnx and onnxruntime ({error}): {_INSTALL}") from None
    return onnx, onnxruntime


def onnx_graph(net: PolicyValueNet, board: Any, supply_scale: float | None = None) -> Any:
    """The ONNX model (an ``onnx.ModelProto``) of ``net``'s forward on ``board``.

    Args:
        net: the network.
        board: the :class:`~carnac_env.core.boards.Board` (its rows and columns, and its rules
            for a network that reads them).
        supply_scale: what the supply plane is divided by (default: the board's megaliths).

    Returns:
        The model: input ``observations`` int8 ``(N, rows, cols, 9)``; outputs ``logits``
        float32 ``(N, rows*cols*4 + 5)`` and ``values`` float32 ``(N,)``.
    """
    _modules()
    from onnx import TensorProto, helper, numpy_helper

    rows, cols, channels = board.rows, board.cols, net.channels
    scale = float(supply_scale or board.megaliths)
    p = net.params
    inits: list[Any] = []
    nodes: list[Any] = []

    def const(name: str, value: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def node(op: str, inputs: list[str], output: str, **attrs: Any) -> str:
        nodes.append(helper.make_node(op, inputs, [output], name=output, **attrs))
        return output

    def conv(x: str, name: str, weight: np.ndarray, bias: np.ndarray) -> str:
        pads = [weight.shape[2] // 2] * 4
        return node("Conv", [x, const(f"{name}.w", weight), const(f"{name}.b", bias)], name, pads=pads)

    def gemm(x: str, name: str) -> str:
        return node(
            "Gemm", [x, const(f"{name}.w", p[f"{name}.weight"]), const(f"{name}.b", p[f"{name}.bias"])], name, transB=1
        )

    x = node("Transpose", [node("Cast", [INPUT], "planes", to=TensorProto.FLOAT)], "nchw", perm=[0, 3, 1, 2])
    stem = p["stem.weight"][:, :NUM_PLANES].astype(np.float64)
    stem[:, SUPPLY] /= scale
    h = conv(x, "stem", stem.astype(np.float32), p["stem.bias"])
    if net.reads_rules:
        response = net.rules_map(board)
        h = node(
            "Add",
            [h, const("rules_map", response.reshape(rows, cols, channels).transpose(2, 0, 1)[None])],
            "stem_rules",
        )
    h = node("Relu", [h], "h0")
    for i in range(net.blocks):
        y = node("Relu", [conv(h, f"b{i}c1", p[f"blocks.{i}.conv1.weight"], p[f"blocks.{i}.conv1.bias"])], f"b{i}r1")
        y = conv(y, f"b{i}c2", p[f"blocks.{i}.conv2.weight"], p[f"blocks.{i}.conv2.bias"])
        h = node("Relu", [node("Add", [y, h], f"b{i}sum")], f"h{i + 1}")
    place = conv(h, "place", p["place.weight"], p["place.bias"])
    place = node("Transpose", [place], "place_nhwc", perm=[0, 2, 3, 1])
    place = node("Reshape", [place, const("place_shape", np.array([0, -1], np.int64))], "place_flat")
    axes = const("squares", np.array([2, 3], np.int64))
    mean = node("ReduceMean", [h, axes], "pool_mean", keepdims=0)
    top = node("ReduceMax", [h, axes], "pool_max", keepdims=0)
    bounds = [np.array([AWAITING], np.int64), np.array([AWAITING + 1], np.int64), np.array([1], np.int64)]
    awaiting = node("Slice", [x, *(const(f"awaiting{k}", v) for k, v in enumerate(bounds))], "awaiting")
    chosen = node("ReduceSum", [node("Mul", [h, awaiting], "h_awaiting"), axes], "pool_awaiting", keepdims=0)
    pooled = node("Concat", [mean, top, chosen], "pooled", axis=1)
    node("Concat", [place, gemm(pooled, "respond")], LOGITS, axis=1)
    hidden = node("Relu", [gemm(pooled, "value1")], "value1_relu")
    value = node("Tanh", [gemm(hidden, "value2")], "value_tanh")
    node("Reshape", [value, const("value_shape", np.array([-1], np.int64))], VALUES)

    graph = helper.make_graph(
        nodes,
        f"carnac_{board.name}",
        [helper.make_tensor_value_info(INPUT, TensorProto.INT8, ["N", rows, cols, NUM_PLANES])],
        [
            helper.make_tensor_value_info(LOGITS, TensorProto.FLOAT, ["N", rows * cols * 4 + 5]),
            helper.make_tensor_value_info(VALUES, TensorProto.FLOAT, ["N"]),
        ],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], producer_name="carnac_env")
    model.ir_version = 9
    return model


def session(model: Any) -> Any:
    """An onnxruntime ``InferenceSession`` of ``model`` (a ModelProto) on the CPU: one intra-op
    and one inter-op thread, sequential execution, no spinning, every graph optimisation on
    (constant folding, Conv+Add+ReLU fusion, the NCHWc layout on x86)."""
    _, ort = _modules()
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def random_positions(board: Any, count: int, seed: int = 0) -> tuple[np.ndarray, list[list[int]]]:
    """``count`` int8 observations from uniformly random games on ``board`` (seeded), each seen
    by the player to act, and each position's legal actions."""
    from carnac_env.core.game import GameState
    from carnac_env.core.observation import observation_planes

    rng = random.Random(seed)
    planes: list[np.ndarray] = []
    legal_sets: list[list[int]] = []
    while len(planes) < count:
        state = GameState(board)
        while not state.is_over and len(planes) < count:
            legal = list(state.legal_actions())
            planes.append(observation_planes(state, state.to_act))
            legal_sets.append(legal)
            state.apply(legal[int(rng.random() * len(legal))])
    return np.stack(planes), legal_sets


def quantized(model: Any, calibration: np.ndarray) -> Any:
    """The static QDQ int8 twin of ``model`` (from :func:`onnx_graph`): the residual blocks'
    convolutions with per-channel int8 weights and uint8 activations calibrated (minimum and
    maximum) on ``calibration`` (int8 observations); the nodes of :data:`FLOAT_NODES` and the
    heads stay float32."""
    onnx, _ = _modules()
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.batches = iter([{INPUT: calibration[i : i + 64]} for i in range(0, len(calibration), 64)])

        def get_next(self) -> dict[str, np.ndarray] | None:
            return next(self.batches, None)

    with tempfile.TemporaryDirectory() as folder:
        plain, prepared, out = (str(Path(folder) / name) for name in ("float32.onnx", "prepared.onnx", "int8.onnx"))
        onnx.save(model, plain)
        quant_pre_process(plain, prepared, skip_symbolic_shape=True)
        quantize_static(
            prepared,
            out,
            Reader(),
            quant_format=QuantFormat.QDQ,
            per_channel=True,
            activation_type=QuantType.QUInt8,
            weight_type=QuantType.QInt8,
            op_types_to_quantize=["Conv"],
            nodes_to_exclude=list(FLOAT_NODES),
        )
        return onnx.load(out)


class OnnxNet:
    """A :class:`~carnac_env.models.PolicyValueNet` evaluated by onnxruntime (see the module
    docstring): the same ``forward``, one graph per board built on its first call.

    Args:
        net: the network.
        precision: ``"float32"`` or ``"int8"`` (:data:`PRECISIONS`).

    Raises:
        CarnacError: onnx or onnxruntime is not installed (the ``onnx`` extra), or an unknown
            precision.
    """

    #: The search's evaluator gives every network that reads the rules the board; this one
    #: always takes it (its graphs are the board's; the int8 graph is calibrated on its games).
    reads_rules = True

    def __init__(self, net: PolicyValueNet, precision: str = "float32") -> None:
        _modules()
        self.net = net
        self.precision = _checks.choice("onnx precision", precision, PRECISIONS)
        self._sessions: dict[tuple, Any] = {}
        self._lock = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without the sessions (made again on the first call in the new process)."""
        return {"net": self.net, "precision": self.precision}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["net"], state["precision"])  # type: ignore[misc]

    def __getattr__(self, name: str) -> Any:
        """The wrapped network's attributes (``header``, ``source``, ``channels`` ...)."""
        if name == "net":  # before __init__ has set it (unpickling)
            raise AttributeError(name)
        return getattr(self.net, name)

    def forward(
        self, observations: np.ndarray, supply_scale: float | None = None, board: Any = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Logits and values for a batch of observations, as :meth:`PolicyValueNet.forward
        <carnac_env.models.PolicyValueNet.forward>` gives them (here with ``board`` needed
        unless the observations are on the model's own board).

        Raises:
            CarnacError: observations of another shape than ``(N, rows, cols, 9)``, or not on
                ``board``, or (without ``board``) not on the model's own board.
        """
        obs = np.asarray(observations)
        if obs.ndim != 4 or obs.shape[-1] != NUM_PLANES:
            raise CarnacError(f"observations of shape {obs.shape}: expected (N, rows, cols, {NUM_PLANES})")
        if board is None:
            board = self._own_board(obs.shape[1], obs.shape[2])
        if (board.rows, board.cols) != obs.shape[1:3]:
            raise CarnacError(
                f"observations of shape {obs.shape} are not of board {board.name!r} ({board.rows} x {board.cols})"
            )
        n = obs.shape[0]
        if n == 0:
            return np.empty((0, board.rows * board.cols * 4 + 5), np.float32), np.zeros(0, np.float32)
        if obs.dtype != np.int8:
            if not np.array_equal(obs, obs.astype(np.int8)):
                raise CarnacError("the onnx backend reads int8 observation planes (values -128..127)")
            obs = obs.astype(np.int8)
        scale = float(supply_scale or board.megaliths)
        logits, values = self._session(board, scale).run([LOGITS, VALUES], {INPUT: np.ascontiguousarray(obs)})
        return logits, values

    def _own_board(self, rows: int, cols: int) -> Any:
        """The model's own board, for observations of its shape."""
        from carnac_env.core.boards import Board

        own = self.net.header["board"]
        if (rows, cols) != (self.net.rows, self.net.cols):
            raise CarnacError(
                f"the onnx backend needs the board of observations of {rows} x {cols} squares "
                f"(the model's own board {own['name']!r} is {self.net.rows} x {self.net.cols})"
            )
        return Board(
            own["name"], rows, cols, self.net.megaliths, int(own["min_dolmen"]), bool(own.get("last_tilt", True))
        )

    def _session(self, board: Any, scale: float) -> Any:
        """The session of ``board``'s graph (built on the first call for it)."""
        key = (board.rows, board.cols, board.megaliths, board.min_dolmen, bool(board.last_tilt), scale)
        found = self._sessions.get(key)
        if found is None:
            with self._lock:
                found = self._sessions.get(key)
                if found is None:
                    model = onnx_graph(self.net, board, scale)
                    if self.precision == "int8":
                        calibration, _ = random_positions(board, CALIBRATION_POSITIONS, seed=0)
                        model = quantized(model, calibration)
                    found = self._sessions[key] = session(model)
        return found
