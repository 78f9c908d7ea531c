"""The one way the package writes files, appends lines and owns an output folder.

Every file the package writes (arena and evaluation folders, cards, replays, saved games,
training checkpoints and models) goes through this module, so that each write is safe
against a crash, a full disk and a hostile folder:

* :func:`write_bytes`, :func:`write_text`, :func:`write_json` and the :func:`writing`
  context manager (for writers that take a file handle: ``np.savez``, ``torch.save``, PIL,
  matplotlib, ``csv``) write a temporary file ``.NAME.PID.RANDOM.tmp`` in the target's
  folder, created exclusively (``O_CREAT | O_EXCL | O_NOFOLLOW``, so a planted file or
  symbolic link at that name is never opened) and ``flock``-ed by the writer while it
  lives, flush and ``fsync`` it, and rename it into place (``os.replace``, which replaces a
  link at the target rather than following it). A reader sees the old file or the new one,
  never half of one. A failed write (a full disk, a missing folder, an error in the writer)
  removes the temporary file and raises a :class:`~carnac_env.errors.CarnacError` naming
  the target.
* **What an output may be.** The target is checked (``lstat``) before anything is written and
  again just before the rename: a path that exists and is not a regular file (a device such
  as ``/dev/full`` or ``/dev/null``, a FIFO, a socket, a folder) is refused with a
  :class:`~carnac_env.errors.CarnacError` naming it, and so is a symbolic link that points
  to one (``/dev/stdout`` is such a link): neither is ever replaced, let alone written
  through. A link to a regular file, or a dangling one, is replaced by the new file (the
  link, an entry of the output folder, goes; what it pointed to is never touched). The
  folders above the target are followed as given: they are the caller's choice (as a
  shell's ``>`` follows them), and the package's own output names are fixed names inside
  them. The path ``-`` means standard output (:data:`STDOUT`): the whole output is built
  in memory and written there at the end, so a failed writer writes nothing.
* **Temporary files of an interrupted write** (a ``kill -9`` during the write of a
  checkpoint, a model, a log) are removed by the next write of the same target: each
  ``.NAME.PID.RANDOM.tmp`` of that target whose ``flock`` can be taken (its writer is dead:
  the kernel drops the lock of a process that dies) is deleted before the new write starts
  (where the file system has no ``flock``, one whose process ``PID`` no longer exists). A
  live writer's temporary is never touched. Temporaries of the older form
  ``.NAME.RANDOM.tmp`` (no pid) are removed once untouched for
  :data:`LEGACY_TEMPORARY_AGE` seconds.
* :func:`append_line` and :func:`appending` append lines durably (each line written in one
  call and fsynced) to a regular file, never through a symbolic link.
* :func:`reading` opens a file the package reads (records, arena folders, panels, models,
  checkpoints) only if it is a regular file: a FIFO, a device, a socket or a folder is
  refused before it is opened for reading (``stat`` first, then ``open`` without blocking
  and ``fstat`` again), so a FIFO planted at ``arena.json`` can never hang a command.
* A file with more than one hard link is never written in place: :func:`truncate` and
  :func:`appending` first copy it to a fresh file of its own (atomically renamed over the
  name), so the other names keep their contents.
* :func:`lock_folder` holds an output folder for a whole run: a second run on the same
  folder is refused at once (:class:`FolderBusyError`, naming the folder and the run that
  holds it), and a lock left by a killed process never blocks a later run (the lock is an
  ``fcntl.flock`` on ``FOLDER/.carnac.lock``, which the kernel releases when its holder
  dies).

Why not the ``filelock`` library: its Unix lock opens the lock file with ``O_TRUNC`` and
follows a symbolic link there (a planted link would truncate its target), and it cannot
say who holds the lock; the few lines here do both, on the same ``flock``.
"""

from __future__ import annotations

import errno
import io
import json
import os
import re
import secrets
import stat
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO, Any

from carnac_env.errors import CarnacError

__all__ = [
    "LEGACY_TEMPORARY_AGE",
    "LOCK_NAME",
    "STDOUT",
    "Appender",
    "FolderBusyError",
    "FolderLock",
    "append_line",
    "appending",
    "check_output",
    "is_stdout",
    "lock_folder",
    "reading",
    "same_bytes",
    "truncate",
    "write_bytes",
    "write_json",
    "write_text",
    "writing",
]

