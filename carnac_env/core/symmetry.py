"""The board's symmetries, for data augmentation: observations, masks, actions and game states.

Carnac's rules do not care which way the board is turned: mirror a position and every
legal move mirrors with it, and so does the result. This module maps observations, legal
masks (or any per-action array: logits, visit counts), action numbers and whole
:class:`~carnac_env.core.game.GameState` objects through those symmetries, consistently.

The transforms, named by what they do to a picture of the board (north up):

==================  ======================================  ==========================
name                square (row, col) goes to               boards
==================  ======================================  ==========================
``identity``        (row, col)                              all
``flip_ns``         (R-1-row, col): north and south swap    all
``flip_ew``         (row, C-1-col): east and west swap      all
``rot180``          (R-1-row, C-1-col)                      all
``rot90``           (col, R-1-row): a quarter turn          square boards only
                    clockwise (north goes east)
``rot270``          (C-1-col, row): a quarter turn          square boards only
                    anticlockwise (north goes west)
``transpose``       (col, row): mirror in the north-west    square boards only
                    to south-east diagonal
``anti_transpose``  (C-1-col, R-1-row): mirror in the       square boards only
                    north-east to south-west diagonal
==================  ======================================  ==========================

What changes with a transform, besides the squares:

* a tilt direction turns with the board (``flip_ns`` swaps north and south, ``rot90`` takes
  north to east, ...);
* a placement's orientation keeps its colour bit (``o & 1``: own or opponent colour on
  top; colours never change) but the axis bit (``o & 2``: whether the north/south or the
  east/west long faces carry the top colour) flips under the four transforms that swap the
  two axes (``rot90``, ``rot270``, ``transpose``, ``anti_transpose``);
* in a game state, the colours a pending megalith would show when tilted north/south and
  east/west swap under those same four.

>>> from carnac_env.core.symmetry import symmetries, transform_action, transform_observation
>>> symmetries("small")                     # a 5 x 8 board: the four that keep its shape
('identity', 'flip_ns', 'flip_ew', 'rot180')
>>> transform_action("small", 160, "flip_ns")   # tilt north becomes tilt south
162

Every function takes a transform by name or as a :class:`Symmetry`; :func:`symmetry`
builds (and caches) the :class:`Symmetry` of one board, whose methods do the same work
without looking the transform up again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from carnac_env import _checks
from carnac_env.core.actions import EAST_WEST_SHOWS_TOP, ORIENTATIONS, decline_number, place_number, tilt_base
from carnac_env.core.boards import DIRECTION_STEPS, MAX_SIDE, Board, make_board
from carnac_env.core.game import GameState
from carnac_env.errors import CarnacError

#: Transforms defined on every board (they keep the board's shape).
SHAPE_KEEPING = ("identity", "flip_ns", "flip_ew", "rot180")
#: Transforms defined on square boards only (they swap rows and columns).
AXIS_SWAPPING = ("rot90", "rot270", "transpose", "anti_transpose")
#: Every transform name, in the order :func:`symmetries` lists them.
TRANSFORMS = SHAPE_KEEPING + AXIS_SWAPPING

_INVERSE = {
    "identity": "identity",
    "flip_ns": "flip_ns",
    "flip_ew": "flip_ew",
    "rot180": "rot180",
    "rot90": "rot270",
    "rot270": "rot90",
    "transpose": "transpose",
    "anti_transpose": "anti_transpose",
}


def _map_square(name: str, rows: int, cols: int, r: int, c: int) -> tuple[int, int]:
    if name == "identity":
        return r, c
    if name == "flip_ns":
        return rows - 1 - r, c
    if name == "flip_ew":
        return r, cols - 1 - c
    if name == "rot180":
        return rows - 1 - r, cols - 1 - c
    if name == "rot90":
        return c, rows - 1 - r
    if name == "rot270":
        return cols - 1 - c, r
    if name == "transpose":
        return c, r
    return cols - 1 - c, rows - 1 - r  # anti_transpose


def _directions(name: str) -> tuple[int, int, int, int]:
    """Where one step in each direction (0 N, 1 E, 2 S, 3 W) goes under transform ``name``:
    the steps of :data:`~carnac_env.core.boards.DIRECTION_STEPS` from the centre of a 3 x 3
    board, mapped like any square."""
    centre = _map_square(name, 3, 3, 1, 1)
    moved = (_map_square(name, 3, 3, 1 + dr, 1 + dc) for dr, dc in DIRECTION_STEPS)
    return tuple(DIRECTION_STEPS.index((r - centre[0], c - centre[1])) for r, c in moved)  # type: ignore[return-value]


@dataclass(frozen=True)
class Symmetry:
    """One transform of one board size, with its lookup tables.

    Attributes:
        name: the transform's name (see :data:`TRANSFORMS`).
        rows, cols: the board size it applies to.
        swaps_axes: whether it exchanges the north/south and east/west axes.
        squares: ``squares[s]`` is where square ``s`` (row-major) goes; int64 array.
        directions: ``directions[d]`` is where direction ``d`` (0 N, 1 E, 2 S, 3 W) goes.
        actions: ``actions[a]`` is the transformed action number; int64 array of length
            ``rows*cols*4 + 5``.
    """

    name: str
    rows: int
    cols: int
    swaps_axes: bool
    squares: np.ndarray = field(repr=False, compare=False)
    directions: tuple[int, int, int, int] = field(repr=False, compare=False)
    actions: np.ndarray = field(repr=False, compare=False)
    # gather indices: new[..., i] = old[..., _square_source[i]] (and the same for actions)
    _square_source: np.ndarray = field(repr=False, compare=False)
    _action_source: np.ndarray = field(repr=False, compare=False)

    @property
    def inverse(self) -> Symmetry:
        """The transform that undoes this one."""
        return _symmetry(_INVERSE[self.name], self.rows, self.cols)

    def action(self, action: int) -> int:
        """The action number that does, on the transformed board, what ``action`` does here."""
        if not _checks.is_whole(action):
            raise CarnacError(f"an action must be an integer, got {type(action).__name__}")
        if not 0 <= action < len(self.actions):
            raise CarnacError(
                f"action {action} is out of range: actions run from 0 to {len(self.actions) - 1} "
                f"on a {self.rows} x {self.cols} board"
            )
        return int(self.actions[action])

    def action_array(self, actions: np.ndarray) -> np.ndarray:
        """Transform an integer array of action numbers (any shape) elementwise.

        Raises:
            CarnacError: not an array of whole numbers (floats, NaN, bools, text, None and
                boolean masks are refused), or a number outside the action space.
        """
        try:
            actions = np.asarray(actions)
        except (ValueError, TypeError) as err:  # ragged nesting
            raise CarnacError(f"actions must be an integer array of action numbers: {err}") from None
        if actions.size == 0 and actions.dtype.kind in "fO":  # [] or (): nothing to transform
            actions = actions.astype(np.int64)
        if actions.dtype.kind not in "iu":
            what = "a boolean mask" if actions.dtype == bool else f"dtype {actions.dtype}"
            raise CarnacError(
                f"actions must be an integer array of action numbers, got {what}; "
                "transform a mask or per-action values with mask()"
            )
        if actions.size and (actions.min() < 0 or actions.max() >= len(self.actions)):
            raise CarnacError(
                f"actions run from 0 to {len(self.actions) - 1} on a {self.rows} x {self.cols} board; "
                f"got values from {actions.min()} to {actions.max()}"
            )
        return self.actions[actions]

    def observation(self, observation: np.ndarray) -> np.ndarray:
        """Transform an observation of shape ``(..., rows, cols, K)`` (any K, any leading batch axes).

        Every plane is a per-square picture, so the planes move with their squares.
        """
        obs = np.asarray(observation)
        if obs.ndim < 3 or obs.shape[-3:-1] != (self.rows, self.cols):
            raise CarnacError(
                f"observation of shape {obs.shape} does not fit a {self.rows} x {self.cols} board; "
                "expected (..., rows, cols, planes)"
            )
        flat = obs.reshape(*obs.shape[:-3], self.rows * self.cols, obs.shape[-1])
        out = flat[..., self._square_source, :]
        new_rows, new_cols = (self.cols, self.rows) if self.swaps_axes else (self.rows, self.cols)
        return out.reshape(*obs.shape[:-3], new_rows, new_cols, obs.shape[-1])

    def mask(self, mask: np.ndarray) -> np.ndarray:
        """Transform a legal-action mask, or any per-action array (logits, probabilities,
        visit counts), of shape ``(..., rows*cols*4 + 5)``."""
        values = np.asarray(mask)
        if values.ndim < 1 or values.shape[-1] != len(self.actions):
            raise CarnacError(
                f"mask of shape {values.shape} does not fit a {self.rows} x {self.cols} board; "
                f"expected (..., {len(self.actions)})"
            )
        return values[..., self._action_source]

    def state(self, state: GameState) -> GameState:
        """A new :class:`GameState`: ``state`` with the board transformed (``state`` is unchanged).

        Supply, phase and the player to act stay; squares, lying pairs, the pending
        megalith and (for axis-swapping transforms) its tilt colours move with the board.
        """
        board = state.board
        if (board.rows, board.cols) != (self.rows, self.cols):
            raise CarnacError(
                f"transform {self.name!r} is for a {self.rows} x {self.cols} board; "
                f"the state is on a {board.rows} x {board.cols} board"
            )
        if self.swaps_axes and board.rows != board.cols:  # pragma: no cover - prevented by symmetry()
            raise CarnacError(f"transform {self.name!r} needs a square board")
        out = GameState(board)
        squares = self.squares
        for s in range(board.squares):
            out.cells[squares[s]] = state.cells[s]
            out.kinds[squares[s]] = state.kinds[s]
        out.lying = [(int(squares[a]), int(squares[b])) for a, b in state.lying]
        out.supply, out.phase, out.to_act, out.empty = state.supply, state.phase, state.to_act, state.empty
        if state.pending >= 0:
            out.pending = int(squares[state.pending])
            # A quarter turn or a diagonal mirror swaps the axes: north/south shows what east/west did.
            out.pending_colour = state.pending_colours[1] if self.swaps_axes else state.pending_colour
        return out


@lru_cache(maxsize=256)
def _symmetry(name: str, rows: int, cols: int) -> Symmetry:
    n = rows * cols
    squares = np.empty(n, dtype=np.int64)
    for s in range(n):
        r, c = divmod(s, cols)
        r2, c2 = _map_square(name, rows, cols, r, c)
        squares[s] = r2 * cols + c2  # swapped boards are square, so cols is also the new width
    directions = _directions(name)
    swaps = name in AXIS_SWAPPING
    num_actions = decline_number(n) + 1
    actions = np.empty(num_actions, dtype=np.int64)
    for s in range(n):
        for o in range(ORIENTATIONS):
            actions[place_number(s, o)] = place_number(squares[s], o ^ EAST_WEST_SHOWS_TOP if swaps else o)
    for d in range(4):
        actions[tilt_base(n) + d] = tilt_base(n) + directions[d]
    actions[decline_number(n)] = decline_number(n)
    square_source = np.empty(n, dtype=np.int64)
    square_source[squares] = np.arange(n)
    action_source = np.empty(num_actions, dtype=np.int64)
    action_source[actions] = np.arange(num_actions)
    for array in (squares, actions, square_source, action_source):
        array.setflags(write=False)
    return Symmetry(name, rows, cols, swaps, squares, directions, actions, square_source, action_source)


def _shape(board: Board | str | tuple[int, int]) -> tuple[int, int]:
    if isinstance(board, tuple):
        if len(board) != 2 or not all(_checks.is_whole(x) and 1 <= x <= MAX_SIDE for x in board):
            raise CarnacError(
                f"board size {board!r} must be (rows, cols), whole numbers in 1..{MAX_SIDE} (bools are not sizes)"
            )
        return int(board[0]), int(board[1])
    b = make_board(board)
    return b.rows, b.cols


def symmetries(board: Board | str | tuple[int, int]) -> tuple[str, ...]:
    """The transform names defined on ``board`` (a Board, a board name, or ``(rows, cols)``).

    All eight of :data:`TRANSFORMS` on a square board, the four of :data:`SHAPE_KEEPING`
    otherwise. The first is always ``"identity"``.
    """
    rows, cols = _shape(board)
    return TRANSFORMS if rows == cols else SHAPE_KEEPING


def symmetry(board: Board | str | tuple[int, int], transform: str | Symmetry) -> Symmetry:
    """The :class:`Symmetry` named ``transform`` on ``board`` (a Board, a name, or ``(rows, cols)``).

    Raises:
        CarnacError: an unknown transform name, or a rotation or diagonal mirror on a board
            that is not square.
    """
    rows, cols = _shape(board)
    if isinstance(transform, Symmetry):
        if (transform.rows, transform.cols) != (rows, cols):
            raise CarnacError(
                f"transform {transform.name!r} was built for a {transform.rows} x {transform.cols} board, "
                f"not {rows} x {cols}"
            )
        return transform
    if not isinstance(transform, str) or transform not in TRANSFORMS:
        raise CarnacError(f"unknown transform {transform!r}; expected one of {', '.join(TRANSFORMS)}")
    if transform in AXIS_SWAPPING and rows != cols:
        raise CarnacError(
            f"transform {transform!r} turns a {rows} x {cols} board into a {cols} x {rows} one; "
            f"on a board that is not square only {', '.join(SHAPE_KEEPING)} apply"
        )
    return _symmetry(transform, rows, cols)


def inverse(transform: str | Symmetry) -> str | Symmetry:
    """The transform that undoes ``transform`` (a name gives a name, a Symmetry a Symmetry)."""
    if isinstance(transform, Symmetry):
        return transform.inverse
    if not isinstance(transform, str) or transform not in _INVERSE:
        raise CarnacError(f"unknown transform {transform!r}; expected one of {', '.join(TRANSFORMS)}")
    return _INVERSE[transform]


def transform_observation(observation: np.ndarray, transform: str | Symmetry) -> np.ndarray:
    """Transform observation planes of shape ``(..., rows, cols, K)``; returns a new array."""
    obs = np.asarray(observation)
    if obs.ndim < 3:
        raise CarnacError(f"observation of shape {obs.shape} has no (rows, cols, planes) axes")
    return symmetry((int(obs.shape[-3]), int(obs.shape[-2])), transform).observation(obs)


def transform_mask(board: Board | str | tuple[int, int], mask: np.ndarray, transform: str | Symmetry) -> np.ndarray:
    """Transform a mask or any per-action array of shape ``(..., rows*cols*4 + 5)`` on ``board``."""
    return symmetry(board, transform).mask(mask)


def transform_action(board: Board | str | tuple[int, int], action: int, transform: str | Symmetry) -> int:
    """The action number that does on the transformed board what ``action`` does on ``board``."""
    return symmetry(board, transform).action(action)


def transform_state(state: GameState, transform: str | Symmetry) -> GameState:
    """A transformed copy of ``state`` (see :meth:`Symmetry.state`); ``state`` is unchanged."""
    return symmetry((state.board.rows, state.board.cols), transform).state(state)


def augment(
    board: Board | str | tuple[int, int],
    observations: np.ndarray,
    masks: np.ndarray | None = None,
    actions: np.ndarray | None = None,
    transforms: tuple[str, ...] | None = None,
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """Stack every symmetric copy of a batch, for data augmentation.

    Args:
        board: the board the batch was played on.
        observations: shape ``(N, rows, cols, K)``.
        masks: optional, shape ``(N, rows*cols*4 + 5)`` (or per-action targets such as visit counts).
        actions: optional, shape ``(N,)``.
        transforms: which transforms to use; by default every one :func:`symmetries` allows.

    Returns:
        ``(observations, masks, actions)`` with ``len(transforms) * N`` rows, transform-major
        (the first N rows are the first transform's). Masks and actions are ``None`` when not given.
    """
    names = symmetries(board) if transforms is None else transforms
    tables = [symmetry(board, t) for t in names]
    obs = np.concatenate([t.observation(observations) for t in tables])
    out_masks = None if masks is None else np.concatenate([t.mask(masks) for t in tables])
    out_actions = None if actions is None else np.concatenate([t.action_array(actions) for t in tables])
    return obs, out_masks, out_actions
