"""The policy-value network, its model files and the models shipped with the package.

* :class:`PolicyValueNet` (:mod:`carnac_env.models.network`): numpy inference;
* :func:`load` and :func:`save` (:mod:`carnac_env.models.files`): model files, read as
  untrusted input;
* the shipped models, each with a JSON model card beside it (:func:`shipped_models`,
  :func:`model_path`, :func:`model_for`):

  - ``general.npz``: one network for every board (trained on a mix of all built-in boards and
    random custom ones; it reads the board's rules as inputs), the default everywhere;
  - a default specialist, ``<board>.npz`` beside it, only where one is measurably stronger
    than the general model on its board (none is today);
  - ``specialists/<board>.npz``: the earlier one-board models (small, medium, petit_menec),
    no stronger than the general model on their boards, kept to be played by name
    (``az:model=small``; :func:`specialists`);
  - ``generations/general-gN.npz``: the frozen generations of the general model, named by the
    reference panels (:func:`generations`).

Which model plays a board by default (:func:`default_model`): a default specialist when its
rules match the board's exactly, else the general model. Never a model trained under other
rules: a specialist on another board, or on the same board with other rules, is not used.

Models loaded to play (:func:`cached`, which the agents and the analysis use) are read once,
their bytes hashed as loaded (``net.sha256``, which the records name: :func:`model_digest`),
and, within a run (:func:`pinned_models`: the arena, an evaluation), never read again: a file
rewritten during a run is ignored, and the run plays the bytes its record names. They compute their
convolutions with Winograd's algorithm (:data:`PLAY_CONVOLUTION`): 1.4-1.8x as fast as the
definition's order of operations from a batch of 8 positions up, as accurate in float32 but
rounded differently in the last bits. :func:`load` gives a network in the definition's order.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from carnac_env.core.boards import Board
from carnac_env.errors import CarnacError
from carnac_env.models import files
from carnac_env.models.files import check_file, load, load_bytes, save
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
    "PLAY_CONVOLUTION",
    "SPECIALISTS_DIR",
    "PolicyValueNet",
    "blas_single_thread",
    "cached",
    "default_model",
    "generations",
    "load",
    "load_bytes",
    "model_digest",
    "model_for",
    "model_path",
    "parameter_shapes",
    "pinned_files",
    "pinned_models",
    "plays",
    "save",
    "shipped_models",
    "specialists",
]

#: Where the shipped models live.
MODELS_DIR = Path(__file__).resolve().parent
#: Where the frozen generations of the general model live (``general-g1.npz``, ...): never
#: rewritten once shipped, so that a reference panel naming one (``az:model=general-g1``) keeps
#: meaning what it measured. Each has its card beside it.
GENERATIONS_DIR = MODELS_DIR / "generations"
#: Where the one-board models kept to be played by name live (``small.npz``, ...): no longer
#: the default on their boards, where the general model is no weaker (their cards say so).
SPECIALISTS_DIR = MODELS_DIR / "specialists"
#: How the networks loaded to play (:func:`cached`) compute their 3x3 convolutions
#: (:data:`carnac_env.models.network.CONVOLUTIONS`).
PLAY_CONVOLUTION = "winograd"
#: The shipped model of every board: trained on a mix of boards, it reads the rules as inputs.
GENERAL_MODEL = "general"


def shipped_models() -> dict[str, Path]:
    """The models in the package that play by default, by name (a board's, or ``general``)."""
    return {p.stem: p for p in sorted(MODELS_DIR.glob("*.npz"))}


def specialists() -> dict[str, Path]:
    """The one-board models kept to be played by name (``az:model=small``), by board name."""
    return {p.stem: p for p in sorted(SPECIALISTS_DIR.glob("*.npz"))}


def generations() -> dict[str, Path]:
    """The frozen generations of the general model, by name (``general-g1``, ...), oldest first."""
    found = {p.stem: p for p in GENERATIONS_DIR.glob("general-g*.npz") if p.stem[9:].isdigit()}
    return dict(sorted(found.items(), key=lambda item: int(item[0][9:])))


def model_path(name_or_path: str) -> Path:
    """The file of a shipped model's name (``"general"``, a specialist's such as ``"small"``), a
    generation's name (``"general-g1"``) or a path.

    Raises:
        CarnacError: neither a shipped model nor an existing file.
    """
    shipped = {**specialists(), **shipped_models(), **generations()}
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


def _stamp(path: Path) -> str:
    """What :func:`cached` keys a file by outside :func:`pinned_models`: its resolved path,
    modification time, size and inode, so that a rewritten file is read again."""
    info = path.stat()
    return f"{path.resolve()}:{info.st_mtime_ns}:{info.st_size}:{info.st_ino}"


#: Within :func:`pinned_models`: every model file loaded so far, by resolved path, with the
#: bytes it was made from; None outside.
_PINNED: dict[str, tuple[PolicyValueNet, bytes]] | None = None


def _for_play(net: PolicyValueNet) -> PolicyValueNet:
    net.convolution = PLAY_CONVOLUTION
    return net


def cached(path: str | Path) -> PolicyValueNet:
    """:func:`load` of ``path`` to play: computing with :data:`PLAY_CONVOLUTION`, its bytes read
    once and hashed (``net.sha256`` names the bytes it was made from), shared by every agent and
    analysis of the process.

    Within :func:`pinned_models` (an arena, an evaluation) a file is read once for the whole
    run, and a file rewritten meanwhile is ignored: the run keeps the bytes it loaded. Outside
    one, a network is kept while its file is unchanged (by path, modification time, size and
    inode), and a rewritten file is read again. Set nothing on it: :func:`load` gives a network
    of one's own.

    Raises:
        CarnacError: as :func:`load`.
    """
    path = Path(path)
    if _PINNED is not None:
        key = str(path.resolve())
        found = _PINNED.get(key)
        if found is None:
            data = files.read_bytes(path)
            found = _PINNED[key] = (_for_play(files.load_bytes(data, files._shown(path))), data)
        return found[0]
    stamp = _stamp(path)
    if stamp not in _CACHE:
        _CACHE[stamp] = _for_play(load(path))
    return _CACHE[stamp]


def model_digest(path: str | Path) -> str:
    """``"sha256:<hex>"`` of the bytes :func:`cached` plays for the model file ``path``: what an
    evaluation records of the network it measured, so that a card can be checked against the
    model shipped now. It is the hash of the bytes the network was made from (read once, not
    read again from the disk), so within :func:`pinned_models` it names the network the run plays
    even if the file has been rewritten since.

    Raises:
        CarnacError: as :func:`load`.
    """
    digest = cached(path).sha256
    assert digest is not None  # every network cached() gives was made from a file's bytes
    return digest


@contextmanager
def pinned_models(pinned: dict[str, bytes] | None = None) -> Iterator[dict[str, bytes]]:
    """Within the block, every model file is read once (:func:`cached`): a file rewritten while
    the block runs (a trainer writing ``runs/x/model.npz`` while an arena plays it) is ignored,
    and every agent made in the block plays the bytes first loaded, which its record names
    (:meth:`~carnac_env.agents.az.AZAgent.model_used`).

    ``pinned`` (from :func:`pinned_files` in another process: the arena's workers) gives files'
    bytes by resolved path, each checked as :func:`load` checks a file, to be played instead of
    reading those files. A block inside another keeps the outer one's files (adding ``pinned``,
    which must agree with them). Yields the pinned files (:func:`pinned_files`).

    Raises:
        CarnacError: bytes in ``pinned`` that are not a model, or that differ from the bytes
            the outer block already plays for that file.
    """
    global _PINNED
    outer = _PINNED
    table: dict[str, tuple[PolicyValueNet, bytes]] = {} if outer is None else outer
    for key, data in (pinned or {}).items():
        if key in table:
            if table[key][1] != data:
                raise CarnacError(f"model file {key!r}: other bytes than the ones this run plays already")
            continue
        table[key] = (_for_play(files.load_bytes(data, files._shown(Path(key)))), bytes(data))
    _PINNED = table
    try:
        yield pinned_files()
    finally:
        _PINNED = outer


def pinned_files() -> dict[str, bytes]:
    """The model files read so far within :func:`pinned_models`, by resolved path, with the bytes
    played: what a worker process is given to play the same networks. Empty outside one."""
    return {key: data for key, (_, data) in (_PINNED or {}).items()}


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
    """The name of the shipped model that plays ``board`` by default: a default specialist of
    the board (``<board>.npz`` beside ``general.npz``, none today) trained under its rules, else
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
