"""The policy-value network, its model files and the models shipped with the package.

* :class:`PolicyValueNet` (:mod:`carnac_env.models.network`): numpy inference;
* :func:`load` and :func:`save` (:mod:`carnac_env.models.files`): model files, read as
  untrusted input;
* the shipped models: one ``<board>.npz`` per board in this folder, each with a JSON model
  card ``<board>.json`` beside it (:func:`shipped_models`, :func:`model_path`,
  :func:`model_for`).
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
    "FALLBACK_MODELS",
    "FORMAT",
    "MODELS_DIR",
    "MODEL_VERSION",
    "PolicyValueNet",
    "blas_single_thread",
    "cached",
    "load",
    "model_for",
    "model_path",
    "parameter_shapes",
    "save",
    "shipped_models",
]

#: Where the shipped models live.
MODELS_DIR = Path(__file__).resolve().parent
#: The shipped models that play boards without one of their own, in order of preference.
FALLBACK_MODELS = ("small", "medium", "petit_menec")


def shipped_models() -> dict[str, Path]:
    """The models in the package, by board name."""
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


def model_for(board: Board) -> tuple[PolicyValueNet, bool]:
    """The shipped model that plays ``board``: its own if there is one, else the first shipped of
    :data:`FALLBACK_MODELS`; and whether it is the board's own.

    Raises:
        CarnacError: no shipped model to play it.
    """
    shipped = shipped_models()
    name = next((n for n in (board.name, *FALLBACK_MODELS) if n in shipped), None)
    if name is None:
        raise CarnacError(
            f"no shipped model for board {board.name!r} and none of {', '.join(FALLBACK_MODELS)} to fall back on "
            f"(shipped: {', '.join(shipped) or 'none'}); pass a model file"
        )
    return cached(shipped[name]), name == board.name
