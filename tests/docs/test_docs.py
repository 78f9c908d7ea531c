"""docs/environment.md is generated from the real environment and must stay in step with it."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest
from _paths import ROOT
from _scripts import load_script

from carnac_env.core import BOARDS, PLANE_NAMES, GameState, bga_score, compare_dolmens, parse_action


def _load_generator():
    """scripts/gen_environment.py, the page's generator (a script beside scripts/make_images.py)."""
    return load_script("scripts/gen_environment.py")


environment_page = _load_generator().environment_page


def test_environment_page_is_up_to_date() -> None:
    stored = (ROOT / "docs" / "environment.md").read_text(encoding="utf-8")
    generated = environment_page()
    if stored != generated:
        diff = "\n".join(
            difflib.unified_diff(
                stored.splitlines(), generated.splitlines(), "docs/environment.md", "generated", lineterm=""
            )
        )
        pytest.fail(f"docs/environment.md is stale; run `python scripts/gen_environment.py`:\n{diff}", pytrace=False)


def test_environment_page_covers_every_board_and_plane() -> None:
    page = environment_page()
    for name, board in BOARDS.items():
        assert f"| `{name}` | {board.rows} x {board.cols} |" in page
        assert f"`Discrete({board.rows * board.cols * 4 + 5})`" in page
        assert f"`({board.rows}, {board.cols}, {len(PLANE_NAMES)})`" in page
    for index, name in enumerate(PLANE_NAMES):
        assert f"| {index} | {name} |" in page


RULES = ROOT / "docs" / "rules.md"


def _table(text: str, header: str) -> list[list[str]]:
    """The rows of the Markdown table whose header line starts with ``header``."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows


def test_the_rules_page_boards_table_is_the_code_s() -> None:
    """Every board of docs/rules.md has the size, supply and dolmen size the package plays."""
    rows = _table(RULES.read_text(encoding="utf-8"), "| board | size |")
    assert [row[0].strip("`") for row in rows] == list(BOARDS)
    for name, size, megaliths, min_dolmen, _ in rows:
        board = BOARDS[name.strip("`")]
        assert (size, int(megaliths), int(min_dolmen)) == (
            f"{board.rows} x {board.cols}",
            board.megaliths,
            board.min_dolmen,
        )


def test_the_rules_page_tie_break_examples_are_what_the_scorer_decides() -> None:
    rows = _table(RULES.read_text(encoding="utf-8"), "| Red's dolmens |")
    assert len(rows) >= 4
    for red, white, result in rows:
        sizes = [[] if side == "none" else [int(x) for x in side.split(",")] for side in (red, white)]
        expected = {"Red wins": 1, "White wins": -1, "a draw": 0}[result.split(":")[0]]
        assert compare_dolmens(*sizes) == expected, (red, white, result)


def test_the_rules_page_tilt_diagram_is_what_the_core_plays() -> None:
    """The text diagram "before / after tilt N" of a megalith on c3, replayed on the core."""
    text = RULES.read_text(encoding="utf-8")
    block = text[text.index("before      after tilt N") :].split("```")[0].splitlines()[2:]
    before = ["".join(line.split()[1:5]) for line in block]
    after = ["".join(line.split()[6:10]) for line in block]
    state = GameState.from_diagram("custom", [row.replace("R", ".") for row in before], rows=3, cols=4)
    state.apply(parse_action(state.board, "c3 Rns", state.to_act))
    state.apply(parse_action(state.board, "tilt N", state.to_act))
    assert state.diagram().splitlines() == after


def test_the_rules_page_bga_score_example() -> None:
    assert "dolmens of 3 and 9 give 209" in RULES.read_text(encoding="utf-8")
    assert bga_score([9, 3]) == 209


def test_generator_writes_where_asked(tmp_path: Path) -> None:
    target = tmp_path / "env.md"
    assert _load_generator().main([str(target)]) == 0
    assert target.read_text(encoding="utf-8") == environment_page()


def test_the_readme_set_up_makes_and_activates_a_venv_before_its_two_commands():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    setup = readme[readme.index("## Set-up") : readme.index("## Quick start")]
    venv = setup.index("python3 -m venv .venv && . .venv/bin/activate")
    assert venv < setup.index("pip install -e . && carnac arena") < setup.index('pip install -e ".[test]" && pytest')
    commands = [line for line in setup.splitlines() if line.startswith("pip install")]
    assert len(commands) == 2  # still two commands after the venv


def test_docs_holds_pages_and_images_and_the_scripts_live_in_scripts() -> None:
    """Maintainer scripts (generators, report arenas) have one home, scripts/; docs/ is the site."""
    code = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").rglob("*") if p.suffix in {".py", ".sh"})
    assert code == [], f"scripts among the pages: {code}; move them to scripts/"
    assert (ROOT / "scripts" / "make_tutorials.py").is_file()


def test_the_architecture_picture_is_drawn_from_the_layer_check() -> None:
    """docs/images/architecture.svg is what scripts/make_architecture.py draws from RANKS."""
    script = load_script("scripts/make_architecture.py")
    stored = (ROOT / "docs" / "images" / "architecture.svg").read_text(encoding="utf-8")
    assert stored == script.svg(script.ranks()), "run python scripts/make_architecture.py"


def test_the_architecture_pages_extension_examples_run() -> None:
    """Every code block of docs/architecture.md (a toy agent, evaluator, board and env adapter,
    each playing a game, and a registered selection rule chosen by name) runs, in order, in a
    fresh interpreter, and prints what the page says."""
    import re
    import subprocess
    import sys

    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", page, re.S)
    assert len(blocks) >= 4
    code = "\n\n".join(
        f"def block_{k}():\n" + "".join("    " + line + "\n" for line in b.splitlines()) for k, b in enumerate(blocks)
    )
    code += "\n" + "".join(f"block_{k}()\n" for k in range(len(blocks)))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert lines[:4] == ["True True", "True", "UCT True", "4 5 True"], lines
    assert lines[4] in ("[-1, 1]", "[0, 0]"), lines
