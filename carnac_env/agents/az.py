"""``az``: AlphaZero-style search (PUCT) over a policy-value network, run with numpy alone.

The network (:class:`PolicyValueNet`) reads the 9 observation planes of the player to act
and returns a logit for every action and a value in ``[-1, 1]`` (the expected result for
that player). It is a small residual convolutional network:

* a 3x3 convolution from the 9 planes (the supply plane divided by the board's megaliths)
  to ``channels`` feature maps, then ``blocks`` residual blocks of two 3x3 convolutions;
* the **place** logits: a 1x1 convolution to 4 maps, one per orientation, which read off
  in the action encoding's order ``(row*cols + col)*4 + orientation``;
* a pooled vector: the mean and the maximum of every feature map over the board, and the
  features at the megalith awaiting a tilt decision (plane 4 as a selector);
* the **respond** logits (tilt north, east, south, west, decline): a linear layer on it;
* the **value**: a hidden layer on it, then ``tanh``.

Inference is a few numpy matrix products (3x3 convolutions as an im2col product); neither
PyTorch nor JAX is imported here, so the shipped models play after a plain install. The
trainer (:mod:`carnac_env.train`) builds the same network in PyTorch with the same
parameter names, and a test checks that both give the same outputs.

**The search.** Each simulation descends from the root by PUCT,
``Q(s,a) + c * P(s,a) * sqrt(N(s)) / (1 + N(s,a))``, to a position not yet evaluated,
evaluates it with the network (a finished game is scored by the rules instead), and backs
the value up the path. **Turn order:** in Carnac the same player may act twice in a row
(the tilter places next; after a decline the placer places again), so the search never
assumes that turns alternate. Every node records the player who acts there, ``Q(s,a)`` is
kept from that player's point of view, and a backed-up value changes sign only where the
player to act changes along the path (:func:`backup`).

Options (spec ``az:sims=200:c=1.5:model=PATH``):

* ``sims``: simulations per move (default 300: about two thirds of the default ``mcts``'s
  time per move, benchmarks/az_move_time.py); ``sims=0`` plays the raw policy (the
  legal action with the highest network logit, no search);
* ``c``: the PUCT exploration constant (default 1.5);
* ``model``: a model file (``.npz`` written by :meth:`PolicyValueNet.save`) or the name of
  a shipped model (``small``, ``petit_menec``); by default the shipped model for the game's
  board, or, on a board without its own model, the first shipped of :data:`FALLBACK_MODELS`
  (``small`` first: the network is fully convolutional and plays on any board, but it was
  not trained there).

The move is the most visited root action (ties: the higher prior, then the lower action
number), so the agent is deterministic: the same position gives the same move.
"""

from __future__ import annotations

import json
import math
import os
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from carnac_env.agents.base import SearchAgent, register
from carnac_env.core.game import OVER, GameState
from carnac_env.core.observation import AWAITING, NUM_PLANES, SUPPLY, observation_planes
from carnac_env.errors import CarnacError

__all__ = [
    "FORMAT",
    "MODEL_VERSION",
    "AZAgent",
    "Node",
    "PolicyValueNet",
    "backup",
    "model_path",
    "run_search",
    "shipped_models",
]

#: The ``format`` field of a model file's header.
FORMAT = "carnac-az"
#: The version of the model file layout this module reads and writes.
MODEL_VERSION = 1
#: Where the shipped models live.
MODELS_DIR = Path(__file__).resolve().parent.parent / "models"
#: The shipped models that play boards without one of their own, in order of preference.
FALLBACK_MODELS = ("small", "medium", "petit_menec")


