"""The tutorials as Jupyter notebooks: generated from the Markdown pages (never edited by hand),
executed with nbclient, printing what the pages show; and the inline display of a game and an
environment in Jupyter (``_repr_svg_``)."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest
from _frameworks import require
from _scripts import load_script

import carnac_env
from carnac_env.core.game import GameState

ROOT = Path(__file__).resolve().parent.parent
TUTORIALS = ROOT / "docs" / "tutorials"


def _make_tutorials():
    return load_script("docs/make_tutorials.py")


MAKE = _make_tutorials()


@pytest.mark.parametrize("name", MAKE.ORDER)
def test_notebook_is_generated_from_its_page(name):
    path = MAKE.notebook_path(name)
    assert path.exists(), f"{path} is missing; run python docs/make_tutorials.py --notebooks"
    assert path.read_text(encoding="utf-8") == MAKE.notebook_text(name), (
        f"{path.name} is stale; run python docs/make_tutorials.py --notebooks"
    )


def test_every_page_has_a_notebook_and_links_it():
    assert sorted(MAKE.ORDER) == sorted(p.name for p in TUTORIALS.glob("*.md"))
    for name in MAKE.ORDER:
        assert f"notebooks/{Path(name).stem}.ipynb" in (TUTORIALS / name).read_text(encoding="utf-8")


def test_notebook_cells_follow_the_page():
    page = (TUTORIALS / "write-an-agent.md").read_text(encoding="utf-8")
    notebook = MAKE.notebook("write-an-agent.md", page)
    code = [cell["source"] for cell in notebook["cells"] if cell["cell_type"] == "code"]
    assert code[0].startswith("%%writefile my_agents.py\n")
    assert any(cell.startswith("%%bash\nPYTHONPATH=. carnac arena") for cell in code)
    markdown = "".join(cell["source"] for cell in notebook["cells"] if cell["cell_type"] == "markdown")
    assert "<!-- output" not in markdown and "```python" not in markdown


def recorded_outputs(page: str) -> list[str]:
    return [m.group(1).rstrip() for m in re.finditer(r"<!-- output[^>]*-->\n```text\n(.*?)^```", page, re.M | re.S)]


def execute(name: str, tmp_path: Path, smoke: bool) -> dict:
    nbclient = require("nbclient", "pip install nbclient ipykernel (the test extra)")
    require("ipykernel", "the notebook kernel (the test extra)")
    nbformat = require("nbformat")
    notebook = nbformat.reads(MAKE.notebook_path(name).read_text(encoding="utf-8"), as_version=4)
    if (ROOT / "examples").is_dir():
        (tmp_path / "examples").symlink_to(ROOT / "examples")
    saved = dict(os.environ)
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tmp_path), str(ROOT), saved.get("PYTHONPATH", "")]))
    os.environ["MPLBACKEND"] = "Agg"
    os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), saved.get("PATH", "")])
    os.environ.pop("CARNAC_SMOKE", None)
    if smoke:
        os.environ["CARNAC_SMOKE"] = "1"
    try:
        client = nbclient.NotebookClient(
            notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
        )
        client.execute()
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return notebook


def printed(notebook: dict) -> list[str]:
    """What each Python code cell printed (cells that printed nothing left out)."""
    out = []
    for cell in notebook["cells"]:
        if cell["cell_type"] != "code" or cell["source"].startswith(("%%", "!")):
            continue
        text = "".join(
            o.get("text", "") for o in cell["outputs"] if o["output_type"] == "stream" and o["name"] == "stdout"
        )
        if text.strip():
            out.append(text.rstrip())
    return out


@pytest.mark.parametrize("name", ["play-by-hand.md", "write-an-agent.md"])
def test_notebook_runs_and_prints_what_the_page_shows(name, tmp_path):
    notebook = execute(name, tmp_path, smoke=False)
    page = (TUTORIALS / name).read_text(encoding="utf-8")
    assert printed(notebook) == recorded_outputs(page)
    if name == "play-by-hand.md":
        shown = [o for c in notebook["cells"] if c["cell_type"] == "code" for o in c["outputs"]]
        assert any("image/svg+xml" in o.get("data", {}) for o in shown), "the game should display as SVG"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(MAKE.TRAINING))
def test_training_notebook_runs_in_smoke_mode(name, tmp_path):
    require("torch", "the train extra")
    execute(name, tmp_path, smoke=True)


def test_game_and_env_display_inline_as_svg():
    """In IPython a GameState is shown by render/'s SVG (registered by type name, so the core
    imports no renderer), and the envs show their game the same way."""
    formatters = pytest.importorskip("IPython.core.formatters")
    from carnac_env.render.jupyter import register
    from carnac_env.render.svg import state_svg

    formatter = formatters.SVGFormatter()
    state = GameState("small")
    assert formatter(state) is None  # unknown to a fresh formatter
    register(formatter)
    state.apply(4 * 18)
    svg = formatter(state)
    assert svg == state_svg(state) and svg.startswith("<svg") and svg.endswith("</svg>")
    assert "Dolmens now" in svg and 'class="preview"' in svg and 'class="pending"' in svg
    env = carnac_env.env(board="small")
    env.reset()
    assert env._repr_svg_() == state_svg(GameState("small"))
    assert env.unwrapped._repr_svg_() == env._repr_svg_()
    json.dumps(svg)  # plain text, nothing binary