#: The lock file's name in a locked folder (present only while a run holds it, or after a kill).
LOCK_NAME = ".carnac.lock"

#: The output path that means standard output (``--svg -``), for every writer of this module.
STDOUT = "-"

#: Seconds after which a temporary file of the older form ``.NAME.RANDOM.tmp`` (written before
#: temporaries carried their writer's pid and lock) counts as left by a dead writer.
LEGACY_TEMPORARY_AGE = 3600.0

_TEMPORARY_TAIL = re.compile(r"(?:(?P<pid>[0-9]+)\.)?[0-9a-f]{16}\.tmp")

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


class FolderBusyError(CarnacError):
    """Another run holds the output folder (see :func:`lock_folder`)."""


def _reason(err: OSError) -> str:
    """The reason an OSError gives, in words (a link refused by O_NOFOLLOW said so)."""
    if err.errno == errno.ELOOP:
        return "it is a symbolic link, which is never followed; remove it"
    return err.strerror or str(err)


def _fail(path: str | os.PathLike[str], err: OSError, doing: str = "write") -> CarnacError:
    return CarnacError(f"cannot {doing} {os.fspath(path)}: {_reason(err)}")


def _fsync_folder(folder: str) -> None:
    """Make a rename in ``folder`` durable (where the platform can open a folder)."""
    try:
        fd = os.open(folder, os.O_RDONLY | _CLOEXEC)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def is_stdout(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is :data:`STDOUT` (``-``), which the writers of this module take to
    mean standard output (``./-`` names a file called ``-``)."""
    return os.fspath(path) == STDOUT


def check_output(path: str | os.PathLike[str]) -> None:
    """Refuse now, before any work, an output that :func:`writing` would refuse: one whose
    folder does not exist, or that exists and is not a regular file (see the module
    docstring). ``-`` (standard output) passes. A command calls it on each output it was
    given before it computes what goes there; :func:`writing` checks again.

    Raises:
        CarnacError: naming the path and why.
    """
    if is_stdout(path):
        return
    target = Path(path)
    _refuse_unless_regular(target)
    folder = target.parent
    if not folder.is_dir():
        raise CarnacError(f"cannot write {target}: the folder {folder} does not exist")


def _refuse_unless_regular(target: Path) -> None:
    """Refuse an output path that exists and is not a regular file, or is a symbolic link to
    one that is not (a device, a FIFO, a socket, a folder): it is never replaced, never
    written through. A link to a regular file, a dangling link and a missing file pass."""
    try:
        info = os.lstat(target)
    except FileNotFoundError:
        return
    except OSError as err:
        raise _fail(target, err) from None
    if stat.S_ISREG(info.st_mode):
        return
    if stat.S_ISLNK(info.st_mode):
        try:
            pointed = os.stat(target)
        except OSError:
            return  # dangling, or a loop: the link itself is replaced
        if stat.S_ISREG(pointed.st_mode):
            return
        raise CarnacError(
            f"cannot write {target}: it is a symbolic link to {_kind(pointed)}, and an output never replaces "
            f"such a link nor writes through it: {_way_out(pointed)}"
        )
    raise CarnacError(
        f"cannot write {target}: {_not_regular(info)}, and an output never replaces one: {_way_out(info)}"
    )


def _way_out(info: os.stat_result) -> str:
    """How to get past a refused output: another path (a folder may be moved; a device, never:
    for a stream such as /dev/stdout, ``-``)."""
    if stat.S_ISDIR(info.st_mode):
        return "move it away or choose another path"
    return f"choose another path ({STDOUT} writes to standard output)"


def _remove_stale_temporaries(target: Path) -> None:
    """Remove the temporary files of ``target`` left by writers that died (see the module
    docstring); never one a live writer holds, never anything but a regular file."""
    prefix = f".{target.name}."
    folder = target.parent
    try:
        entries = [entry for entry in os.scandir(folder) if entry.name.startswith(prefix)]
    except OSError:
        return
    for entry in entries:
        match = _TEMPORARY_TAIL.fullmatch(entry.name[len(prefix) :])
        if match is None:
            continue
        with suppress(OSError):
            _remove_if_dead(Path(entry.path), match["pid"])


def _remove_if_dead(path: Path, pid: str | None) -> None:
    """Remove the temporary ``path`` if no live writer holds it (``pid``: its writer's, or
    None for one of the older form)."""
    import fcntl

    fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return
        if pid is None and time.time() - info.st_mtime < LEGACY_TEMPORARY_AGE:
            return  # older writers took no lock: only an old file is surely abandoned
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as err:
            if err.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES) or pid is None or _alive(int(pid)):
                return  # held by a live writer (or, with no flock here, its process lives)
        if os.lstat(path).st_ino == info.st_ino:  # still the file looked at
            os.unlink(path)
    finally:
        os.close(fd)


def _alive(pid: int) -> bool:
    """Whether a process ``pid`` exists (one of another user's counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _create_temporary(path: Path) -> tuple[int, Path]:
    """A new file ``.NAME.PID.RANDOM.tmp`` next to ``path``, opened exclusively (never an
    existing file, never through a link) and locked (``flock``) for the writer's life; its
    descriptor and name."""
    import fcntl

    for _ in range(100):
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(8)}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o666)
        except FileExistsError:
            continue  # a name planted (or drawn) already: draw another
        with suppress(OSError):  # a file system with no flock: the pid in the name then says
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return fd, tmp
    raise FileExistsError(errno.EEXIST, "no free temporary name", os.fspath(path))


