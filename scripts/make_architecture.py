"""Draw the house: docs/images/architecture.svg, the package's floors from the layer check.

    python scripts/make_architecture.py          # writes docs/images/architecture.svg
    python scripts/make_architecture.py --check  # exit 1 if the picture is stale

The floors are ``RANKS`` of tests/ci/test_layers.py, the table that test enforces (each floor
imports only the floors below it and its own family), so the picture cannot drift from the
code: tests/docs/test_docs.py checks that the stored SVG is what this script draws.
"""

from __future__ import annotations

import importlib.util
import sys
from html import escape
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "images" / "architecture.svg"

WIDTH, ROW, GAP, PAD = 760, 34, 8, 10
#: What each family holds, in a few words (the picture's second line).
WORDS = {
    "errors": "one error type",
    "_version": "the version",
    "_checks": "argument checks",
    "_files": "every file write",
    "_ray": "Ray, when asked",
    "core": "the rules",
    "render": "pictures",
    "batch": "compiled rules",
    "models": "networks",
    "solve": "exact search",
    "jax": "JAX engine",
    "search": "tree search",
    "agents": "agents",
    "analysis": "the agent's view",
    "envs": "RL envs",
    "arena": "arenas",
    "train": "AlphaZero",
    "evaluate": "cards, panels",
    "play": "window game",
    "serve": "browser game",
    "cli": "carnac ...",
    "__init__": "carnac_env",
}


def ranks() -> list[list[set[str]]]:
    """The floors, from the layer check's own table."""
    spec = importlib.util.spec_from_file_location("carnac_layers", ROOT / "tests" / "ci" / "test_layers.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.RANKS


def family_name(family: set[str]) -> str:
    """``envs`` stands for its family (``envs`` and ``carnac_v0``); others are one name."""
    return "envs" if "envs" in family else next(iter(sorted(family)))


def svg(floors: list[list[set[str]]]) -> str:
    """The picture: the top floor first, each family a box with its name and a few words."""
    height = PAD * 2 + len(floors) * (ROW + GAP)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="11">',
        f'<rect width="{WIDTH}" height="{height}" fill="#ffffff"/>',
    ]
    label = 58
    for level, families in enumerate(reversed(floors)):
        floor = len(floors) - 1 - level
        y = PAD + level * (ROW + GAP)
        out.append(f'<text x="{PAD}" y="{y + ROW / 2 + 4}" fill="#555">floor {floor}</text>')
        span = (WIDTH - label - PAD) / len(families)
        for k, family in enumerate(families):
            name = family_name(family)
            x = label + k * span
            shown = escape(name if name != "__init__" else "carnac_env/__init__")
            out.append(
                f'<rect x="{x + 2:.1f}" y="{y}" width="{span - 4:.1f}" height="{ROW}" rx="4" '
                f'fill="#e8eef5" stroke="#4a6a8a"/>'
            )
            out.append(
                f'<text x="{x + span / 2:.1f}" y="{y + 14}" text-anchor="middle" font-weight="bold">{shown}</text>'
            )
            out.append(
                f'<text x="{x + span / 2:.1f}" y="{y + 27}" text-anchor="middle" fill="#333">'
                f"{escape(WORDS.get(name, ''))}</text>"
            )
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main(argv: list[str]) -> int:
    text = svg(ranks())
    if argv == ["--check"]:
        stale = not OUT.is_file() or OUT.read_text(encoding="utf-8") != text
        if stale:
            print(f"{OUT.relative_to(ROOT)} is stale: run python scripts/make_architecture.py")
        return 1 if stale else 0
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
