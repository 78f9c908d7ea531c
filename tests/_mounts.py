"""Small file systems for tests: a full disk (a tiny tmpfs) and a read-only folder.

``small_tmpfs(path)`` mounts a 64 KiB tmpfs at ``path`` (root with CAP_SYS_ADMIN, as on
CI and the development machines); elsewhere the test is skipped and says why.
``read_only_copy(src, path)`` gives a read-only copy of a folder: a tmpfs remounted
read-only when this process is root (root ignores permission bits), else a copy with its
write bits removed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def _mount(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["mount", *args], capture_output=True, text=True, check=False)


@contextmanager
def small_tmpfs(path: Path, size: str = "64k") -> Iterator[Path]:
    """A tmpfs of ``size`` mounted at ``path`` for the block (skip where mounting is not allowed)."""
    path.mkdir(parents=True, exist_ok=True)
    if shutil.which("mount") is None:
        pytest.skip("no mount command here, so no small file system to fill")
    done = _mount("-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path))
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here (needs root with CAP_SYS_ADMIN): {done.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


@contextmanager
def read_only_copy(source: Path, path: Path) -> Iterator[Path]:
    """A read-only copy of the folder ``source`` at ``path`` for the block."""
    if os.geteuid() != 0:
        shutil.copytree(source, path)
        for item in [path, *path.rglob("*")]:
            item.chmod(item.stat().st_mode & ~0o222)
        try:
            yield path
        finally:
            for item in [path, *path.rglob("*")]:
                item.chmod(item.stat().st_mode | 0o200)
        return
    with small_tmpfs(path, size="16m"):
        for item in source.iterdir():
            if item.is_dir():
                shutil.copytree(item, path / item.name)
            else:
                shutil.copy2(item, path / item.name)
        done = _mount("-o", "remount,ro", str(path))
        if done.returncode != 0:
            pytest.skip(f"cannot remount the copy read-only: {done.stderr.strip()}")
        yield path
