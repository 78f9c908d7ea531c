"""The README's two set-up commands, timed as a newcomer meets them: CPU and wall time of each.

    python benchmarks/readme_commands.py                 # both, in a fresh copy and a fresh venv
    python benchmarks/readme_commands.py --only arena    # command 1: pip install -e . && carnac arena
    python benchmarks/readme_commands.py --only tests    # command 2: pytest -m "not slow" -n auto
    python benchmarks/readme_commands.py --write         # ... and put the numbers into README.md

The working tree's files (tracked and untracked, not ignored) are copied to a temporary folder,
so nothing is cached there (the numba kernels compile on the first run, as in a fresh clone),
and a fresh virtual environment is made beside it (``--venv PATH`` uses an existing one
instead). Each step runs as its own command; its CPU time is the user + system time of
the command and every process it waited for (pytest's subprocesses, the arena's workers),
read with ``getrusage(RUSAGE_CHILDREN)``. The installs are timed apart from the commands
they prepare: they depend on the network and pip's cache, not on this package.

This measures commands, not speed against a peer (benchmarks/ has those): the numbers are
what the README states, on the machine it ran on. Run it on an otherwise idle machine (the
project's: 2 cores) and say so; with other jobs running the wall times grow, the CPU times
much less.

``--write`` replaces the measured figures in README.md's set-up block (the comment lines that
name this script), so the claim is updated by rerunning one command.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from carnac_env._files import write_text

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
#: The quick suite, as the README's test command runs it.
TEST_COMMAND = ["-m", "pytest", "-q", "-m", "not slow", "-n", "auto", "-p", "no:cacheprovider"]


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(label: str, command: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, int]:
    """Run ``command``; returns (CPU seconds, wall seconds, exit status) and prints them."""
    print(f"--- {label}: {' '.join(command)}", flush=True)
    cpu, start = children_cpu(), time.perf_counter()
    status = subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL).returncode
    cpu, wall = children_cpu() - cpu, time.perf_counter() - start
    print(f"    {label}: {cpu:.0f} s CPU, {wall:.0f} s wall, exit {status}", flush=True)
    return cpu, wall, status


def copy_tree(target: Path) -> None:
    """The working tree's files (tracked and untracked, not ignored) under ``target``."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, listed):
        source = ROOT / os.fsdecode(name)
        if source.is_file():
            (target / os.fsdecode(name)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / os.fsdecode(name))
    shared = ROOT.parent / "shared"
    if shared.is_dir() and not (target.parent / "shared").exists():
        (target.parent / "shared").symlink_to(shared)  # the rules reference some tests read


def minutes(seconds: float) -> str:
    """``"1 min 51 s"`` or ``"48 s"``."""
    seconds = round(seconds)
    return f"{seconds // 60} min {seconds % 60} s" if seconds >= 60 else f"{seconds} s"


def claim(cpu: float, wall: float, cores: int, load: float = 0.0) -> str:
    """``"measured: 1 min 51 s of CPU, 2 min 3 s wall on 2 cores"``, with the load average the
    machine had from other jobs when it was more than one."""
    busy = f" (load average {load:.1f} from other jobs)" if load > 1 else ""
    return f"measured: {minutes(cpu)} of CPU, {minutes(wall)} wall on {cores} cores{busy}"


def write_readme(results: dict[str, tuple[float, float]], cores: int, load: float) -> None:
    """Put the figures into README.md's set-up comments (the lines naming this script)."""
    text = README.read_text(encoding="utf-8")
    for only, (cpu, wall) in results.items():
        script = f"python benchmarks/readme_commands.py --only {only}"
        pattern = re.compile(rf"measured: [^:\n]*: {re.escape(script)}")
        text, count = pattern.subn(f"{claim(cpu, wall, cores, load)}: {script}", text)
        if count != 1:
            raise SystemExit(f"README.md: expected one measured claim naming {script!r}, found {count}")
    write_text(README, text)
    print(f"wrote the figures into {README}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=("arena", "tests"), default=None, help="time one command only")
    parser.add_argument("--venv", default=None, help="use this virtual environment instead of a fresh one")
    parser.add_argument("--write", action="store_true", help="put the measured figures into README.md")
    parser.add_argument("--keep", action="store_true", help="keep the temporary copy and venv (printed)")
    args = parser.parse_args(argv)

    folder = Path(tempfile.mkdtemp(prefix="carnac-readme-"))
    work = folder / "carnac_env"
    work.mkdir()
    copy_tree(work)
    venv = Path(args.venv) if args.venv else folder / "venv"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "CARNAC_SMOKE")}
    if not args.venv:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--upgrade", "pip"], check=True)
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(venv)
    python = str(venv / "bin" / "python")
    cores = os.cpu_count() or 1
    load = os.getloadavg()[0]
    print(f"copy: {work}; venv: {venv}; {cores} cores, load average {load:.1f} at the start", flush=True)

    results: dict[str, tuple[float, float]] = {}
    failed = False
    if args.only in (None, "arena"):
        timed("install", [python, "-m", "pip", "install", "-q", "-e", "."], work, env)
        out = folder / "first-arena"
        out.mkdir()
        cpu, wall, status = timed("carnac arena", [str(venv / "bin" / "carnac"), "arena"], out, env)
        failed |= status != 0
        results["arena"] = (cpu, wall)
        again = folder / "second-arena"
        again.mkdir()
        timed("carnac arena again (kernels compiled)", [str(venv / "bin" / "carnac"), "arena"], again, env)
    if args.only in (None, "tests"):
        timed("install the test extra", [python, "-m", "pip", "install", "-q", "-e", ".[test]"], work, env)
        cpu, wall, status = timed("pytest -m 'not slow' -n auto", [python, *TEST_COMMAND], work, env)
        failed |= status != 0
        results["tests"] = (cpu, wall)
    load = max(load, os.getloadavg()[0])
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
    for only, (cpu, wall) in results.items():
        print(f"{only:6} {claim(cpu, wall, cores, load)}")
    if args.write and not failed:
        write_readme(results, cores, load)
    if args.keep:
        print(f"kept {folder}")
    else:
        shutil.rmtree(folder, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