@contextmanager
def writing(path: str | os.PathLike[str], *, text: bool = False, newline: str | None = None) -> Iterator[IO[Any]]:
    """A handle to write ``path`` through a temporary file renamed into place on success.

    Use ``with writing(path) as handle: np.savez(handle, ...)`` (binary), or
    ``with writing(path, text=True, newline="") as handle: csv.writer(handle)...``
    (UTF-8 text; ``newline`` as :func:`open`'s). When the block ends normally the data is
    flushed, fsynced and renamed over ``path``; when it raises, the temporary file is
    removed and ``path`` is left as it was. Temporaries of ``path`` left by a killed writer
    are removed first. ``path`` may be ``-`` (:data:`STDOUT`): the data then goes to standard
    output when the block ends normally (nothing when it raises).

    Raises:
        CarnacError: the file cannot be written (a missing folder, no permission, a full
            disk), or ``path`` is not a regular file (a folder, a device, a FIFO, a socket,
            or a symbolic link to one of those), naming ``path`` and why; an error raised by
            the block itself is raised again unchanged (an ``OSError`` becomes this
            CarnacError).
    """
    if is_stdout(path):
        with _writing_stdout(text, newline) as handle:
            yield handle
        return
    target = Path(path)
    _refuse_unless_regular(target)
    _remove_stale_temporaries(target)
    try:
        fd, tmp = _create_temporary(target)
    except OSError as err:
        raise _fail(target, err) from None
    renamed = False
    try:
        handle = os.fdopen(fd, "w" if text else "wb", encoding="utf-8" if text else None, newline=newline)
        with handle:  # open (and locked) until renamed: a cleaner never takes a live temporary
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
            _refuse_unless_regular(target)  # again: nothing swapped in while the writer ran
            os.replace(tmp, target)
            renamed = True
    except OSError as err:
        raise _fail(target, err) from None
    finally:
        if not renamed:
            with suppress(OSError):
                os.unlink(tmp)
    _fsync_folder(os.fspath(target.parent))


@contextmanager
def _writing_stdout(text: bool, newline: str | None) -> Iterator[IO[Any]]:
    """:func:`writing` for ``-``: a handle on memory, copied to standard output at the end."""
    buffer = io.BytesIO()
    handle: IO[Any] = buffer
    if text:
        handle = io.TextIOWrapper(buffer, encoding="utf-8", newline=newline, write_through=True)
    yield handle
    if isinstance(handle, io.TextIOWrapper):
        handle.flush()
        handle.detach()
    try:
        sys.stdout.flush()
        out = getattr(sys.stdout, "buffer", None)
        if out is None:
            sys.stdout.write(buffer.getvalue().decode("utf-8", "replace"))
        else:
            out.write(buffer.getvalue())
            out.flush()
    except OSError as err:
        raise CarnacError(f"cannot write to standard output: {_reason(err)}") from None


