"""Model files: an ``.npz`` of float32 parameters plus a JSON header, read as untrusted input.

A model file is a zip archive (numpy's ``.npz``) holding one ``.npy`` member per parameter,
under its PyTorch name (``stem.weight``, ``blocks.0.conv1.bias``, ...), and ``__header__.npy``:
the UTF-8 JSON header as a uint8 array. The header has ``format`` (``"carnac-az"``),
``version``, ``board`` (name, rows, cols, megaliths, min_dolmen, last_tilt), ``architecture``
(channels, blocks, hidden, and from version 2 ``ownership``) and ``training`` (how it was made).

**Reading checks everything before it allocates or decodes anything large.** A file from
someone else is data, never code (nothing is unpickled), and a hostile one is refused with a
:class:`~carnac_env.errors.CarnacError` naming the file and what was expected:

* the file at most :data:`MAX_FILE_BYTES`; the archive's end record read before the
  directory it points to: at most :data:`MAX_MEMBERS` members in at most
  :data:`MAX_DIRECTORY_BYTES` (no zip64 records: a model file never needs them);
* then the directory: only ``__header__.npy`` and the parameters' ``.npy`` members, each
  once, stored or deflated (no other compression, no encryption), each declaring (uncompressed)
  at most what its expected shape needs, plus an ``.npy`` header;
* a member is read only up to its declared size (zipfile stops there, so a stream that would
  decompress to more is never decompressed further, and checks the checksum there);
* the header at most :data:`MAX_HEADER_BYTES`, JSON without deep nesting, its numbers whole
  and within :data:`~carnac_env.models.network.LIMITS` (no ``Infinity``, no booleans for numbers);
  its board's numbers within the core's board limits;
* every parameter's ``.npy`` header parsed before its data: little-endian float32, C order,
  the shape the architecture gives, then exactly that many bytes; NaN and infinities refused.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import struct
import tokenize
import zipfile
import zlib
from pathlib import Path
from typing import IO, Any

import numpy as np

from carnac_env import _files
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
#: The largest archive directory read (a model's is about 3 KB).
MAX_DIRECTORY_BYTES = 256 * 1024
#: The most an ``.npy`` member's own header may take.
MAX_NPY_HEADER = 4096

#: What a model file's failures inside zipfile, zlib and numpy's .npy reader look like.
_UNREADABLE = (
    zipfile.BadZipFile,
    zlib.error,
    NotImplementedError,  # an unsupported zip version or feature
    struct.error,
    OSError,
    EOFError,
    ValueError,
)

_HEADER = "__header__"


def save(net: PolicyValueNet, path: str | os.PathLike) -> None:
    """Write ``net`` to ``path`` (an ``.npz``: the parameters and the JSON header) through
    :func:`carnac_env._files.writing` (atomic; a planted link is never followed).

    Raises:
        CarnacError: the file cannot be written (naming it).
    """
    arrays = dict(net.params)
    header = dict(net.header, format=FORMAT, version=MODEL_VERSION)
    arrays[_HEADER] = np.frombuffer(json.dumps(header, sort_keys=True).encode(), dtype=np.uint8)
    with _files.writing(path) as out:
        np.savez_compressed(out, **arrays)


def load(path: str | os.PathLike) -> PolicyValueNet:
    """Read and check a model file (see the module docstring): its bytes are read once
    (:func:`read_bytes`) and the network is made from them (:func:`load_bytes`), so its
    :attr:`~carnac_env.models.network.PolicyValueNet.sha256` names the very bytes it holds, even
    when the file is rewritten meanwhile.

    Raises:
        CarnacError: the file is missing, too large, not a model archive, has another format
            or version, a malformed header, or parameters that do not fit it.
    """
    path = Path(path)
    return load_bytes(read_bytes(path), _shown(path))


def digest(data: bytes) -> str:
    """``"sha256:<hex>"`` of a model file's bytes: how the records name a network."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def read_bytes(path: str | os.PathLike) -> bytes:
    """The bytes of the model file ``path``, read once, from a regular file of at most
    :data:`MAX_FILE_BYTES` (nothing is checked of what they hold: :func:`load_bytes` does).

    Raises:
        CarnacError: the file is missing, not a regular file, too large or unreadable, naming it.
    """
    path = Path(path)
    name = _shown(path)
    size = check_file(path).st_size
    if size > MAX_FILE_BYTES:
        raise CarnacError(f"model file {name} is {size} bytes; expected at most {MAX_FILE_BYTES}")
    with _files.reading(path, "model file") as handle:  # a FIFO swapped in is refused, not waited on
        size = os.fstat(handle.fileno()).st_size  # the file opened (it may have been replaced since)
        if size > MAX_FILE_BYTES:
            raise CarnacError(f"model file {name} is {size} bytes; expected at most {MAX_FILE_BYTES}")
        _check_end_record(handle, name)  # a hostile directory is refused before the file is read
        data = handle.read(size)  # never more than the file holds: no buffer of the largest size
        if handle.read(1):
            raise CarnacError(f"model file {name} grew while it was read; read it again when it is written")
    return data