# ---------------------------------------------------------------------------- the network
def parameter_shapes(channels: int, blocks: int, hidden: int) -> dict[str, tuple[int, ...]]:
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
    return shapes


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
    """The policy-value network in numpy: load, save, and evaluate observations.

    Args:
        header: the model's description: ``board`` (name, rows, cols, megaliths,
            min_dolmen, last_tilt), ``architecture`` (channels, blocks, hidden), and
            optionally ``training`` (how it was made). ``format`` and ``version`` are set here.
        params: every array of :func:`parameter_shapes`, by name, as float32.

    Raises:
        CarnacError: a missing or misshapen parameter, or a header without the fields above.
    """

    def __init__(self, header: dict[str, Any], params: dict[str, np.ndarray], source: str = "<memory>") -> None:
        self.source = source
        try:
            arch = header["architecture"]
            channels, blocks, hidden = int(arch["channels"]), int(arch["blocks"]), int(arch["hidden"])
            board = header["board"]
            self.rows, self.cols = int(board["rows"]), int(board["cols"])
            self.megaliths = int(board["megaliths"])
            int(board["min_dolmen"])
            str(board["name"])
        except (KeyError, TypeError, ValueError) as err:
            raise CarnacError(
                f"model {source}: its header lacks {err} (expected 'architecture' with channels, blocks, "
                "hidden and 'board' with name, rows, cols, megaliths, min_dolmen)"
            ) from None
        self.header = dict(header, format=FORMAT, version=MODEL_VERSION)
        self.channels, self.blocks, self.hidden = channels, blocks, hidden
        expected = parameter_shapes(channels, blocks, hidden)
        missing = sorted(set(expected) - set(params))
        if missing:
            raise CarnacError(f"model {source}: parameters {missing} are missing (expected {sorted(expected)})")
        extra = sorted(set(params) - set(expected))
        if extra:
            raise CarnacError(f"model {source}: unexpected parameters {extra} for this architecture")
        self.params: dict[str, np.ndarray] = {}
        for name, shape in expected.items():
            value = np.asarray(params[name], dtype=np.float32)
            if value.shape != shape:
                raise CarnacError(f"model {source}: parameter {name} has shape {value.shape}, expected {shape}")
            self.params[name] = value
        # inference layouts: 3x3 kernels as (9*Cin, Cout) matrices in (dy, dx, cin) order
        p = self.params
        self._convs = {}
        for name in expected:
            if name.endswith(".weight") and len(expected[name]) == 4 and expected[name][2] == 3:
                w = p[name]
                self._convs[name] = np.ascontiguousarray(w.transpose(2, 3, 1, 0).reshape(-1, w.shape[0]))
        self._place = np.ascontiguousarray(p["place.weight"][:, :, 0, 0].T)
        self._respond = np.ascontiguousarray(p["respond.weight"].T)
        self._value1 = np.ascontiguousarray(p["value1.weight"].T)
        self._value2 = np.ascontiguousarray(p["value2.weight"].T)

    # ------------------------------------------------------------------ board checks
    @property
    def board_name(self) -> str:
        """The name of the board the model was trained on."""
        return str(self.header["board"]["name"])

    def check_board(self, state: GameState) -> None:
        """Raise :class:`CarnacError` unless ``state`` is on the board this model was made for."""
        board = state.board
        mine = self.header["board"]
        if (board.rows, board.cols, board.megaliths, board.min_dolmen) != (
            self.rows,
            self.cols,
            self.megaliths,
            int(mine["min_dolmen"]),
        ):
            raise CarnacError(
                f"model {self.source} was trained on board {mine['name']!r} ({self.rows} x {self.cols}, "
                f"{self.megaliths} megaliths, min dolmen {mine['min_dolmen']}); the game is on "
                f"{board.name!r} ({board.rows} x {board.cols}, {board.megaliths} megaliths, min dolmen "
                f"{board.min_dolmen}). Expected a model for this board: pass az:model=PATH"
            )

    # ------------------------------------------------------------------ evaluation
    def forward(self, observations: np.ndarray, supply_scale: float | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Logits and values for a batch of observations.

        Args:
            observations: ``(N, rows, cols, 9)`` planes seen by the player to act (any board size).
            supply_scale: what the supply plane is divided by (default: the model board's megaliths).

        Returns:
            ``(logits, values)``: ``(N, rows*cols*4 + 5)`` float32 logits in the action
            encoding's order (illegal actions included: mask them), and ``(N,)`` values in
            ``[-1, 1]`` for the player to act.
        """
        obs = np.asarray(observations)
        if obs.ndim != 4 or obs.shape[-1] != NUM_PLANES:
            raise CarnacError(f"observations of shape {obs.shape}: expected (N, rows, cols, {NUM_PLANES})")
        x = obs.astype(np.float32)
        x[..., SUPPLY] /= float(supply_scale or self.megaliths)
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

    def evaluate(self, states: Sequence[GameState]) -> tuple[list[np.ndarray], np.ndarray]:
        """Priors over each state's legal actions (in ``legal_actions()`` order) and values
        for the player to act, for unfinished states on one board."""
        if not states:
            return [], np.zeros(0, dtype=np.float32)
        obs = np.stack([observation_planes(s, s.to_act) for s in states])
        # the supply as a fraction of the game's megaliths (the model's board's, when it plays its own)
        logits, values = self.forward(obs, supply_scale=states[0].board.megaliths)
        priors = []
        for row, state in zip(logits, states):
            legal = state.legal_actions()
            chosen = row[legal].astype(np.float64)
            chosen = np.exp(chosen - chosen.max())
            priors.append(chosen / chosen.sum())
        return priors, values

    # ------------------------------------------------------------------ files
    def save(self, path: str | os.PathLike) -> None:
        """Write the model to ``path`` (an ``.npz``: the parameters plus a JSON header),
        atomically (a temporary file renamed into place)."""
        path = Path(path)
        tmp = path.with_name(path.name + ".tmp")
        arrays = dict(self.params)
        arrays["__header__"] = np.frombuffer(json.dumps(self.header, sort_keys=True).encode(), dtype=np.uint8)
        with open(tmp, "wb") as handle:
            np.savez_compressed(handle, **arrays)
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: str | os.PathLike) -> PolicyValueNet:
        """Read a model written by :meth:`save`.

        Raises:
            CarnacError: the file is missing, not an ``.npz`` model, has another format or
                version, or parameters that do not fit its header; the message names the file.
        """
        path = Path(path)
        if not path.is_file():
            raise CarnacError(
                f"model file {str(path)!r} does not exist (expected an .npz written by PolicyValueNet.save)"
            )
        try:
            with np.load(path, allow_pickle=False) as data:
                arrays = {name: data[name] for name in data.files}
        except (OSError, ValueError, zipfile.BadZipFile, EOFError) as err:
            raise CarnacError(f"model file {str(path)!r} is not a readable .npz model ({err})") from None
        raw = arrays.pop("__header__", None)
        if raw is None or raw.dtype != np.uint8:
            raise CarnacError(f"model file {str(path)!r} has no JSON header (expected a {FORMAT} model)")
        try:
            header = json.loads(raw.tobytes().decode())
        except (UnicodeDecodeError, json.JSONDecodeError) as err:
            raise CarnacError(f"model file {str(path)!r}: its header is not JSON ({err})") from None
        if not isinstance(header, dict) or header.get("format") != FORMAT:
            found = header.get("format") if isinstance(header, dict) else header
            raise CarnacError(f"model file {str(path)!r} has format {found!r}, expected {FORMAT!r}")
        if header.get("version") != MODEL_VERSION:
            raise CarnacError(
                f"model file {str(path)!r} has version {header.get('version')!r}; this carnac_env reads "
                f"version {MODEL_VERSION}"
            )
        return cls(header, arrays, source=repr(str(path)))


def shipped_models() -> dict[str, Path]:
    """The models in the package, by board name."""
    if not MODELS_DIR.is_dir():
        return {}
    return {p.stem: p for p in sorted(MODELS_DIR.glob("*.npz"))}


def model_path(name_or_path: str) -> Path:
    """The file of a shipped model name (``"small"``) or a path.

    Raises:
        CarnacError: neither a shipped model nor an existing file.
    """
    shipped = shipped_models()
    if name_or_path in shipped:
        return shipped[name_or_path]
    path = Path(name_or_path).expanduser()
    if path.is_file():
        return path
    raise CarnacError(
        f"model {name_or_path!r} is neither a file nor a shipped model (shipped: {', '.join(shipped) or 'none'})"
    )


_CACHE: dict[str, PolicyValueNet] = {}


def _cached(path: Path) -> PolicyValueNet:
    key = str(path.resolve())
    stamp = f"{key}:{path.stat().st_mtime_ns}"
    if stamp not in _CACHE:
        _CACHE[stamp] = PolicyValueNet.load(path)
    return _CACHE[stamp]


# ---------------------------------------------------------------------------- the search
class Node:
    """A position in the search tree.

    Attributes:
        state: the position (a :class:`GameState` owned by the node).
        player: the player to act here (after the end: ``None``).
        actions: the legal actions (``legal_actions()`` order); empty when finished.
        prior: the network's probabilities for ``actions`` (set on expansion).
        n, w: per action, the visit count and the total value, for ``player``.
        children: per action, the child node once visited.
        value: the network's (or the rules') value of this position for ``player`` (for a
            finished game: for Red), set on expansion.
    """

    __slots__ = ("actions", "children", "expanded", "n", "player", "prior", "state", "value", "visits", "w")

    def __init__(self, state: GameState) -> None:
        self.state = state
        over = state.phase == OVER
        self.player = None if over else state.to_act
        self.actions: list[int] = [] if over else state.legal_actions()
        self.prior = np.zeros(len(self.actions))
        self.n = np.zeros(len(self.actions))
        self.w = np.zeros(len(self.actions))
        self.children: list[Node | None] = [None] * len(self.actions)
        self.visits = 0
        self.expanded = False
        self.value = 0.0

    @property
    def is_terminal(self) -> bool:
        """Whether the game is over here."""
        return self.player is None

    def expand(self, prior: np.ndarray, value: float) -> None:
        """Set the priors and the position's value (for :attr:`player`)."""
        self.prior = np.asarray(prior, dtype=np.float64)
        self.value = float(value)
        self.expanded = True

    def select(self, c: float) -> int:
        """The index of the action PUCT picks here (ties: the lowest index).

        Unvisited actions take the node's own value as their estimate (first-play urgency).
        """
        n = self.n
        q = np.where(n > 0, self.w / np.maximum(n, 1), self.value)
        u = q + c * self.prior * (math.sqrt(self.visits + 1) / (1.0 + n))
        return int(np.argmax(u))

    def child(self, index: int) -> Node:
        """The child after ``actions[index]``, created on first use."""
        child = self.children[index]
        if child is None:
            state = self.state.copy()
            state.apply_unchecked(self.actions[index])
            child = self.children[index] = Node(state)
        return child


def terminal_value(state: GameState) -> float:
    """A finished game's result for Red: +1, 0 or -1."""
    return float(state.result().reward(0))


def backup(path: Sequence[tuple[Node, int]], leaf: Node, value: float) -> None:
    """Back a leaf's value up the path of ``(node, action index)`` pairs that reached it.

    ``value`` is for the player to act at ``leaf`` (for a finished game: for Red). Walking up,
    the value is carried for the player who acts at each node: it keeps its sign while that
    player stays the same (a player acting twice in a row) and flips where the player to act
    changes. Nothing here assumes that turns alternate.
    """
    holder = 0 if leaf.player is None else leaf.player
    for node, index in reversed(path):
        if node.player != holder:
            value = -value
            holder = node.player
        node.n[index] += 1
        node.w[index] += value
        node.visits += 1


Evaluator = Callable[[list[GameState]], tuple[list[np.ndarray], np.ndarray]]


def run_search(
    roots: Sequence[Node],
    evaluate: Evaluator,
    sims: int,
    c: float = 1.5,
    noise: Callable[[Node], None] | None = None,
) -> None:
    """Run ``sims`` PUCT simulations in each tree, evaluating the leaves of all trees together.

    Args:
        roots: root nodes (unfinished positions); unexpanded ones are evaluated first.
        evaluate: ``states -> (priors, values)``, as :meth:`PolicyValueNet.evaluate` (one
            batched call per round: one leaf per tree).
        sims: simulations per tree.
        c: the PUCT constant.
        noise: called on each root after its expansion (self-play adds Dirichlet noise here).
    """
    fresh = [root for root in roots if not root.expanded]
    if fresh:
        priors, values = evaluate([r.state for r in fresh])
        for root, prior, value in zip(fresh, priors, values):
            root.expand(prior, value)
    if noise is not None:
        for root in roots:
            noise(root)
    for _ in range(sims):
        pending: list[tuple[list[tuple[Node, int]], Node]] = []
        for root in roots:
            node, path = root, []
            while node.expanded and not node.is_terminal:
                index = node.select(c)
                path.append((node, index))
                node = node.child(index)
            if node.is_terminal:
                backup(path, node, terminal_value(node.state))
            else:
                pending.append((path, node))
        if pending:
            priors, values = evaluate([leaf.state for _, leaf in pending])
            for (path, leaf), prior, value in zip(pending, priors, values):
                leaf.expand(prior, value)
                backup(path, leaf, float(value))


def best_action(root: Node) -> int:
    """The most visited root action; ties go to the higher prior, then the lower action number."""
    order = sorted(range(len(root.actions)), key=lambda j: (-root.n[j], -root.prior[j], root.actions[j]))
    return root.actions[order[0]]


# ---------------------------------------------------------------------------- the agent
class AZAgent(SearchAgent):
    """PUCT search over a policy-value network; see the module docstring for the options."""

    name = "az"

    def __init__(self, seed: int = 0, sims: int = 300, c: float = 1.5, model: str = "") -> None:
        super().__init__(seed)
        if sims < 0:
            raise CarnacError(f"az option sims={sims} must be >= 0 (0: the raw policy)")
        if c < 0:
            raise CarnacError(f"az option c={c} must be >= 0")
        self.sims = int(sims)
        self.c = float(c)
        self.model = str(model)
        self._net: PolicyValueNet | None = None
        if self.model:
            self._net = _cached(model_path(self.model))
        #: The root of the last search (for analysis and tests).
        self.last_root: Node | None = None

    @property
    def spec(self) -> str:
        """The spec string that builds this agent again."""
        return (
            f"az:sims={self.sims}"
            + (f":c={self.c:g}" if self.c != 1.5 else "")
            + (f":model={self.model}" if self.model else "")
        )

    def network_for(self, state: GameState) -> PolicyValueNet:
        """The network that plays ``state``: the ``model`` option's (checked against the board),
        else the shipped model of the board, else the shipped fallback model."""
        if self._net is not None:
            self._net.check_board(state)
            return self._net
        shipped = shipped_models()
        candidates = [state.board.name, *FALLBACK_MODELS]
        name = next((n for n in candidates if n in shipped), None)
        if name is None:
            raise CarnacError(
                f"az: no shipped model for board {state.board.name!r} and none of {', '.join(FALLBACK_MODELS)} "
                f"to fall back on (shipped: {', '.join(shipped) or 'none'}); pass az:model=PATH"
            )
        net = _cached(shipped[name])
        if name == state.board.name:
            net.check_board(state)
        return net

    def choose(self, state: GameState) -> int:
        """The most visited root action after ``sims`` simulations (``sims=0``: the legal action
        with the highest prior)."""
        net = self.network_for(state)
        root = Node(state.copy())
        self.last_root = root
        if len(root.actions) == 1:
            return root.actions[0]
        run_search([root], net.evaluate, self.sims, self.c)
        return best_action(root)


register(
    "az",
    AZAgent,
    {
        "sims": (int, 300, "PUCT simulations per move, the search budget; 0: the raw policy (no search)"),
        "c": (float, 1.5, "PUCT exploration constant"),
        "model": (str, "", "a .npz file from carnac train or a shipped model's name; default: the board's own"),
    },
    "AlphaZero-style: PUCT search guided by a trained policy-value network, run with numpy alone (no PyTorch)",
)
