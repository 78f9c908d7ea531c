"""Every code block of the tutorials runs, in order, and prints what the page shows.

The pages without training run as a reader runs them and must print exactly the output
recorded after each block (``scripts/make_tutorials.py`` records it; rerun it after a change that
alters what they print). The training pages run in smoke mode (``CARNAC_SMOKE=1``, slow
tests) and must print what they show too: exactly, except the outputs marked as depending on
the PyTorch version when run under another version than the one their title names, which must
then keep their words and layout (``make_tutorials.differences``).

A page runs in a fresh folder, and whatever it writes there must be ignored by git when the
page's notebook is run in place (in docs/tutorials/notebooks/): no stray file in a clone.

Blocks fenced as ``python`` run in one shared namespace per tutorial (so a later block may use an
earlier block's names); blocks fenced as ``bash`` run in a shell between them, except their
``pip install`` lines (the test environment is already installed). Each tutorial runs in a fresh
temporary folder outside the clone, on the installed package, as a reader runs it anywhere.
Blocks fenced otherwise (``text``, ``console``) are not run.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest
from _paths import ROOT
from _scripts import load_script

TUTORIALS = ROOT / "docs" / "tutorials"
#: tutorial file -> modules it needs (skipped cleanly when one is missing)
NEEDS = {
    "play-by-hand.md": [],
    "write-an-agent.md": ["matplotlib"],  # its arenas print "ratings plot: ..." (the plot extra)
    "train-maskable-ppo.md": ["torch", "sb3_contrib", "matplotlib"],
    "self-play.md": ["torch", "matplotlib"],
    "alphazero.md": ["torch", "matplotlib"],
    "what-the-network-sees.md": [],
    "perfect-play.md": [],
}


def runnable_blocks(text: str) -> list[tuple[str, str, int]]:
    """``(language, code, line)`` of the blocks to run, in order (``pip install`` lines dropped),
    as scripts/make_tutorials.py finds them (the one parser, so the test runs what the page
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
    return load_script("scripts/make_tutorials.py")


def _skip_without(name: str) -> None:
    missing = [m for m in NEEDS[name] if importlib.util.find_spec(m) is None]
    if missing:
        extras = "the train and plot extras" if "torch" in NEEDS[name] else "the plot extra"
        pytest.skip(f"{name} needs {', '.join(missing)} ({extras}: pip install -e '.[train,plot]')")


def _check_page(name: str, smoke: bool, tmp_path: Path) -> None:
    make = _make_tutorials()
    page = (TUTORIALS / name).read_text(encoding="utf-8")
    assert "<!-- output" in page, f"{name} shows no expected output"
    outputs = make.run_page(name, smoke=smoke, keep=tmp_path)  # in a fresh folder, as from a plain install
    problems = make.differences(page, outputs)
    if problems:
        pytest.fail(
            f"{name} prints something else than it shows; run `python scripts/make_tutorials.py --only {name}`:\n"
            + "\n".join(problems)
        )
    _nothing_left_unignored(name, tmp_path)


def _nothing_left_unignored(name: str, folder: Path) -> None:
    """What the page wrote in its folder would be ignored by git in docs/tutorials/notebooks/,
    where its notebook runs when opened in place."""
    import shutil
    import subprocess

    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git clone: the check of files left in the notebooks' folder needs git")
    for entry in sorted(str(p.relative_to(folder)) for p in folder.iterdir()):
        path = f"docs/tutorials/notebooks/{entry}"
        done = subprocess.run(["git", "check-ignore", "-q", path], cwd=ROOT, capture_output=True)
        assert done.returncode == 0, f"{name} writes {entry!r}, which git would show in a clone ({path})"


@pytest.mark.parametrize("name", sorted(set(NEEDS) - SLOW))
def test_tutorial_prints_its_recorded_output(name, tmp_path):
    _skip_without(name)
    _check_page(name, smoke=False, tmp_path=tmp_path)


def test_the_outputs_that_depend_on_pytorch_say_so():
    """A training page's output blocks after a block marked ``<!-- varies with torch -->``, and
    only those, carry a title naming the PyTorch version they were printed with: each page is
    what scripts/make_tutorials.py writes from its own outputs."""
    make = _make_tutorials()
    for name in NEEDS:
        page = (TUTORIALS / name).read_text(encoding="utf-8")
        versions = [v for v in make.recorded_versions(page) if v is not None]
        assert len(set(versions)) <= 1, f"{name}: its outputs were recorded under several PyTorch versions"
        note = make.SMOKE_NOTE if name in SLOW else " "
        rebuilt = make.with_outputs(page, make.shown_per_block(page), note, torch=versions[0] if versions else "")
        assert rebuilt == page, f"{name}: its output blocks are not where its marks say; run scripts/make_tutorials.py"
        if name in SLOW:
            assert versions, f"{name} trains a network: mark the blocks whose output depends on it"
            assert re.fullmatch(r"\d+\.\d+[\w.+-]*", versions[0]), name
        else:
            assert not any(make.varies(page)), f"{name} trains nothing: no output of it depends on PyTorch"


def test_a_changed_number_is_caught_and_another_pytorch_only_keeps_the_layout():
    make = _make_tutorials()
    page = (
        "```python\nprint(1)\n```\n\n<!-- output -->\n```text\nloss 4.203 win True\n```\n"
        "<!-- varies with torch -->\n```python\nprint(2)\n```\n\n<!-- output -->\n"
        '```text title="printed with torch 2.0.0: the numbers vary with the PyTorch version"\n'
        "loss 4.203 win True\n```\n"
    )
    assert make.varies(page) == [False, True]
    assert make.recorded_versions(page) == [None, "2.0.0"]
    same = ["loss 4.203 win True\n", "loss 4.203 win True\n"]
    assert make.differences(page, same, torch="2.0.0") == []
    assert make.differences(page, ["loss 4.178 win True\n", same[1]], torch="2.0.0")  # a stale number
    assert make.differences(page, [same[0], "loss 4.178 win False\n"], torch="2.0.0")  # the same torch: exact
    assert make.differences(page, [same[0], "loss 4.178  win False\n"], torch="2.1.0") == []  # another: the shape
    assert make.differences(page, [same[0], "entropy 4.178 win False\n"], torch="2.1.0")  # other words
    assert make.with_outputs(page, same, " ", torch="2.0.0") == page
    timed = "```python\nprint(1)\n```\n\n<!-- output -->\n```text\nupdate 1  0s (CPU 0s)  after 4 games (2.5 s)\n```\n"
    assert make.differences(timed, ["update 1  3s (CPU 1s)  after 4 games (13.0 s)\n"]) == []  # the machine's
    assert make.differences(timed, ["update 2  3s (CPU 1s)  after 4 games (13.0 s)\n"])
    assert make.without_durations("mcts:sims=10 games 4s") == "mcts:sims=10 games #s"


def test_no_page_runs_what_only_a_clone_has():
    """A page runs in any folder: no block it runs calls the repository's examples/."""
    for name in NEEDS:
        for _kind, code, line in runnable_blocks((TUTORIALS / name).read_text(encoding="utf-8")):
            assert "examples/" not in code, f"{name} line {line} runs {code.strip()!r}, which needs a clone"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SLOW))
def test_training_tutorial_prints_its_recorded_output(name, tmp_path):
    """The page's blocks, as a script in a fresh folder (nothing from the clone), in smoke mode,
    print what the page shows (the marked outputs: exactly under the PyTorch version they were
    recorded with, their words and layout under another)."""
    _skip_without(name)
    _check_page(name, smoke=True, tmp_path=tmp_path)
