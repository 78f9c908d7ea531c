"""The policy-value network, its model files and the models shipped with the package.

* :class:`PolicyValueNet` (:mod:`carnac_env.models.network`): numpy inference;
* :func:`load` and :func:`save` (:mod:`carnac_env.models.files`): model files, read as
  untrusted input;
* the shipped models: ``general.npz``, one network for every board (trained on a mix of all
  built-in boards and random custom ones; it reads the board's rules as inputs), and the
  specialists, one ``<board>.npz`` per board where one is measurably stronger there; each with
  a JSON model card beside it (:func:`shipped_models`, :func:`model_path`, :func:`model_for`).

Which model plays a board by default (:func:`default_model`): the board's own specialist when
its rules match the board's exactly, else the general model. Never a model trained under other
rules: a specialist on another board, or on the same board with other rules, is not used.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from carnac_env.core.boards import Board
from carnac_env.errors import CarnacError
from carnac_env.models.files import check_file, load, save
from carnac_env.models.network import (
    FORMAT,
    MODEL_VERSION,
    PolicyValueNet,
    blas_single_thread,
    parameter_shapes,
)

__all__ = [
    "FORMAT",
    "GENERAL_MODEL",
    "MODELS_DIR",
    "MODEL_VERSION",
    "PolicyValueNet",
    "blas_single_thread",
    "cached",
    "default_model",
    "generations",
    "load",
    "model_for",
    "model_path",
    "parameter_shapes",
    "plays",
    "save",
    "shipped_models",
]

#: Where the shipped models live.
MODELS_DIR = Path(__file__).resolve().parent
#: Where the frozen generations of the general model live (``general-g1.npz``, ...): never
#: rewritten once shipped, so that a reference panel naming one (``az:model=general-g1``) keeps
#: meaning what it measured. Each has its card beside it.
GENERATIONS_DIR = MODELS_DIR / "generations"
#: The shipped model of every board: trained on a mix of boards, it reads the rules as inputs.
GENERAL_MODEL = "general"


def shipped_models() -> dict[str, Path]:
    """The models in the package that play by default, by name (a board's, or ``general``)."""
    return {p.stem: p for p in sorted(MODELS_DIR.glob("*.npz"))}


def generations() -> dict[str, Path]:
    """The frozen generations of the general model, by name (``general-g1``, ...), oldest first."""
    found = {p.stem: p for p in GENERATIONS_DIR.glob("general-g*.npz") if p.stem[9:].isdigit()}
    return dict(sorted(found.items(), key=lambda item: int(item[0][9:])))


def model_path(name_or_path: str) -> Path:
    """The file of a shipped model name (``"small"``, ``"general"``), a generation's name
    (``"general-g1"``) or a path.

    Raises:
        CarnacError: neither a shipped model nor an existing file.
    """
    shipped = {**shipped_models(), **generations()}
    if name_or_path in shipped:
        return shipped[name_or_path]
    path = Path(name_or_path).expanduser()
    try:
        os.stat(path)
        found = True
    except OSError as err:  # missing; or a name too long, no permission: check_file says which
        found = err.errno not in (errno.ENOENT, errno.ENOTDIR)
    if found:
        check_file(path)  # a folder, a FIFO, a device: said as it is
        return path
    raise CarnacError(
        f"model {name_or_path!r} is neither a file nor a shipped model (shipped: {', '.join(shipped) or 'none'})"
    )


_CACHE: dict[str, PolicyValueNet] = {}


def cached(path: str | Path) -> PolicyValueNet:
    """:func:`load` of ``path``, kept while the file is unchanged (by path and modification time)."""
    path = Path(path)
    stamp = f"{path.resolve()}:{path.stat().st_mtime_ns}"
    if stamp not in _CACHE:
        _CACHE[stamp] = load(path)
    return _CACHE[stamp]


def plays(net: PolicyValueNet, board: Board) -> bool:
    """Whether ``net`` was trained for ``board``'s rules: a general model (trained on a mix of
    boards, reading the rules) for any board, any other for exactly its own board's size,
    supply, minimum dolmen and last-tilt rule."""
    if net.header.get("boards") is not None and net.reads_rules:
        return True
    own = net.header["board"]
    return net.board_key() == (board.rows, board.cols, board.megaliths, board.min_dolmen) and bool(
        own.get("last_tilt", True)
    ) == bool(board.last_tilt)


def default_model(board: Board) -> str | None:
    """The name of the shipped model that plays ``board`` by default: the board's own
    specialist where one is shipped and trained under the board's rules, else
    :data:`GENERAL_MODEL` where it is shipped, else None."""
    shipped = shipped_models()
    if board.name in shipped and board.name != GENERAL_MODEL and plays(cached(shipped[board.name]), board):
        return board.name
    return GENERAL_MODEL if GENERAL_MODEL in shipped else None


def model_for(board: Board) -> tuple[PolicyValueNet, str]:
    """The shipped model that plays ``board`` (:func:`default_model`) and its name.

    Raises:
        CarnacError: no shipped model is trained for the board's rules.
    """
    name = default_model(board)
    if name is None:
        shipped = shipped_models()
        raise CarnacError(
            f"no shipped model is trained for board {board.name!r} ({board.rows} x {board.cols}, {board.megaliths} "
            f"megaliths, min dolmen {board.min_dolmen}, last tilt {board.last_tilt}) and the general model is not "
            f"shipped (shipped: {', '.join(shipped) or 'none'}); pass az:model=PATH"
        )
    return cached(shipped_models()[name]), name
