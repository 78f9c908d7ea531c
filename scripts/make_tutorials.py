"""The tutorials' Jupyter notebooks, executed, and the outputs their Markdown pages show.

    python scripts/make_tutorials.py                       # all seven: run each notebook, write it
                                                        # with its outputs, and the outputs into its page
    python scripts/make_tutorials.py --only alphazero.md   # one page and its notebook
    python scripts/make_tutorials.py --notebooks           # after editing only a page's prose: rewrite the
                                                        # notebooks, keeping the outputs of unchanged code
    python scripts/make_tutorials.py --check               # exit 1 if a notebook is stale
    python scripts/make_tutorials.py --time play-by-hand.md   # CPU and wall time of a page's code, run as a script

Each page in docs/tutorials/ is the one source. It becomes a notebook in
docs/tutorials/notebooks/ (Markdown cells and code cells; a ``python`` block is a code cell,
a ``bash`` block a ``%%bash`` cell with its ``pip install`` lines commented out, a block
titled like a file (```` ```python title="my_agents.py" ````) a ``%%writefile`` cell; the
page's links are rewritten to work from the notebook's folder, a tutorial page's to its
notebook). Generating runs that notebook with nbclient in a fresh temporary folder outside
the clone, as a student's "Run all" does, and stores what each cell printed and displayed
(stdout, pictures; stderr, such as progress bars and warnings, is left out). The page then
gets, after every ``python`` or ``bash`` block that printed something, an output block:

    <!-- output -->
    ```text
    ...what the block printed...
    ```

The pages that train networks (``TRAINING``) run with ``CARNAC_SMOKE=1``, the tiny budgets of
CI, and their outputs say so. Generating needs nbclient and ipykernel (the ``test`` extra),
and for the training pages PyTorch (the ``train`` extra).

**Outputs that depend on PyTorch.** A smoke run is deterministic for one PyTorch build (the
same seeds give the same losses and games), but another version of PyTorch trains a slightly
different network. A block whose printout depends on a trained network is marked in the page by
the line ``<!-- varies with torch -->`` just before it; its output block then gets a visible
title naming the PyTorch version it was printed with (``printed with torch 2.13.0+cpu: the
numbers vary with the PyTorch version``). Every other output is the same under any version.
Durations (a number followed by ``s``, as in a training log's ``update 1  0s (CPU 0s)``) are
the machine's and are never compared.

``tests/docs/test_notebooks.py`` checks that every notebook is the one its page makes, with the
outputs its page shows, that its links resolve, and executes each one ("Run all", smoke mode
for the training ones) in a fresh folder; ``tests/docs/test_tutorials.py`` runs each page's blocks
as a script (``run_page``) and compares what they print with the page (:func:`differences`):
exactly, except a marked block's output under another PyTorch version than the one recorded,
which must then keep its words and layout (:func:`shape`: numbers and True/False aside).
"""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

from carnac_env._files import write_text

HERE = Path(__file__).resolve().parent.parent / "docs"  # the pages this script reads and writes
TUTORIALS = HERE / "tutorials"
NOTEBOOKS = TUTORIALS / "notebooks"
#: the pages that train networks: run with CI's tiny budgets when recording their outputs
TRAINING = {"train-maskable-ppo.md", "self-play.md", "alphazero.md"}
#: the order of the pages (the course)
ORDER = [
    "play-by-hand.md",
    "write-an-agent.md",
    "train-maskable-ppo.md",
    "self-play.md",
    "alphazero.md",
    "what-the-network-sees.md",
    "perfect-play.md",
]
#: the note on the output blocks of a page run in smoke mode
SMOKE_NOTE = " (recorded with CARNAC_SMOKE=1: CI's tiny training budgets) "
#: the output types a stored notebook keeps, and the data of displays it keeps
KEPT_DATA = ("text/plain", "text/html", "image/svg+xml", "image/png")

FENCE = re.compile(
    r"^(?P<indent>[ \t]*)```(?P<lang>[\w-]*)(?P<info>[^\n]*)\n(?P<body>.*?)^(?P=indent)```[ \t]*\n?", re.M | re.S
)
TITLE = re.compile(r'title="(?P<file>[\w./-]+)"')
OUTPUT = re.compile(r"\n<!-- output(?P<note>[^>]*)-->\n```text[^\n]*\n.*?^```[ \t]*\n", re.M | re.S)
#: the line before a block whose output depends on the PyTorch version (a trained network)
VARIES = "<!-- varies with torch -->"
#: the title of such a block's output, with the version it was printed with
VARIES_TITLE = 'title="printed with torch {version}: the numbers vary with the PyTorch version"'
VERSION = re.compile(r'```text title="printed with torch (?P<version>[^:"]+):')
#: a Markdown link or image: [text](target) (targets without spaces)
LINK = re.compile(r"(?P<head>!?\[[^\]]*\]\()(?P<target>[^)\s]+)\)")