def write_bytes(path: str | os.PathLike[str], data: bytes, *, if_changed: bool = False) -> bool:
    """Write ``data`` to ``path`` atomically (see :func:`writing`).

    With ``if_changed``, a file that already holds exactly ``data`` is left alone (nothing
    is written, so a finished folder can be read-only); returns whether it wrote.

    Raises:
        CarnacError: as :func:`writing`.
    """
    if if_changed and same_bytes(path, data):
        return False
    with writing(path) as handle:
        handle.write(data)
    return True


def write_text(path: str | os.PathLike[str], text: str, *, if_changed: bool = False) -> bool:
    """Write ``text`` (UTF-8, newlines as given) to ``path`` atomically; see :func:`write_bytes`."""
    return write_bytes(path, text.encode("utf-8"), if_changed=if_changed)


def write_json(path: str | os.PathLike[str], value: Any, *, if_changed: bool = False) -> bool:
    """Write ``value`` as JSON (indent 2, a final newline: the package's file format) to
    ``path`` atomically; see :func:`write_bytes`."""
    return write_text(path, json.dumps(value, indent=2) + "\n", if_changed=if_changed)


def same_bytes(path: str | os.PathLike[str], data: bytes) -> bool:
    """Whether ``path`` is a regular file (not a link) holding exactly ``data``; anything
    else (a folder, a device, a FIFO: never opened) is not."""
    if is_stdout(path):
        return False
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return False
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC)
    except OSError:
        return False
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size != len(data):
            return False
        return _read_all(fd, len(data) + 1) == data
    except OSError:
        return False
    finally:
        os.close(fd)


def _kind(info: os.stat_result) -> str:
    """What a file that is not a regular one is, in words (``"a FIFO (named pipe)"``)."""
    mode = info.st_mode
    kinds = (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    )
    return next((word for test, word in kinds if test(mode)), "not a regular file")


def _not_regular(info: os.stat_result) -> str:
    """What a file that is not a regular one is, in words."""
    return f"it is {_kind(info)}, not a regular file"


@contextmanager
def reading(
    path: str | os.PathLike[str], what: str = "", error: type[CarnacError] = CarnacError
) -> Iterator[IO[bytes]]:
    """``path`` opened for reading bytes, if it is a regular file (a symbolic link to one is
    followed: reading through a link writes nothing).

    The file is looked at (``stat``) before it is opened and refused if it is a FIFO, a device,
    a socket or a folder, then opened without blocking and looked at again (``fstat``), so a
    file swapped in between is refused too; opening a FIFO can therefore never wait for a
    writer. ``what`` names the file in messages (``"the panel file"``).

    Raises:
        CarnacError (or ``error``, a subclass): the file is missing, not a regular file, or
            cannot be opened, naming it and why.
    """
    name = f"{what} {os.fspath(path)}" if what else os.fspath(path)
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            raise error(f"cannot read {name}: {_not_regular(info)}")
        fd = os.open(path, os.O_RDONLY | _NONBLOCK | _CLOEXEC)
    except OSError as err:
        raise error(f"cannot read {name}: {_reason(err)}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise error(f"cannot read {name}: {_not_regular(info)}")
        if _NONBLOCK:
            import fcntl

            fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~_NONBLOCK)
        handle = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with handle:
        try:
            yield handle
        except OSError as err:
            raise error(f"cannot read {name}: {_reason(err)}") from None


