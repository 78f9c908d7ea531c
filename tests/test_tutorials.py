"""Every code block of the tutorials runs, in order, and prints what the page shows.

The pages without training (play-by-hand, write-an-agent) run as a reader runs them and must
print exactly the output recorded after each block (``docs/make_tutorials.py`` records it;
rerun it after a change that alters what they print). The training pages run in smoke mode
(``CARNAC_SMOKE=1``) and must finish.

Blocks fenced as ``python`` run in one shared namespace per tutorial (so a later block may use an
earlier block's names); blocks fenced as ``bash`` run in a shell between them, except their
``pip install`` lines (the test environment is already installed). Each tutorial runs in a fresh
temporary folder outside the clone, on the installed package, as a reader runs it anywhere.
Blocks fenced otherwise (``text``, ``console``) are not run.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from _scripts import load_script

ROOT = Path(__file__).resolve().parent.parent
TUTORIALS = ROOT / "docs" / "tutorials"
#: tutorial file -> modules it needs (skipped cleanly when one is missing)
NEEDS = {
    "play-by-hand.md": [],
    "write-an-agent.md": [],
    "train-maskable-ppo.md": ["torch", "sb3_contrib"],
    "self-play.md": ["torch"],
    "alphazero.md": ["torch"],
}


def runnable_blocks(text: str) -> list[tuple[str, str, int]]:
    """``(language, code, line)`` of the blocks to run, in order (``pip install`` lines dropped),
    as docs/make_tutorials.py finds them (the one parser, so the test runs what the page
    generator records). A titled block (```` ```python title="my_agents.py" ````) is a file for
    the reader to save: ``("file:my_agents.py", code, line)``."""
    return [(kind, code, line) for kind, code, line, _ in _make_tutorials().blocks(text)]


def test_every_tutorial_is_listed():
    assert sorted(p.name for p in TUTORIALS.glob("*.md")) == sorted(NEEDS)


def test_block_extraction():
    sample = (
        "text\n```python\nx = 1\n```\n\n    ```bash\n    pip install foo\n    echo hi\n    ```\n"
        '```text\nnot code\n```\n```bash\npip install only\n```\n```python title="a.py"\ny = 2\n```\n'
    )
    assert runnable_blocks(sample) == [
        ("python", "x = 1\n", 2),
        ("bash", "echo hi", 6),
        ("file:a.py", "y = 2\n", 16),
    ]


#: the tutorials that train networks (a minute or two each, even with smoke budgets)
SLOW = {"train-maskable-ppo.md", "self-play.md", "alphazero.md"}


def _make_tutorials():
    return load_script("docs/make_tutorials.py")


@pytest.mark.parametrize("name", sorted(set(NEEDS) - SLOW))
def test_tutorial_prints_its_recorded_output(name):
    make = _make_tutorials()
    page = (TUTORIALS / name).read_text(encoding="utf-8")
    assert "<!-- output" in page, f"{name} shows no expected output"
    outputs = make.run_page(name, smoke=False)  # in a fresh folder, as from a plain install
    expected = make.with_outputs(page, outputs, " ")
    if expected != page:
        import difflib

        diff = "\n".join(difflib.unified_diff(page.splitlines(), expected.splitlines(), name, "ran", lineterm=""))
        pytest.fail(f"{name} prints something else than it shows; run `python docs/make_tutorials.py`:\n{diff}")


def test_no_page_runs_what_only_a_clone_has():
    """A page runs in any folder: no block it runs calls the repository's examples/."""
    for name in NEEDS:
        for _kind, code, line in runnable_blocks((TUTORIALS / name).read_text(encoding="utf-8")):
            assert "examples/" not in code, f"{name} line {line} runs {code.strip()!r}, which needs a clone"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SLOW))
def test_tutorial_runs(name):
    """The page's blocks, as a script in a fresh folder (nothing from the clone), in smoke mode."""
    missing = [m for m in NEEDS[name] if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"{name} needs {', '.join(missing)} (pip install -e '.[train]')")
    outputs = _make_tutorials().run_page(name, smoke=True)
    assert len(outputs) == len(runnable_blocks((TUTORIALS / name).read_text(encoding="utf-8")))
