"""The replay buffer: the newest ``capacity`` training positions, of one board or of many.

Positions arrive in *chunks*, one per self-play shard, each of one board (:class:`Chunk`);
the buffer keeps them in order of arrival and, past its capacity, drops the oldest positions
first (the oldest chunk shrinks from its start, then goes). A minibatch draws positions
uniformly from everything held (:meth:`Replay.sample`), grouped by board shape so that the
network sees each group in one batch; chunks of boards of one shape but other rules (medium
and kerlescan) share a group, each position with its own rules.

For a checkpoint the buffer is tensors and plain values only (:meth:`Replay.state`), checked
field by field when read back (:meth:`Replay.load`).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import numpy as np
import torch

from carnac_env.core.boards import Board, make_board
from carnac_env.errors import CarnacError
from carnac_env.train.selfplay import Samples

__all__ = ["Chunk", "Group", "Replay"]

#: The tensor dtypes a replay field may have (numpy reads each; the field's own is checked after).
_TORCH_DTYPES = (torch.int8, torch.int16, torch.bool, torch.float32)


def _dtypes(squares: int, actions: int, rows: int, cols: int) -> dict[str, tuple[tuple[int, ...], Any]]:
    """Each Samples field's per-position shape and dtype on a board."""
    return {
        "observations": ((rows, cols, 9), np.int8),
        "masks": ((actions,), np.bool_),
        "policies": ((actions,), np.float32),
        "values": ((), np.float32),
        "search_values": ((), np.float32),
        "playout_values": ((), np.float32),
        "ownership": ((squares,), np.int8),
        "dolmens": ((2,), np.int16),
    }


@dataclass
class Chunk:
    """Positions of one board, in the order they were played."""

    board: Board
    samples: Samples


@dataclass
class Group:
    """The positions of a minibatch on boards of one shape: each position's sample and board."""

    rows: int
    cols: int
    samples: Samples
    boards: list[Board]


class Replay:
    """The newest ``capacity`` positions, in chunks (see the module docstring)."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.chunks: list[Chunk] = []
        self.size = 0

    def add(self, board: Board, samples: Samples) -> None:
        """Append one board's positions; drop the oldest beyond the capacity."""
        if len(samples):
            self.chunks.append(Chunk(board, samples))
            self.size += len(samples)
        while self.size > self.capacity:
            oldest = self.chunks[0]
            excess = self.size - self.capacity
            if excess >= len(oldest.samples):
                self.chunks.pop(0)
                self.size -= len(oldest.samples)
            else:
                oldest.samples = oldest.samples.rows(slice(excess, None))
                self.size -= excess

    def sample(self, rng: np.random.Generator, count: int) -> list[Group]:
        """``count`` positions drawn uniformly (with replacement) with ``rng``, grouped by board
        shape (in the order of each shape's first chunk; within a group, by chunk, then in the
        order of the draws)."""
        idx = rng.integers(self.size, size=min(count, self.size))
        starts = np.cumsum([0] + [len(c.samples) for c in self.chunks])
        which = np.searchsorted(starts, idx, side="right") - 1
        shapes: dict[tuple[int, int], list[tuple[Chunk, np.ndarray]]] = {}
        for k in np.unique(which):
            chunk = self.chunks[k]
            rows = idx[which == k] - starts[k]
            shapes.setdefault((chunk.board.rows, chunk.board.cols), []).append((chunk, rows))
        return [
            Group(
                rows,
                cols,
                Samples.concatenate([chunk.samples.rows(picked) for chunk, picked in parts]),
                [chunk.board for chunk, picked in parts for _ in picked],
            )
            for (rows, cols), parts in shapes.items()
        ]

    def everything(self) -> list[Group]:
        """Every position held, grouped by board shape (for a loss over the whole buffer)."""
        shapes: dict[tuple[int, int], list[Chunk]] = {}
        for chunk in self.chunks:
            shapes.setdefault((chunk.board.rows, chunk.board.cols), []).append(chunk)
        return [
            Group(
                rows,
                cols,
                Samples.concatenate([c.samples for c in chunks]),
                [c.board for c in chunks for _ in range(len(c.samples))],
            )
            for (rows, cols), chunks in shapes.items()
        ]

    # ---------------------------------------------------------------- checkpoints
    def state(self) -> dict[str, Any]:
        """The buffer as tensors and plain values, for a checkpoint."""
        return {
            "chunks": [
                {
                    "board": {"name": c.board.name, **c.board.rules()},
                    **{
                        f.name: torch.from_numpy(np.ascontiguousarray(getattr(c.samples, f.name)))
                        for f in fields(Samples)
                    },
                }
                for c in self.chunks
            ]
        }

    def load(self, data: Any, source: str) -> None:
        """Restore :meth:`state`, checking every field.

        Raises:
            CarnacError: a missing field, a wrong type, dtype or shape, a board the core refuses,
                counts that do not fit, or non-finite targets.
        """
        if not isinstance(data, dict) or not isinstance(data.get("chunks"), list):
            raise CarnacError(f"{source}: field 'replay' must be a mapping with a list 'chunks'")
        chunks, size = [], 0
        for n, item in enumerate(data["chunks"]):
            where = f"{source}: field replay.chunks[{n}]"
            board = _chunk_board(item, where)
            name = board.name
            arrays = {}
            length = None
            for field, (shape, dtype) in _dtypes(board.squares, board.num_actions, board.rows, board.cols).items():
                value = item.get(field)
                if not isinstance(value, torch.Tensor) or value.layout != torch.strided or value.requires_grad:
                    raise CarnacError(f"{where}.{field} is missing or not a plain tensor")
                if value.dtype not in _TORCH_DTYPES:
                    raise CarnacError(f"{where}.{field} is {value.dtype}, expected {np.dtype(dtype)}")
                array = value.numpy()
                if array.dtype != dtype or array.ndim != 1 + len(shape) or array.shape[1:] != shape:
                    raise CarnacError(
                        f"{where}.{field} is {array.dtype} {tuple(array.shape)}, expected {np.dtype(dtype)} "
                        f"(N, {', '.join(map(str, shape))}) for board {name!r}"
                    )
                if length is None:
                    length = len(array)
                if len(array) != length or length == 0:
                    raise CarnacError(
                        f"{where}.{field} has {len(array)} rows; expected the same number (> 0) in every field"
                    )
                arrays[field] = array
            if not all(np.isfinite(arrays[k]).all() for k in ("policies", "values", "search_values", "playout_values")):
                raise CarnacError(f"{where} holds NaN or infinite targets")
            chunks.append(Chunk(board, Samples(**arrays)))
            size += int(length or 0)
        if size > self.capacity:
            raise CarnacError(f"{source}: field replay holds {size} positions, more than the buffer's {self.capacity}")
        self.chunks, self.size = chunks, size


def _chunk_board(item: Any, where: str) -> Board:
    """The board a checkpoint's replay chunk names (``item["board"]``: a name of at most 100
    characters and the rules); CarnacError naming ``where`` otherwise."""
    if not isinstance(item, dict) or not isinstance(item.get("board"), dict):
        raise CarnacError(f"{where} must be a mapping with a 'board'")
    rules = dict(item["board"])
    name = rules.pop("name", None)
    if not isinstance(name, str) or len(name) > 100:
        raise CarnacError(f"{where}.board has no name (a text of at most 100 characters)")
    try:
        return make_board(name, **rules)
    except (CarnacError, TypeError) as err:
        raise CarnacError(f"{where}.board is not a board this carnac_env plays: {err}") from None