DRIVER = """
import contextlib, io, json, subprocess, sys
sys.path[0] = ""  # the folder the page runs in, as for a script there (the driver lives elsewhere)
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
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", code], check=True, stdout=subprocess.PIPE, text=True)
        outputs.append(done.stdout)
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


def environment(work: Path, smoke: bool) -> dict[str, str]:
    """The environment a page or notebook runs in: this interpreter's scripts first on the
    PATH, the work folder importable, matplotlib without a display, smoke mode as asked."""
    env = {
        **os.environ,
        "MPLBACKEND": "Agg",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(work), os.environ.get("PYTHONPATH", "")])),
    }
    env.pop("CARNAC_SMOKE", None)
    if smoke:
        env["CARNAC_SMOKE"] = "1"
    return env


def run_page(name: str, *, smoke: bool, keep: Path | None = None) -> list[str]:
    """Run the page's blocks as a script in a fresh folder (``keep``, an empty folder outside
    the clone, to look at what the page wrote there afterwards); returns what each block
    printed (stdout; ``""`` for a file block)."""
    text = strip_outputs((TUTORIALS / name).read_text(encoding="utf-8"))
    runnable = [(kind, code, line) for kind, code, line, _ in blocks(text)]
    with tempfile.TemporaryDirectory(prefix="carnac-tutorial-") as folder, tempfile.TemporaryDirectory() as own:
        work = Path(keep) if keep is not None else Path(folder)
        driver = Path(own)  # the driver and its files, apart from what the page writes
        (driver / "blocks.json").write_text(json.dumps(runnable))
        (driver / "driver.py").write_text(DRIVER)
        subprocess.run(
            [
                sys.executable,
                str(driver / "driver.py"),
                str(driver / "blocks.json"),
                name,
                str(driver / "outputs.json"),
            ],
            cwd=work,
            env=environment(work, smoke),
            check=True,
        )
        return json.loads((driver / "outputs.json").read_text())


def varies(text: str) -> list[bool]:
    """For every runnable block of a page (as :func:`blocks` lists them), whether the line
    before it is :data:`VARIES`: its output depends on the PyTorch version."""
    text = strip_outputs(text)
    starts = [m.start() for m in FENCE.finditer(text)]
    out = []
    for _, _, _, end in blocks(text):
        start = max(s for s in starts if s < end)
        out.append(text[:start].rstrip().endswith(VARIES))
    return out


def torch_version() -> str | None:
    """The installed PyTorch's version (None without it), read without importing it."""
    from importlib import metadata

    try:
        return metadata.version("torch")
    except metadata.PackageNotFoundError:
        return None


def with_outputs(text: str, outputs: list[str], note: str = " ", torch: str | None = None) -> str:
    """The page with an output block after every python or bash block that printed something;
    a block marked :data:`VARIES` gets the title naming ``torch``, the PyTorch version it was
    printed with (default: the one installed)."""
    marked = varies(text)
    text = strip_outputs(text)
    pieces, start = [], 0
    for (kind, _, _, end), printed, mark in zip(blocks(text), outputs, marked):
        if kind.startswith("file:") or not printed.strip():
            continue
        title = " " + VARIES_TITLE.format(version=torch or torch_version() or "unknown") if mark else ""
        pieces.append(text[start:end])
        pieces.append(f"\n<!-- output{note}-->\n```text{title}\n{printed.rstrip()}\n```\n")
        start = end
    pieces.append(text[start:])
    return "".join(pieces)


def recorded_outputs(text: str) -> list[str]:
    """The output blocks of a page, in order."""
    return [
        m.group(1).rstrip() for m in re.finditer(r"<!-- output[^>]*-->\n```text[^\n]*\n(.*?)^```", text, re.M | re.S)
    ]


def shown_per_block(text: str) -> list[str]:
    """For every runnable block of a page, the output block the page shows after it (``""``
    where none): what :func:`with_outputs` takes to rebuild the page."""
    out = []
    for _, _, _, end in blocks(text):
        m = OUTPUT.match(text, end)
        out.append(recorded_outputs(m.group(0))[0] + "\n" if m else "")
    return out