def load_bytes(data: bytes, name: str = "<memory>") -> PolicyValueNet:
    """The network in a model file's bytes ``data``, checked as :func:`load` checks a file
    (``name`` names it in messages and becomes the network's ``source``); its ``sha256`` is
    :func:`digest` of ``data``.

    Raises:
        CarnacError: as :func:`load`.
    """
    if not isinstance(data, bytes | bytearray | memoryview):
        raise CarnacError(f"model {name}: expected the bytes of a model file, got {type(data).__name__}")
    data = bytes(data)
    if len(data) > MAX_FILE_BYTES:
        raise CarnacError(f"model file {name} is {len(data)} bytes; expected at most {MAX_FILE_BYTES}")
    try:
        handle = io.BytesIO(data)
        _check_end_record(handle, name)
        with zipfile.ZipFile(handle) as archive:
            net = _read(archive, name)
    except CarnacError:
        raise
    except _UNREADABLE as err:
        raise CarnacError(f"model file {name} is not a readable .npz model ({type(err).__name__}: {err})") from None
    net.sha256 = digest(data)
    return net


def _shown(path: Path) -> str:
    """The path as messages show it (a very long one cut, with its length)."""
    text = str(path)
    return repr(text) if len(text) <= 200 else f"{text[:80]!r}... ({len(text)} characters)"


def check_file(path: str | os.PathLike) -> os.stat_result:
    """The ``stat`` of the model file ``path``, checked to be a regular file (a link to one is
    followed).

    Raises:
        CarnacError: the path does not exist, cannot be looked at (too long a name, no
            permission), or is a folder, a FIFO, a device or a socket, each said as it is.
    """
    import errno
    import stat

    name = _shown(Path(path))
    try:
        info = os.stat(path)
    except OSError as err:
        if err.errno in (errno.ENOENT, errno.ENOTDIR):
            raise CarnacError(
                f"model file {name} does not exist (expected an .npz written by carnac_env.models.save)"
            ) from None
        raise CarnacError(f"cannot read model file {name}: {err.strerror or err}") from None
    if not stat.S_ISREG(info.st_mode):
        kind = "a folder" if stat.S_ISDIR(info.st_mode) else "a FIFO" if stat.S_ISFIFO(info.st_mode) else "a device"
        if stat.S_ISSOCK(info.st_mode):
            kind = "a socket"
        raise CarnacError(f"model file {name} is {kind}, not a regular file (expected an .npz model)")
    return info


def _check_end_record(handle: IO[bytes], name: str) -> None:
    """Refuse an archive whose end record (found as zipfile finds it) claims more members or
    a larger directory than a model has, before zipfile reads that directory."""
    handle.seek(0, os.SEEK_END)
    size = handle.tell()
    start = max(size - 22 - 65535, 0)  # the record, after at most a 64 KB comment
    handle.seek(start)
    tail = handle.read()
    at = len(tail) - 22 if tail[-22:-18] == b"PK\x05\x06" and tail[-2:] == b"\0\0" else tail.rfind(b"PK\x05\x06")
    if at < 0 or len(tail) - at < 22:
        raise CarnacError(f"model file {name} is not a readable .npz model (no zip end record)")
    _, _, _, here, total, directory, _, _ = struct.unpack("<4s4H2LH", tail[at : at + 22])
    if max(here, total) > MAX_MEMBERS or directory > MAX_DIRECTORY_BYTES:
        raise CarnacError(
            f"model file {name}: its archive claims {max(here, total)} members in a {directory}-byte directory; "
            f"expected at most {MAX_MEMBERS} members in {MAX_DIRECTORY_BYTES} bytes"
        )
    if start + at >= 20:
        handle.seek(start + at - 20)
        if handle.read(4) == b"PK\x06\x07":
            raise CarnacError(f"model file {name} is a zip64 archive; a model file never needs one")
    handle.seek(0)