def _open_regular(path: str | os.PathLike[str], flags: int, doing: str, *, keep: int | None = None) -> int:
    """A descriptor on the regular file ``path`` (created with ``O_CREAT`` in ``flags``),
    never through a symbolic link, never a FIFO or device (opened without blocking, then
    checked), and never a file with other hard links: such a file is first copied to a file of
    its own under the same name (its first ``keep`` bytes, or all), so writing it changes
    nothing seen through the other names."""
    for attempt in range(2):
        try:
            seen = os.lstat(path)
        except OSError:
            seen = None
        if seen is not None and not (stat.S_ISREG(seen.st_mode) or stat.S_ISLNK(seen.st_mode)):
            raise CarnacError(f"cannot {doing} {os.fspath(path)}: {_not_regular(seen)}")  # a device: never opened
        try:
            fd = os.open(path, flags | _NOFOLLOW | _NONBLOCK | _CLOEXEC, 0o666)
        except OSError as err:
            if err.errno == errno.ENXIO:  # a FIFO with no reader
                raise CarnacError(f"cannot {doing} {os.fspath(path)}: it is not a regular file") from None
            raise _fail(path, err, doing) from None
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            os.close(fd)
            raise CarnacError(f"cannot {doing} {os.fspath(path)}: {_not_regular(info)}")
        if info.st_nlink <= 1:
            break
        os.close(fd)
        try:  # another name shares this file: give this name a copy of its own, then open that
            source = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC)
            try:
                data = _read_all(source, info.st_size if keep is None else min(keep, info.st_size))
            finally:
                os.close(source)
        except OSError as err:
            raise _fail(path, err, "read") from None
        if attempt:
            raise CarnacError(f"cannot {doing} {os.fspath(path)}: it has other hard links and keeps getting new ones")
        write_bytes(path, data)
    if _NONBLOCK:
        import fcntl

        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~_NONBLOCK)
    return fd


def _read_all(fd: int, size: int) -> bytes:
    """``size`` bytes from ``fd`` (fewer if the file ends first)."""
    chunks, left = [], size
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