def recorded_versions(text: str) -> list[str | None]:
    """For each output block of a page, the PyTorch version its title names (None: not marked)."""
    return [
        (m.group("version") if (m := VERSION.match(header)) else None)
        for header in re.findall(r"<!-- output[^>]*-->\n(```text[^\n]*)\n", text)
    ]


#: a duration in an output (``0s``, ``12 s``, ``3.5s``): the machine's, not compared
DURATION = re.compile(r"(?<![\w.])\d+(?:\.\d+)?( ?)s\b")


def without_durations(text: str) -> str:
    """``text`` with every duration written ``#s`` (keeping its space), so that two runs
    compare equal whatever the machine's speed."""
    return DURATION.sub(r"#\1s", text)


def shape(text: str) -> str:
    """What stays of an output under another PyTorch version: the words and the layout, with
    every number (and True or False) written ``#`` and runs of spaces as one."""
    text = re.sub(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?", "#", text)
    text = re.sub(r"\b(?:True|False)\b", "#", text)
    return re.sub(r"[ \t]+", " ", text)


def differences(page: str, outputs: list[str], torch: str | None = None) -> list[str]:
    """How what a page's blocks printed (``outputs``, one per runnable block, from
    :func:`run_page`) differs from the output blocks the page shows: exactly, except a marked
    block's output (:data:`VARIES`) printed under another PyTorch version than its title
    names, which must only keep its :func:`shape`. An empty list: the page shows what its
    code prints."""
    import difflib

    torch = torch or torch_version()
    kinds = [kind for kind, _, _, _ in blocks(strip_outputs(page))]
    printed = [o.rstrip() for kind, o in zip(kinds, outputs) if not kind.startswith("file:") and o.strip()]
    shown, versions = recorded_outputs(page), recorded_versions(page)
    problems = []
    if len(printed) != len(shown):
        problems.append(f"{len(printed)} blocks printed something, the page shows {len(shown)} outputs")
    for index, (got, want, version) in enumerate(zip(printed, shown, versions)):
        if without_durations(got) == without_durations(want):
            continue
        if version is not None and version != torch and shape(got) == shape(want):
            continue  # printed under another PyTorch: its words and layout are the page's
        why = f"(recorded with torch {version}, run with {torch}: its words or layout differ)" if version else ""
        diff = "\n".join(difflib.unified_diff(want.splitlines(), got.splitlines(), "shown", "printed", lineterm=""))
        problems.append(f"output {index + 1} {why}\n{diff}")
    return problems


# --------------------------------------------------------------------------- links
def _site_url() -> str | None:
    """mkdocs.yml's ``site_url``, if the site is published somewhere."""
    config = HERE.parent / "mkdocs.yml"
    if not config.exists():
        return None
    m = re.search(r"^site_url:\s*(\S+)\s*$", config.read_text(encoding="utf-8"), re.M)
    return m.group(1).rstrip("/") + "/" if m else None


def notebook_link(target: str) -> str:
    """A page's link target (relative to docs/tutorials/) as it works from the notebooks'
    folder: a tutorial page becomes its notebook, another page of the site the page on the
    published site (mkdocs.yml's ``site_url``) or, without one, the file in the clone."""
    if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith(("#", "/")):
        return target  # a web address, an anchor of this page, or an absolute path
    path, _, anchor = target.partition("#")
    resolved = os.path.normpath(TUTORIALS / path)
    if os.path.dirname(resolved) == str(TUTORIALS) and os.path.basename(resolved) in ORDER:
        return Path(resolved).stem + ".ipynb"  # another tutorial: its notebook, beside this one
    site = _site_url()
    docs = str(HERE)
    if site and resolved.endswith(".md") and resolved.startswith(docs + os.sep):
        page = os.path.relpath(resolved, docs)[: -len(".md")].replace(os.sep, "/")
        page = "" if page == "index" else page.removesuffix("/index") + "/"
        return site + page + (f"#{anchor}" if anchor else "")
    relative = os.path.relpath(resolved, NOTEBOOKS).replace(os.sep, "/")
    return relative + (f"#{anchor}" if anchor else "")


def _relink(markdown: str) -> str:
    return LINK.sub(lambda m: f"{m.group('head')}{notebook_link(m.group('target'))})", markdown)


# --------------------------------------------------------------------------- notebooks
def notebook(name: str, text: str) -> dict:
    """The page as a notebook (nbformat 4, as a plain dict), without outputs: Markdown cells
    between code cells, links rewritten for the notebook's folder."""
    text = strip_outputs(text)
    cells: list[dict] = []

    def markdown(chunk: str) -> None:
        chunk = chunk.strip("\n")
        if chunk.strip():
            cells.append({"cell_type": "markdown", "metadata": {}, "source": _relink(chunk)})

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
    smoke = (
        " The outputs stored here are from a run with `CARNAC_SMOKE=1` (CI's tiny training budgets); to run it"
        " that way, start Jupyter with `CARNAC_SMOKE=1 jupyter lab` or run `%env CARNAC_SMOKE=1` first."
        if name in TRAINING
        else ""
    )
    cells.insert(
        0,
        {
            "cell_type": "markdown",
            "metadata": {},
            "source": f"*This notebook is made from the page `docs/tutorials/{name}` by `scripts/make_tutorials.py`;"
            f' its cells run in any folder after installing the package ("Run all").{smoke}*',
        },
    )
    for index, cell in enumerate(cells):
        cell["id"] = f"{Path(name).stem}-{index}"
    return {
        "cells": cells,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
            "carnac": {"source": f"docs/tutorials/{name}", "generated_by": "scripts/make_tutorials.py"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def notebook_path(name: str) -> Path:
    return NOTEBOOKS / (Path(name).stem + ".ipynb")


def to_text(nb: dict) -> str:
    """The notebook file's text as stored."""
    return json.dumps(nb, indent=1, ensure_ascii=False, sort_keys=True) + "\n"


def execute(nb: dict, work: Path, smoke: bool, timeout: int = 900) -> dict:
    """Run every cell of ``nb`` in order ("Run all") with nbclient in the folder ``work``;
    returns the executed notebook (a new dict, every output nbclient recorded)."""
    import nbclient
    import nbformat

    node = nbformat.from_dict(copy.deepcopy(nb))
    saved, wanted = dict(os.environ), environment(work, smoke)
    os.environ.clear()  # the kernel inherits this process's environment
    os.environ.update(wanted)
    try:
        client = nbclient.NotebookClient(
            node,
            timeout=timeout,
            kernel_name="python3",
            record_timing=False,
            resources={"metadata": {"path": str(work)}},
        )
        client.execute()
    finally:
        os.environ.clear()
        os.environ.update(saved)
    ran = json.loads(nbformat.writes(node))
    for cell in ran["cells"]:  # nbformat stores text as lists of lines; this module, as strings
        if isinstance(cell["source"], list):
            cell["source"] = "".join(cell["source"])
    return ran


def kept_outputs(cell: dict) -> list[dict]:
    """The outputs of an executed cell that a stored notebook keeps: stdout, displays
    (their text, HTML and pictures) and errors; not stderr."""
    kept: list[dict] = []
    for output in cell.get("outputs", []):
        kind = output["output_type"]
        if kind == "stream" and output["name"] == "stdout":
            text = "".join(output["text"]) if isinstance(output["text"], list) else output["text"]
            if kept and kept[-1]["output_type"] == "stream":  # one block of text per cell
                kept[-1]["text"] += text
            else:
                kept.append({"output_type": "stream", "name": "stdout", "text": text})
        elif kind in ("display_data", "execute_result"):
            data = {k: v for k, v in output.get("data", {}).items() if k in KEPT_DATA}
            entry = {"output_type": kind, "data": data, "metadata": {}}
            if kind == "execute_result":
                entry["execution_count"] = output.get("execution_count")
            kept.append(entry)
        elif kind == "error":
            kept.append({k: output[k] for k in ("output_type", "ename", "evalue", "traceback")})
    return kept


def printed(nb: dict) -> list[str]:
    """What each code cell but the ``%%writefile`` ones printed (stdout), in order; ``""``
    for a cell that printed nothing."""
    out = []
    for cell in nb["cells"]:
        if cell["cell_type"] != "code" or cell["source"].startswith("%%writefile"):
            continue
        out.append(
            "".join(
                "".join(o["text"]) if isinstance(o["text"], list) else o["text"]
                for o in cell.get("outputs", [])
                if o["output_type"] == "stream" and o["name"] == "stdout"
            )
        )
    return out


def _page_outputs(page: str, texts: list[str]) -> list[str]:
    """``texts`` (one per non-file code cell) laid out as ``with_outputs`` wants them (one per block)."""
    texts = iter(texts)
    return ["" if kind.startswith("file:") else next(texts) for kind, _, _, _ in blocks(strip_outputs(page))]


def generate(name: str) -> None:
    """Execute the notebook of page ``name`` in a fresh folder; write the notebook with its
    outputs and the outputs into the page."""
    page_path = TUTORIALS / name
    page = page_path.read_text(encoding="utf-8")
    nb = notebook(name, page)
    smoke = name in TRAINING
    with tempfile.TemporaryDirectory(prefix="carnac-notebook-") as folder:
        ran = execute(nb, Path(folder), smoke)
    for cell, done in zip(nb["cells"], ran["cells"]):
        if cell["cell_type"] == "code":
            cell["outputs"] = kept_outputs(done)
            cell["execution_count"] = done.get("execution_count")
    page = with_outputs(page, _page_outputs(page, printed(nb)), SMOKE_NOTE if smoke else " ", torch_version())
    write_text(page_path, page)
    NOTEBOOKS.mkdir(exist_ok=True)
    write_text(notebook_path(name), to_text(nb))
    print(
        f"wrote {notebook_path(name).relative_to(HERE.parent)} and the outputs of {page_path.relative_to(HERE.parent)}"
    )


def stale(name: str) -> str | None:
    """Why the stored notebook of page ``name`` is not the one the page makes (its cells, or
    outputs that differ from the page's output blocks), or None."""
    path = notebook_path(name)
    if not path.exists():
        return "missing"
    stored = json.loads(path.read_text(encoding="utf-8"))
    page = (TUTORIALS / name).read_text(encoding="utf-8")
    fresh = notebook(name, page)
    if [(c["cell_type"], c["source"]) for c in stored["cells"]] != [
        (c["cell_type"], c["source"]) for c in fresh["cells"]
    ]:
        return "its cells differ from the page"
    shown = [text.rstrip() for text in printed(stored) if text.strip()]
    if shown != recorded_outputs(page):
        return "its outputs differ from the page's output blocks"
    if any(cell["cell_type"] == "code" and cell["execution_count"] is None for cell in stored["cells"]):
        return "a cell was never run"
    return None


def rewrite_keeping_outputs(name: str) -> None:
    """Rewrite the notebook from the page, keeping the stored outputs; refuses when a code
    cell changed (its outputs would no longer be its own)."""
    path = notebook_path(name)
    stored = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {"cells": []}
    fresh = notebook(name, (TUTORIALS / name).read_text(encoding="utf-8"))
    old = [c for c in stored["cells"] if c["cell_type"] == "code"]
    new = [c for c in fresh["cells"] if c["cell_type"] == "code"]
    if [c["source"] for c in old] != [c["source"] for c in new]:
        raise SystemExit(f"{name}: its code changed; run python scripts/make_tutorials.py --only {name}")
    for cell, before in zip(new, old):
        cell["outputs"], cell["execution_count"] = before["outputs"], before["execution_count"]
    write_text(path, to_text(fresh))
    print(f"wrote {path.relative_to(HERE.parent)} (outputs kept)")


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args == ["--check"]:
        problems = [(name, why) for name in ORDER if (why := stale(name))]
        for name, why in problems:
            stale_path = notebook_path(name).relative_to(HERE.parent)
            print(f"stale: {stale_path}: {why} (run python scripts/make_tutorials.py)")
        return 1 if problems else 0
    if args[:1] == ["--time"] and args[1:] and all(name in ORDER for name in args[1:]):
        import resource
        import time

        for name in args[1:]:
            usage = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu, start = usage.ru_utime + usage.ru_stime, time.perf_counter()
            run_page(name, smoke=name in TRAINING)
            usage = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = usage.ru_utime + usage.ru_stime - cpu
            smoke = " (CARNAC_SMOKE=1)" if name in TRAINING else ""
            print(f"{name}{smoke}: {cpu:.1f} s of CPU, {time.perf_counter() - start:.1f} s wall")
        return 0
    if args == ["--notebooks"]:
        for name in ORDER:
            rewrite_keeping_outputs(name)
        return 0
    if args and (args[0] != "--only" or not args[1:] or any(name not in ORDER for name in args[1:])):
        print(__doc__)
        print(f"pages: {', '.join(ORDER)}")
        return 2
    for name in args[1:] if args else ORDER:
        generate(name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