def _read(archive: zipfile.ZipFile, name: str) -> PolicyValueNet:
    infos = archive.infolist()
    if len(infos) > MAX_MEMBERS:
        raise CarnacError(f"model file {name} has {len(infos)} members; expected at most {MAX_MEMBERS}")
    members = {}
    for info in infos:
        if not info.filename.endswith(".npy") or info.is_dir():
            raise CarnacError(f"model file {name} has member {info.filename!r}; expected only .npy arrays")
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED) or info.flag_bits & 0x1:
            raise CarnacError(
                f"model file {name}: member {info.filename!r} is encrypted or uses compression method "
                f"{info.compress_type}; expected stored or deflated (as numpy writes them)"
            )
        key = info.filename[: -len(".npy")]
        if key in members:
            raise CarnacError(f"model file {name} holds member {info.filename!r} twice")
        members[key] = info
    if _HEADER not in members:
        raise CarnacError(f"model file {name} has no JSON header (expected a {FORMAT} model)")
    header = _read_header(archive, members.pop(_HEADER), name)
    expected = parameter_shapes(*architecture_of(header, name))
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
    raw = _member_bytes(archive, info, MAX_HEADER_BYTES + MAX_NPY_HEADER, name, "its header")
    dtype, shape, offset = _npy_header(raw, name, "the header")
    if dtype != np.dtype(np.uint8) or len(shape) != 1 or shape[0] != len(raw) - offset:
        raise CarnacError(
            f"model file {name}: its header is {dtype} {shape} in {len(raw) - offset} bytes; expected uint8 JSON text"
        )
    if shape[0] > MAX_HEADER_BYTES:
        raise CarnacError(f"model file {name}: its header is {shape[0]} bytes; expected at most {MAX_HEADER_BYTES}")
    try:
        text = raw[offset:].decode("utf-8")
    except UnicodeDecodeError as err:
        raise CarnacError(f"model file {name}: its header is not UTF-8 ({err})") from None
    if _nesting(text) > MAX_NESTING:
        raise CarnacError(f"model file {name}: its header nests deeper than {MAX_NESTING} levels")
    try:
        header = json.loads(text, parse_constant=_refuse_constant)
    except (json.JSONDecodeError, ValueError, RecursionError) as err:
        raise CarnacError(f"model file {name}: its header is not JSON ({err})") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        found = header.get("format") if isinstance(header, dict) else type(header).__name__
        raise CarnacError(f"model file {name} has format {found!r}, expected {FORMAT!r}")
    version = header.get("version")
    if isinstance(version, bool) or not isinstance(version, int) or version not in MODEL_VERSIONS:
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


def _member_bytes(archive: zipfile.ZipFile, info: zipfile.ZipInfo, limit: int, name: str, what: str) -> bytes:
    """A member's bytes: at most ``limit`` declared, exactly the declared size read (zipfile
    decompresses no further, and checks the checksum when it gets there)."""
    if info.file_size > limit:
        raise CarnacError(f"model file {name}: {what} is {info.file_size} bytes; expected at most {limit}")
    with archive.open(info) as stream:
        raw = stream.read(info.file_size)
    if len(raw) != info.file_size:
        raise CarnacError(f"model file {name}: {what} is cut short ({len(raw)} of {info.file_size} bytes)")
    return raw


def _npy_header(raw: bytes, name: str, what: str) -> tuple[np.dtype, tuple[int, ...], int]:
    """The dtype, shape and data offset from an ``.npy`` member's own header (numpy's format
    reader, which parses it as a literal; the data is not looked at, so an object array's
    pickle never is)."""
    stream = io.BytesIO(raw)
    try:
        version = np.lib.format.read_magic(stream)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(stream, max_header_size=MAX_NPY_HEADER)
        elif version in ((2, 0), (3, 0)):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(stream, max_header_size=MAX_NPY_HEADER)
        else:
            raise ValueError(f"npy version {version}")
    except (ValueError, SyntaxError, EOFError, TypeError, OverflowError, tokenize.TokenError, RecursionError) as err:
        raise CarnacError(f"model file {name}: {what} is not a plain .npy array ({err})") from None
    if fortran or dtype.hasobject:
        raise CarnacError(f"model file {name}: {what} is a Fortran-ordered or object array; expected plain numbers")
    if any(int(d) < 0 for d in shape):
        raise CarnacError(f"model file {name}: {what} has shape {shape}; expected no negative sizes")
    return dtype, tuple(int(d) for d in shape), stream.tell()


def _read_parameter(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, key: str, shape: tuple[int, ...], name: str
) -> np.ndarray:
    nbytes = 4 * int(np.prod(shape, dtype=np.int64))
    raw = _member_bytes(archive, info, nbytes + MAX_NPY_HEADER, name, f"parameter {key} (shape {shape})")
    dtype, found, offset = _npy_header(raw, name, f"parameter {key}")
    if dtype != np.dtype("<f4"):
        raise CarnacError(f"model file {name}: parameter {key} has dtype {dtype}, expected float32 (<f4)")
    if found != shape:
        raise CarnacError(f"model file {name}: parameter {key} has shape {found}, expected {shape}")
    if len(raw) - offset != nbytes:
        raise CarnacError(
            f"model file {name}: parameter {key} holds {len(raw) - offset} bytes of data; shape {shape} needs {nbytes}"
        )
    value = np.frombuffer(raw, dtype="<f4", offset=offset).reshape(shape).astype(np.float32)
    if not np.isfinite(value).all():
        raise CarnacError(f"model file {name}: parameter {key} holds NaN or infinite values")
    return value