class Appender:
    """Appends whole lines to one file, each forced to disk (see :func:`appending`)."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd = fd

    def line(self, text: str) -> None:
        """Append ``text`` and a newline in one write, then fsync (a later kill keeps it).

        Raises:
            CarnacError: the write fails (a full disk), naming the file; the file then ends
                in at most a torn last line, which readers of such files drop.
        """
        data = (text + "\n").encode("utf-8")
        try:
            view = memoryview(data)
            while view:
                written = os.write(self._fd, view)
                view = view[written:]
            os.fsync(self._fd)
        except OSError as err:
            raise _fail(self.path, err) from None


@contextmanager
def appending(path: str | os.PathLike[str]) -> Iterator[Appender]:
    """``path`` opened for appending lines (created if missing): ``with appending(p) as out:
    out.line(text)``. The file must be a regular file; a symbolic link there (dangling or
    not) is refused, never followed, and a file with other hard links is copied first (the
    lines go to this name's own copy).

    Raises:
        CarnacError: the file cannot be opened or written, naming it.
    """
    target = Path(path)
    fd = _open_regular(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, "write")
    try:
        yield Appender(target, fd)
    finally:
        os.close(fd)


def append_line(path: str | os.PathLike[str], text: str) -> None:
    """Append one line (``text`` and a newline) to ``path`` durably; see :func:`appending`."""
    with appending(path) as out:
        out.line(text)


def truncate(path: str | os.PathLike[str], size: int) -> None:
    """Cut the regular file ``path`` to ``size`` bytes (never through a symbolic link; a
    file with other hard links is copied first, so they keep their bytes).

    Raises:
        CarnacError: it cannot be opened or cut, naming it.
    """
    fd = _open_regular(path, os.O_WRONLY, "write", keep=size)
    try:
        os.ftruncate(fd, size)
        os.fsync(fd)
    except OSError as err:
        raise _fail(path, err) from None
    finally:
        os.close(fd)


class FolderLock:
    """A held lock on an output folder; see :func:`lock_folder`.

    Attributes:
        folder: the locked folder.
        held: False when the folder is read-only for this process and has no lock file, so
            no lock could be taken (nothing can be written there either).
    """

    def __init__(self, folder: Path, fd: int | None, created: list[Path]) -> None:
        self.folder = folder
        self.held = fd is not None
        self._fd = fd
        self._created = created

    def release(self) -> None:
        """Remove the lock file, unlock, and remove the folders the lock created if they
        are still empty (a run refused early leaves no folder behind)."""
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        with suppress(OSError):
            os.unlink(self.folder / LOCK_NAME)  # while held: the next run makes a new one
        os.close(fd)  # releases the flock
        for folder in reversed(self._created):
            try:
                os.rmdir(folder)
            except OSError:
                break


def _holder(path: Path) -> str:
    """What the lock file says about its holder (for the refusal), or ''."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC)
        with os.fdopen(fd, "rb") as handle:
            info = json.loads(handle.read(1000).decode("utf-8"))
        return f" ({info['command']}, process {int(info['pid'])}, since {info['since']})"
    except (OSError, ValueError, KeyError, TypeError):
        return ""


def _make_folders(folder: Path) -> list[Path]:
    """Create ``folder`` and its missing parents; the ones created, outermost first."""
    missing = []
    current = folder
    while not current.exists() and current != current.parent:
        missing.append(current)
        current = current.parent
    created = []
    for path in reversed(missing):
        try:
            os.mkdir(path)
        except FileExistsError:
            continue
        except OSError as err:
            raise CarnacError(f"cannot create the output folder {folder}: {_reason(err)}") from None
        created.append(path)
    return created


def _open_lock_file(path: Path) -> int | None:
    """The lock file's descriptor (created if missing), None when the folder is read-only
    for this process and holds none."""
    flags = _NOFOLLOW | _NONBLOCK | _CLOEXEC
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | flags, 0o644)
    except OSError as err:
        if err.errno not in (errno.EACCES, errno.EPERM, errno.EROFS):
            raise CarnacError(f"cannot lock the output folder {path.parent}: {_reason(err)}") from None
        try:
            fd = os.open(path, os.O_RDONLY | flags)
        except FileNotFoundError:
            return None
        except OSError as err2:
            raise CarnacError(f"cannot lock the output folder {path.parent}: {_reason(err2)}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise CarnacError(f"cannot lock the output folder {path.parent}: {path} is not a regular file; remove it")
    return fd


def _take(folder: Path, command: str) -> int | None:
    """Lock ``folder`` (see :func:`lock_folder`); the lock file's descriptor."""
    import fcntl

    path = folder / LOCK_NAME
    for _ in range(100):
        fd = _open_lock_file(path)
        if fd is None:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as err:
            os.close(fd)
            if err.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise FolderBusyError(
                    f"the output folder {folder} is in use by another run{_holder(path)}; "
                    "wait for it to finish, or use another folder"
                ) from None
            raise CarnacError(f"cannot lock the output folder {folder}: {_reason(err)}") from None
        try:
            same = os.stat(path, follow_symlinks=False).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if not same:  # the holder removed the file as we opened it: take the new one
            os.close(fd)
            continue
        info = {"command": command, "pid": os.getpid(), "since": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        if os.fstat(fd).st_nlink > 1:
            return fd  # a hard link planted at the lock's name: it locks, but is never written
        try:
            os.ftruncate(fd, 0)
            os.write(fd, (json.dumps(info) + "\n").encode("utf-8"))
        except OSError:
            pass  # a read-only lock file still locks; only the holder's description is lost
        return fd
    raise CarnacError(f"cannot lock the output folder {folder}: its lock file keeps changing")


@contextmanager
def lock_folder(folder: str | os.PathLike[str], command: str = "run", *, create: bool = True) -> Iterator[FolderLock]:
    """Own the output folder ``folder`` for the block (``with lock_folder(out, "arena"):``).

    The folder (and its parents) is created if missing (``create``); the lock is an
    exclusive ``flock`` on ``FOLDER/.carnac.lock``, which says who holds it. It is taken
    without waiting: a folder held by another run, in this process or another, raises
    :class:`FolderBusyError` at once. The kernel drops the lock of a process that dies, so
    a lock file left by a kill never blocks a later run. On leaving the block the lock file
    is removed, and so are the folders this call created if they are still empty. A folder
    that is read-only for this process and holds no lock file is yielded unlocked
    (``held`` False): nothing can be written there, so only reading is possible.

    Raises:
        FolderBusyError: another run holds the folder (naming it, and the holder's
            command and process when the lock file says).
        CarnacError: the folder cannot be created, or is not a folder.
    """
    target = Path(folder)
    if target.exists() and not target.is_dir():
        raise CarnacError(f"the output folder {target} is not a folder")
    created = _make_folders(target) if create else []
    try:
        fd = _take(target, command)
    except BaseException:
        for path in reversed(created):
            try:
                os.rmdir(path)
            except OSError:
                break
        raise
    lock = FolderLock(target, fd, created)
    try:
        yield lock
    finally:
        lock.release()
