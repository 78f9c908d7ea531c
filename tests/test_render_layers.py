"""carnac_env.render is a drawing layer over the rules core: it imports only the core (and the
package's errors), never the environments, the agents or an RL library. The mouse game, which
needs the env and the agents, lives above them in carnac_env.play."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "carnac_env"
# besides the core: the leaf helpers every layer may use (errors, argument checks, file writes)
ALLOWED = ("carnac_env.core", "carnac_env.errors", "carnac_env._checks", "carnac_env._files", "carnac_env.render")


def imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_render_modules_import_only_the_core():
    for path in sorted((PACKAGE / "render").glob("*.py")):
        ours = {name for name in imported_modules(path) if name.startswith("carnac_env")}
        outside = sorted(name for name in ours if not name.startswith(ALLOWED))
        assert not outside, f"{path.name} imports {outside}"


def test_importing_the_renderers_loads_no_env_or_rl_library():
    code = (
        "import sys\n"
        "import carnac_env.render.ansi, carnac_env.render.image, carnac_env.render.svg\n"
        "import carnac_env.render.html, carnac_env.render.animate, carnac_env.render.score\n"
        "import carnac_env.render.window\n"
        "bad = [m for m in ('carnac_env.aec', 'carnac_env.agents', 'carnac_env.play', 'pettingzoo', 'gymnasium',"
        " 'pygame', 'PIL') if m in sys.modules]\n"
        "print(bad)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_mouse_game_lives_in_play():
    assert not (PACKAGE / "render" / "gui.py").exists()
    assert (PACKAGE / "play" / "gui.py").exists()
