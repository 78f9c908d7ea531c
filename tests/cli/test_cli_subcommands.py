"""One command line: every parser of the package is the ``carnac`` command's, under carnac_env/cli/.

``carnac analyse``, ``carnac diagnose``, ``carnac endgames`` and ``carnac panel`` are subcommands
like ``carnac train``; the ``python -m`` entries (``carnac_env.train``, ``carnac_env.analysis``,
``carnac_env.evaluate.endgames``) forward to them, so they are the same command.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest
from _paths import ROOT

from carnac_env.cli import main
from carnac_env.cli.parser import build_parser

PACKAGE = ROOT / "carnac_env"
NEW = ("analyse", "diagnose", "endgames", "panel")


def _parsers_outside_cli() -> list[str]:
    """Every module outside carnac_env/cli/ that imports argparse or makes an ArgumentParser."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.relative_to(PACKAGE).parts[0] == "cli":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            imported = isinstance(node, ast.Import) and any(a.name == "argparse" for a in node.names)
            imported |= isinstance(node, ast.ImportFrom) and node.module == "argparse"
            made = isinstance(node, ast.Attribute | ast.Name) and "ArgumentParser" in ast.unparse(node)
            if imported or made:
                found.append(str(path.relative_to(PACKAGE)))
                break
    return found


def test_every_parser_lives_under_cli() -> None:
    assert _parsers_outside_cli() == []


def test_carnac_help_lists_the_new_subcommands(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 0
    out = capsys.readouterr().out
    for command in NEW:
        assert f"    {command} " in out, command


@pytest.mark.parametrize(
    ("entry", "command"),
    [("carnac_env.train", "train"), ("carnac_env.analysis", "analyse"), ("carnac_env.evaluate.endgames", "endgames")],
)
def test_each_python_m_entry_is_the_carnac_subcommand(entry: str, command: str) -> None:
    """The entry's help is the subcommand's, and a bad option is its one-line error (status 2)."""
    run = [sys.executable, "-m", entry]
    done = subprocess.run([*run, "--help"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"usage: carnac {command} ")
    bad = subprocess.run([*run, "--no-such-option"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert bad.stderr.startswith(f"carnac: error: {command}: ") and bad.stderr.count("\n") == 1


def test_panel_takes_a_command_option_of_its_own() -> None:
    """``carnac panel --command`` (the arena's command line) is the option, not the subcommand."""
    argv = ["panel", "arena", "--name", "tiny", "--version", "2", "--command", "carnac arena --games 4"]
    args = build_parser().parse_args(argv)
    assert (args.subcommand, args.command, args.version, args.anchor) == (
        "panel",
        "carnac arena --games 4",
        2,
        "random",
    )


def test_endgames_makes_a_set_that_loads(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from carnac_env.evaluate.endgames.sets import load_endgames

    out = tmp_path / "petit.json"
    argv = ["endgames", "--make", "petit_menec", "--positions", "2", "--megaliths-left", "2", "--out", str(out)]
    assert main(argv) == 0
    assert f"wrote {out} (2 positions" in capsys.readouterr().out
    made = load_endgames(out)
    assert (made.name, made.version, len(made.positions)) == ("petit_menec", 1, 2)
    assert made.made["command"] == (  # the command that makes it again, as the shipped sets record it
        "python -m carnac_env.evaluate.endgames --make petit_menec --positions 2 --megaliths-left 2 "
        "--node-limit 3000000 --seed 0 --version 1"
    )
    assert main(["endgames", "--make", "nonesuch", "--out", str(tmp_path / "x.json")]) == 2
    assert capsys.readouterr().err.startswith("carnac: error: unknown board 'nonesuch'")
    assert not (tmp_path / "x.json").exists()


def test_diagnose_prints_the_value_heads_statistics(capsys: pytest.CaptureFixture[str]) -> None:
    from carnac_env.train.diagnose import diagnose

    argv = ["petit_menec", "--board", "petit_menec", "--games", "1", "--sims", "2", "--playouts", "2", "--seed", "3"]
    assert main(["diagnose", *argv]) == 0
    printed = json.loads(capsys.readouterr().out)
    stats = diagnose("petit_menec", "petit_menec", games=1, sims=2, playouts=2, seed=3)
    assert printed == {k: round(v, 3) if isinstance(v, float) else v for k, v in stats.items()}
    assert printed["positions"] > 0
