"""Model files: an ``.npz`` of float32 parameters plus a JSON header, read as untrusted input.

A model file is a zip archive (numpy's ``.npz``) holding one ``.npy`` member per parameter,
under its PyTorch name (``stem.weight``, ``blocks.0.conv1.bias``, ...), and ``__header__.npy``:
the UTF-8 JSON header as a uint8 array. The header has ``format`` (``"carnac-az"``),
``version``, ``board`` (name, rows, cols, megaliths, min_dolmen, last_tilt), ``architecture``
(channels, blocks, hidden, and from version 2 ``ownership``) and ``training`` (how it was made).

**Reading checks everything before it allocates or decodes anything large.** A file from
someone else is data, never code (nothing is unpickled), and a hostile one is refused with a
:class:`~carnac_env.errors.CarnacError` naming the file and what was expected:

* the file at most :data:`MAX_FILE_BYTES`; the archive's directory read first: only
  ``__header__.npy`` and the parameters' ``.npy`` members, each at most as large (uncompressed,
  as the directory declares it) as its expected shape needs, and no more than
  :data:`MAX_MEMBERS` members;
* the header at most :data:`MAX_HEADER_BYTES`, JSON without deep nesting, its numbers whole
  and within :data:`~carnac_env.models.network.LIMITS` (no ``Infinity``, no booleans for numbers);
* every parameter's ``.npy`` header read before its data: little-endian float32, C order, the
  shape the architecture gives; then exactly that many bytes; NaN and infinities refused.
"""

from __future__ import annotations

import json
import os
import tempfile
import zipfile
from pathlib import Path
from typing import IO, Any

import numpy as np

from carnac_env.errors import CarnacError
from carnac_env.models.network import (
    FORMAT,
    MODEL_VERSION,
    MODEL_VERSIONS,
    PolicyValueNet,
    architecture_of,
    parameter_shapes,
)

#: The largest model file read (the largest architecture within the limits is far below it).
MAX_FILE_BYTES = 256 * 1024 * 1024
#: The largest JSON header read.
MAX_HEADER_BYTES = 256 * 1024
#: The most members a model archive may hold.
MAX_MEMBERS = 256
#: The deepest nesting of lists and objects in a header.
MAX_NESTING = 32

_HEADER = "__header__"


