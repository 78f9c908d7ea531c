"""The tutorials as Jupyter notebooks: generated from the Markdown pages (never edited by hand),
executed with nbclient, printing what the pages show; and the inline display of a game and an
environment in Jupyter (``_repr_svg_``)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from _frameworks import require
from _paths import ROOT
from _scripts import load_script

import carnac_env
from carnac_env.core.game import GameState

TUTORIALS = ROOT / "docs" / "tutorials"


def _make_tutorials():
    return load_script("scripts/make_tutorials.py")


MAKE = _make_tutorials()


@pytest.mark.parametrize("name", MAKE.ORDER)
def test_notebook_is_generated_from_its_page_with_the_outputs_it_shows(name):
    """The stored notebook has the cells its page makes, every code cell run, and the outputs
    the page shows (python scripts/make_tutorials.py writes both from one run)."""
    why = MAKE.stale(name)
    assert why is None, f"{MAKE.notebook_path(name).name}: {why}; run python scripts/make_tutorials.py --only {name}"
    stored = json.loads(MAKE.notebook_path(name).read_text(encoding="utf-8"))
    shown = [text.rstrip() for text in MAKE.printed(stored) if text.strip()]
    assert shown and shown == MAKE.recorded_outputs((TUTORIALS / name).read_text(encoding="utf-8"))
    outputs = [o for c in stored["cells"] if c["cell_type"] == "code" for o in c["outputs"]]
    assert all(o.get("name") != "stderr" for o in outputs)  # progress bars and warnings are left out


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
    assert notebook["cells"][0]["source"].startswith("*This notebook is made from the page")


def _slug(heading: str) -> str:
    """A heading's anchor as mkdocs (Python-Markdown's toc) makes it."""
    text = re.sub(r"[^\w\s-]", "", heading).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


@pytest.mark.parametrize("name", MAKE.ORDER)
def test_every_link_of_a_notebook_works_from_its_folder(name):
    stored = json.loads(MAKE.notebook_path(name).read_text(encoding="utf-8"))
    markdown = "\n".join(cell["source"] for cell in stored["cells"] if cell["cell_type"] == "markdown")
    links = [m.group("target") for m in MAKE.LINK.finditer(markdown)]
    assert links, name
    for target in links:
        if re.match(r"^[a-z]+:", target) or target.startswith("#"):
            continue
        path, _, anchor = target.partition("#")
        file = (MAKE.NOTEBOOKS / path).resolve()
        assert file.is_file(), f"{name}: the link {target!r} leads nowhere from {MAKE.NOTEBOOKS}"
        if anchor and file.suffix == ".md":
            headings = re.findall(r"^#+\s+(.*)$", file.read_text(encoding="utf-8"), re.M)
            assert anchor in {_slug(h) for h in headings}, f"{name}: no heading #{anchor} in {path}"


def test_links_point_to_the_notebooks_and_the_site(monkeypatch):
    assert MAKE.notebook_link("write-an-agent.md") == "write-an-agent.ipynb"
    assert MAKE.notebook_link("notebooks/self-play.ipynb") == "self-play.ipynb"
    assert MAKE.notebook_link("../rules.md") == "../../rules.md"
    assert MAKE.notebook_link("../training.md#petit_menec") == "../../training.md#petit_menec"
    assert MAKE.notebook_link("https://example.org/x") == "https://example.org/x"
    monkeypatch.setattr(MAKE, "_site_url", lambda: "https://carnac.example/")
    assert MAKE.notebook_link("../training.md#petit_menec") == "https://carnac.example/training/#petit_menec"
    assert MAKE.notebook_link("../index.md") == "https://carnac.example/"
    assert MAKE.notebook_link("alphazero.md") == "alphazero.ipynb"


def execute(name: str, tmp_path: Path, smoke: bool) -> dict:
    """ "Run all" of the stored notebook with nbclient, in ``tmp_path`` (a fresh folder outside
    the clone: nothing there but what the notebook writes) on the installed package."""
    require("nbclient", "pip install nbclient ipykernel (the test extra)")
    require("ipykernel", "the notebook kernel (the test extra)")
    stored = json.loads(MAKE.notebook_path(name).read_text(encoding="utf-8"))
    assert not str(tmp_path.resolve()).startswith(str(ROOT))
    return MAKE.execute(stored, tmp_path, smoke)


@pytest.mark.parametrize("name", ["play-by-hand.md", "write-an-agent.md", "what-the-network-sees.md"])
def test_notebook_runs_and_prints_what_the_page_shows(name, tmp_path):
    notebook = execute(name, tmp_path, smoke=False)
    page = (TUTORIALS / name).read_text(encoding="utf-8")
    assert [text.rstrip() for text in MAKE.printed(notebook) if text.strip()] == MAKE.recorded_outputs(page)
    if name == "play-by-hand.md":
        shown = [o for c in notebook["cells"] if c["cell_type"] == "code" for o in c["outputs"]]
        assert any("image/svg+xml" in o.get("data", {}) for o in shown), "the game should display as SVG"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(MAKE.TRAINING))
def test_training_notebook_runs_in_smoke_mode(name, tmp_path):
    require("torch", "the train extra")
    if name == "train-maskable-ppo.md":
        require("sb3_contrib", "the train extra")
    notebook = execute(name, tmp_path, smoke=True)
    errors = [
        o for c in notebook["cells"] if c["cell_type"] == "code" for o in c["outputs"] if o["output_type"] == "error"
    ]
    assert not errors
    assert all(c["execution_count"] for c in notebook["cells"] if c["cell_type"] == "code")


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
