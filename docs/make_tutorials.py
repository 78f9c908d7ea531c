"""The tutorials' expected output and their Jupyter notebooks, made from the Markdown pages.

    python docs/make_tutorials.py                 # run the tutorials, write their outputs into
                                                  # the pages and the notebooks beside them
    python docs/make_tutorials.py --only play-by-hand.md   # one page (and all notebooks)
    python docs/make_tutorials.py --notebooks     # only rewrite the notebooks (no running)
    python docs/make_tutorials.py --check         # exit 1 if a notebook is stale

Each page in docs/tutorials/ is the one source. Running a page means running its code blocks
in order in a fresh folder, as ``tests/test_tutorials.py`` does: ``python`` blocks in one
shared namespace, ``bash`` blocks in a shell (without their ``pip install`` lines), and a
block titled like a file (```` ```python title="my_agents.py" ````) saved as that file. After
every ``python`` block that prints something, the page gets an output block:

    <!-- output -->
    ```text
    ...what the block printed...
    ```

The pages that train networks (see ``TRAINING``) run with ``CARNAC_SMOKE=1``, the tiny
budgets of CI, and their outputs say so. Every page also becomes a notebook in
docs/tutorials/notebooks/ (Markdown cells and code cells, no stored outputs; a file block
becomes a ``%%writefile`` cell, a bash block a ``%%bash`` cell), so the two never drift:
``tests/test_notebooks.py`` checks the notebooks against the pages and executes them.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

from carnac_env._files import write_text

HERE = Path(__file__).resolve().parent
TUTORIALS = HERE / "tutorials"
NOTEBOOKS = TUTORIALS / "notebooks"
#: the pages that train networks: run with CI's tiny budgets when recording their outputs
TRAINING = {"train-maskable-ppo.md", "self-play.md", "alphazero.md"}
#: the order of the pages (the course)
ORDER = ["play-by-hand.md", "write-an-agent.md", "train-maskable-ppo.md", "self-play.md", "alphazero.md"]

FENCE = re.compile(
    r"^(?P<indent>[ \t]*)```(?P<lang>[\w-]*)(?P<info>[^\n]*)\n(?P<body>.*?)^(?P=indent)```[ \t]*\n?", re.M | re.S
)
TITLE = re.compile(r'title="(?P<file>[\w./-]+)"')
OUTPUT = re.compile(r"\n<!-- output(?P<note>[^>]*)-->\n```text\n.*?^```[ \t]*\n", re.M | re.S)

DRIVER = """
import contextlib, io, json, subprocess, sys
blocks = json.load(open(sys.argv[1]))
namespace = {"__name__": "__main__"}
outputs = []
for index, (lang, code, line) in enumerate(blocks):
    if lang.startswith("file:"):
        open(lang[5:], "w").write(code)
        outputs.append("")
    elif lang == "python":
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            exec(compile(code, f"<{sys.argv[2]} block {index}, line {line}>", "exec"), namespace)
        outputs.append(buffer.getvalue())
    else:
        subprocess.run(["bash", "-euo", "pipefail", "-c", code], check=True, stdout=subprocess.DEVNULL)
        outputs.append("")
json.dump(outputs, open(sys.argv[3], "w"))
"""


def strip_outputs(text: str) -> str:
    """The page without its recorded output blocks."""
    return OUTPUT.sub("", text)


def blocks(text: str) -> list[tuple[str, str, int, int]]:
    """``(kind, code, line, end)`` of every runnable block of a page (outputs stripped first):
    kind ``python``, ``bash`` (``pip install`` lines dropped) or ``file:NAME``; ``end`` is the
    offset just after the block's closing fence."""
    out = []
    for m in FENCE.finditer(text):
        lang, body = m.group("lang"), textwrap.dedent(m.group("body"))
        line = text.count("\n", 0, m.start()) + 1
        title = TITLE.search(m.group("info"))
        if title:
            out.append((f"file:{title.group('file')}", body, line, m.end()))
        elif lang == "python":
            out.append(("python", body, line, m.end()))
        elif lang == "bash":
            kept = [ln for ln in body.splitlines() if not ln.strip().startswith("pip install")]
            if any(ln.strip() and not ln.strip().startswith("#") for ln in kept):
                out.append(("bash", "\n".join(kept), line, m.end()))
    return out