def save(net: PolicyValueNet, path: str | os.PathLike) -> None:
    """Write ``net`` to ``path`` (an ``.npz``: the parameters and the JSON header), atomically:
    a temporary file with a random name beside it, renamed into place (a planted link at the
    target is replaced, never followed)."""
    path = Path(path)
    arrays = dict(net.params)
    header = dict(net.header, format=FORMAT, version=MODEL_VERSION)
    arrays[_HEADER] = np.frombuffer(json.dumps(header, sort_keys=True).encode(), dtype=np.uint8)
    handle, tmp = tempfile.mkstemp(dir=path.parent or ".", prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            np.savez_compressed(out, **arrays)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException as err:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(err, OSError):
            raise CarnacError(f"could not write model file {str(path)!r}: {err.strerror or err}") from None
        raise


def load(path: str | os.PathLike) -> PolicyValueNet:
    """Read and check a model file (see the module docstring).

    Raises:
        CarnacError: the file is missing, too large, not a model archive, has another format
            or version, a malformed header, or parameters that do not fit it.
    """
    path = Path(path)
    name = repr(str(path))
    if not path.is_file():
        raise CarnacError(f"model file {name} does not exist (expected an .npz written by carnac_env.models.save)")
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise CarnacError(f"model file {name} is {size} bytes; expected at most {MAX_FILE_BYTES}")
    try:
        with zipfile.ZipFile(path) as archive:
            return _read(archive, name)
    except zipfile.BadZipFile as err:
        raise CarnacError(f"model file {name} is not a readable .npz model ({err})") from None
    except (OSError, EOFError, ValueError) as err:
        if isinstance(err, CarnacError):
            raise
        raise CarnacError(f"model file {name} is not a readable .npz model ({err})") from None


def _read(archive: zipfile.ZipFile, name: str) -> PolicyValueNet:
    infos = archive.infolist()
    if len(infos) > MAX_MEMBERS:
        raise CarnacError(f"model file {name} has {len(infos)} members; expected at most {MAX_MEMBERS}")
    members = {}
    for info in infos:
        if not info.filename.endswith(".npy") or info.is_dir():
            raise CarnacError(f"model file {name} has member {info.filename!r}; expected only .npy arrays")
        members[info.filename[: -len(".npy")]] = info
    if _HEADER not in members:
        raise CarnacError(f"model file {name} has no JSON header (expected a {FORMAT} model)")
    header = _read_header(archive, members.pop(_HEADER), name)
    channels, blocks, hidden, ownership = architecture_of(header, name)
    expected = parameter_shapes(channels, blocks, hidden, ownership)
    missing = sorted(set(expected) - set(members))
    if missing:
        raise CarnacError(f"model {name}: parameters {missing} are missing (expected {sorted(expected)})")
    extra = sorted(set(members) - set(expected))
    if extra:
        raise CarnacError(f"model {name}: unexpected parameters {extra} for this architecture")
    params = {}
    for key, shape in expected.items():
        params[key] = _read_parameter(archive, members[key], key, shape, name)
    return PolicyValueNet(header, params, source=name)


def _read_header(archive: zipfile.ZipFile, info: zipfile.ZipInfo, name: str) -> dict[str, Any]:
    if info.file_size > MAX_HEADER_BYTES + 256:
        raise CarnacError(
            f"model file {name}: its header is {info.file_size} bytes; expected at most {MAX_HEADER_BYTES}"
        )
    with archive.open(info) as stream:
        dtype, shape = _npy_header(stream, name, "the header")
        if dtype != np.dtype(np.uint8) or len(shape) != 1 or shape[0] > MAX_HEADER_BYTES:
            raise CarnacError(f"model file {name}: its header is {dtype} {shape}; expected uint8 JSON text")
        raw = stream.read(shape[0])
    if len(raw) != shape[0]:
        raise CarnacError(f"model file {name}: its header is cut short")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise CarnacError(f"model file {name}: its header is not UTF-8 ({err})") from None
    if _nesting(text) > MAX_NESTING:
        raise CarnacError(f"model file {name}: its header nests deeper than {MAX_NESTING} levels")
    try:
        header = json.loads(text, parse_constant=_refuse_constant)
    except (json.JSONDecodeError, ValueError) as err:
        raise CarnacError(f"model file {name}: its header is not JSON ({err})") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        found = header.get("format") if isinstance(header, dict) else type(header).__name__
        raise CarnacError(f"model file {name} has format {found!r}, expected {FORMAT!r}")
    version = header.get("version")
    if isinstance(version, bool) or version not in MODEL_VERSIONS:
        raise CarnacError(
            f"model file {name} has version {version!r}; this carnac_env reads versions "
            f"{', '.join(map(str, MODEL_VERSIONS))}"
        )
    return header


def _refuse_constant(word: str) -> None:
    raise ValueError(f"{word} is not a number a model header may hold")


def _nesting(text: str) -> int:
    """The deepest nesting of ``[`` and ``{`` outside strings (without parsing)."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def _npy_header(stream: IO[bytes], name: str, what: str) -> tuple[np.dtype, tuple[int, ...]]:
    """The dtype and shape from an ``.npy`` member's own header (numpy's format reader, which
    parses it as a literal; no data is read here, so an object array's pickle never is)."""
    try:
        version = np.lib.format.read_magic(stream)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(stream, max_header_size=4096)
        elif version in ((2, 0), (3, 0)):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(stream, max_header_size=4096)
        else:
            raise ValueError(f"npy version {version}")
    except (ValueError, SyntaxError, EOFError, TypeError, OverflowError) as err:
        raise CarnacError(f"model file {name}: {what} is not a plain .npy array ({err})") from None
    if fortran or dtype.hasobject:
        raise CarnacError(f"model file {name}: {what} is a Fortran-ordered or object array; expected plain numbers")
    return dtype, tuple(int(d) for d in shape)


def _read_parameter(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, key: str, shape: tuple[int, ...], name: str
) -> np.ndarray:
    nbytes = 4 * int(np.prod(shape, dtype=np.int64))
    if info.file_size > nbytes + 4096:
        raise CarnacError(f"model file {name}: parameter {key} is {info.file_size} bytes; shape {shape} needs {nbytes}")
    with archive.open(info) as stream:
        dtype, found = _npy_header(stream, name, f"parameter {key}")
        if dtype != np.dtype("<f4"):
            raise CarnacError(f"model file {name}: parameter {key} has dtype {dtype}, expected float32 (<f4)")
        if found != shape:
            raise CarnacError(f"model file {name}: parameter {key} has shape {found}, expected {shape}")
        raw = stream.read(nbytes)
    if len(raw) != nbytes:
        raise CarnacError(f"model file {name}: parameter {key} is cut short")
    value = np.frombuffer(raw, dtype="<f4").reshape(shape).astype(np.float32)
    if not np.isfinite(value).all():
        raise CarnacError(f"model file {name}: parameter {key} holds NaN or infinite values")
    return value