def run_page(name: str, *, smoke: bool, repo: Path | None = None) -> list[str]:
    """Run the page's blocks in a fresh folder; returns what each block printed."""
    text = strip_outputs((TUTORIALS / name).read_text(encoding="utf-8"))
    runnable = [(kind, code, line) for kind, code, line, _ in blocks(text)]
    with tempfile.TemporaryDirectory(prefix="carnac-tutorial-") as folder:
        work = Path(folder)
        (work / "blocks.json").write_text(json.dumps(runnable))
        (work / "driver.py").write_text(DRIVER)
        if repo is not None and (repo / "examples").is_dir():
            (work / "examples").symlink_to(repo / "examples")
        env = {
            **os.environ,
            "MPLBACKEND": "Agg",
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
            "PYTHONPATH": os.pathsep.join(filter(None, [str(work), os.environ.get("PYTHONPATH", "")])),
        }
        env.pop("CARNAC_SMOKE", None)
        if smoke:
            env["CARNAC_SMOKE"] = "1"
        subprocess.run(
            [sys.executable, "driver.py", "blocks.json", name, "outputs.json"], cwd=work, env=env, check=True
        )
        return json.loads((work / "outputs.json").read_text())


def with_outputs(text: str, outputs: list[str], note: str = "") -> str:
    """The page with an output block after every python block that printed something."""
    text = strip_outputs(text)
    pieces, start = [], 0
    for (kind, _, _, end), printed in zip(blocks(text), outputs):
        if kind != "python" or not printed.strip():
            continue
        pieces.append(text[start:end])
        pieces.append(f"\n<!-- output{note}-->\n```text\n{printed.rstrip()}\n```\n")
        start = end
    pieces.append(text[start:])
    return "".join(pieces)


def notebook(name: str, text: str) -> dict:
    """The page as a notebook (nbformat 4, as a plain dict): Markdown cells between code cells."""
    text = strip_outputs(text)
    cells: list[dict] = []

    def markdown(chunk: str) -> None:
        chunk = chunk.strip("\n")
        if chunk.strip():
            cells.append({"cell_type": "markdown", "metadata": {}, "source": chunk})

    def code(source: str) -> None:
        cells.append(
            {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source.rstrip("\n")}
        )

    start = 0
    for m in FENCE.finditer(text):
        lang, info, body = m.group("lang"), m.group("info"), textwrap.dedent(m.group("body"))
        title = TITLE.search(info)
        if not (title or lang in ("python", "bash")):
            continue  # text and console blocks stay in the Markdown
        markdown(text[start : m.start()])
        if title:
            code(f"%%writefile {title.group('file')}\n{body}")
        elif lang == "python":
            code(body)
        else:
            lines = ["%%bash"]
            for ln in body.splitlines():
                if ln.strip().startswith("pip install"):
                    lines.append(f"# {ln.strip()}  (in a terminal, once)")
                else:
                    lines.append(ln)
            code("\n".join(lines))
        start = m.end()
    markdown(text[start:])
    for index, cell in enumerate(cells):
        cell["id"] = f"{Path(name).stem}-{index}"
    return {
        "cells": cells,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
            "carnac": {"source": f"docs/tutorials/{name}", "generated_by": "docs/make_tutorials.py"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def notebook_text(name: str) -> str:
    """The notebook file of page ``name`` as it should be on disk."""
    page = (TUTORIALS / name).read_text(encoding="utf-8")
    return json.dumps(notebook(name, page), indent=1, ensure_ascii=False) + "\n"


def notebook_path(name: str) -> Path:
    return NOTEBOOKS / (Path(name).stem + ".ipynb")


def _current(name: str) -> bool:
    path = notebook_path(name)
    return path.exists() and path.read_text(encoding="utf-8") == notebook_text(name)


def write_notebooks() -> None:
    NOTEBOOKS.mkdir(exist_ok=True)
    for name in ORDER:
        write_text(notebook_path(name), notebook_text(name))
        print(f"wrote {notebook_path(name).relative_to(HERE.parent)}")


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args == ["--check"]:
        stale = [
            name
            for name in ORDER
            if not notebook_path(name).exists()
            or notebook_path(name).read_text(encoding="utf-8") != notebook_text(name)
        ]
        for name in stale:
            print(
                f"stale: {notebook_path(name).relative_to(HERE.parent)} (run python docs/make_tutorials.py --notebooks)"
            )
        return 1 if stale else 0
    if args not in ([], ["--notebooks"]) and not (args and args[0] == "--only"):
        print(__doc__)
        return 2
    if not args or args[0] == "--only":
        names = args[1:] if args else ORDER
        for name in names:
            page = TUTORIALS / name
            smoke = name in TRAINING
            outputs = run_page(name, smoke=smoke, repo=HERE.parent)
            note = " (recorded with CARNAC_SMOKE=1: CI's tiny training budgets) " if smoke else " "
            write_text(page, with_outputs(page.read_text(encoding="utf-8"), outputs, note))
            print(f"wrote the outputs of {page.relative_to(HERE.parent)}")
    write_notebooks()
    return 0


if __name__ == "__main__":
    sys.exit(main())
