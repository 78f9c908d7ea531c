"""The package's layers, checked in both directions: each layer imports only the layers below
it (and its own family), so nothing below ever reaches up.

From the bottom: the errors and the version; the argument checks, the file writes and the Ray connection; the
rules core; the renderers, the batched engine and the network models (siblings that ignore
each other); the JAX engine (which draws with the renderers) and the search (over the batched
engine); the agents; the environments (``envs/``, and ``carnac_v0``) and the framework
adapters; the arena; training and evaluation; the mouse game and the browser game (serve);
the command line; and the package's own ``__init__``. Every import of every module
counts, including those inside functions (lazy imports are imports).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

# the repository's package; no tests helper imported: scripts/make_architecture.py loads this file too
PACKAGE = Path(__file__).resolve().parents[2] / "carnac_env"

#: The environments (carnac_env/envs/) and ``carnac_v0``, PettingZoo's module path for the AEC env.
ENVS = {"envs", "carnac_v0"}
#: From the bottom up; each rank holds families (sets of top-level modules or subpackages
#: that may import each other); a family imports freely from the ranks below its own.
RANKS: list[list[set[str]]] = [
    [{"errors"}, {"_version"}],
    [{"_checks"}, {"_files"}, {"_ray"}],
    [{"core"}],
    [{"render"}, {"batch"}, {"models"}],
    [{"solve"}],
    [{"jax"}, {"search"}],
    [{"agents"}, {"analysis"}],
    [ENVS],
    [{"arena"}],
    [{"train"}, {"evaluate"}],
    [{"play"}, {"serve"}],
    [{"cli"}],
    [{"__init__"}],
]
RANK = {group: rank for rank, families in enumerate(RANKS) for family in families for group in family}
FAMILY = {group: family for families in RANKS for family in families for group in family}


def group_of(module: str) -> str:
    """The layer group of a module: ``carnac_env.core.game`` -> ``core``; the package itself -> ``__init__``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> set[str]:
    """Every ``carnac_env`` module ``path`` imports, anywhere in it (``from carnac_env import
    x`` counts as ``carnac_env.x``)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "carnac_env":  # a submodule, or an attribute of the package itself
                names.update(
                    f"carnac_env.{alias.name}" if _is_module(alias.name) else "carnac_env" for alias in node.names
                )
            else:
                names.add(node.module)
    return {name for name in names if name == "carnac_env" or name.startswith("carnac_env.")}


def _is_module(name: str) -> bool:
    return (PACKAGE / f"{name}.py").exists() or (PACKAGE / name / "__init__.py").exists()


def upward(path: Path, module: str | None = None) -> list[str]:
    """The imports of ``path`` (judged as module ``module``, by default its own name) that
    break the layering, with the reason."""
    name = module or module_name(path)
    # A package's __main__ (``python -m carnac_env.train``) is an entry point that nothing imports:
    # it forwards to the command line, so it stands where the command line does.
    here = "cli" if name.endswith(".__main__") else group_of(name)
    bad = []
    for name in sorted(imports(path)):
        if name == "carnac_env":  # the package itself is loaded before any of its modules anyway
            continue
        there = group_of(name)
        if there in FAMILY[here] or RANK[there] < RANK[here]:
            continue
        direction = "up" if RANK[there] > RANK[here] else "sideways"
        bad.append(f"{name} ({there}, rank {RANK[there]}: {direction} from {here}, rank {RANK[here]})")
    return bad


MODULES = sorted(PACKAGE.rglob("*.py"))


def test_every_module_belongs_to_a_layer() -> None:
    groups = {group_of(module_name(path)) for path in MODULES}
    assert groups <= set(RANK), f"modules without a layer: {sorted(groups - set(RANK))}"
    assert set(RANK) <= groups | {"__init__"}, f"layers without modules: {sorted(set(RANK) - groups)}"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: module_name(p))
def test_imports_go_down_the_layers_only(path: Path) -> None:
    assert not upward(path), f"{module_name(path)} imports " + "; ".join(upward(path))


@pytest.mark.parametrize(
    ("module", "line"),
    [
        ("carnac_env.core.probe", "from carnac_env.render.svg import state_svg\n"),
        ("carnac_env.batch.probe", "import carnac_env.envs.aec\n"),
        ("carnac_env.agents.probe", "from carnac_env.envs.aec import raw_env\n"),
        ("carnac_env.render.probe", "from carnac_env import batch\n"),
        ("carnac_env.agents.probe", "def f():\n    from carnac_env.play.gui import play_gui\n"),
    ],
)
def test_the_check_catches_an_import_that_breaks_the_layers(tmp_path: Path, module: str, line: str) -> None:
    """The check can fail: up, sideways, and inside a function."""
    source = tmp_path / "probe.py"
    source.write_text(line, encoding="utf-8")
    assert upward(source, module)


def test_importing_the_renderers_loads_no_env_or_rl_library() -> None:
    code = (
        "import sys\n"
        "import carnac_env.render.ansi, carnac_env.render.image, carnac_env.render.svg, carnac_env.render.style\n"
        "import carnac_env.render.html, carnac_env.render.animate, carnac_env.render.score\n"
        "import carnac_env.render.window, carnac_env.render.jupyter\n"
        "bad = [m for m in ('carnac_env.envs.aec', 'carnac_env.agents', 'carnac_env.play', 'pettingzoo', 'gymnasium',"
        " 'pygame', 'PIL') if m in sys.modules]\n"
        # The package's import registers the Gymnasium id (envs.registration, standard library only).
        "bad += sorted(m for m in sys.modules if m.startswith('carnac_env.envs.') and 'registration' not in m)\n"
        "print(bad)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_core_loads_no_renderer() -> None:
    """The core shows no picture of its own (Jupyter's display is registered from render/)."""
    code = "import sys, carnac_env.core\nprint(sorted(m for m in sys.modules if m.startswith('carnac_env.render.')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['carnac_env.render.jupyter']"  # the package's __init__ registers the display


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Each module of ``package`` and the modules of the package it imports, anywhere in it
    (inside functions and ``if TYPE_CHECKING:`` too). ``from p import m`` names the module
    ``p.m`` where there is one, else ``p`` itself (a package is its ``__init__``)."""
    paths = {module_name_in(package, path): path for path in sorted(package.rglob("*.py"))}
    graph: dict[str, set[str]] = {}
    for module, path in paths.items():
        named: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                named.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                named.update(
                    f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in paths else node.module
                    for alias in node.names
                )
        graph[module] = {name for name in named if name in paths and name != module}
    return graph


def module_name_in(package: Path, path: Path) -> str:
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The circles of ``graph``, each as the modules round it with the first one repeated at
    the end (``[a, b, a]``): one for each import that leads back to a module still being
    followed in a depth-first walk, so the graph has a circle exactly when this is not empty."""
    circles: list[list[str]] = []
    done: set[str] = set()
    path: list[str] = []

    def follow(module: str) -> None:
        path.append(module)
        for name in sorted(graph[module]):
            if name in path:
                circles.append([*path[path.index(name) :], name])
            elif name not in done:
                follow(name)
        path.pop()
        done.add(module)

    for module in sorted(graph):
        if module not in done:
            follow(module)
    return circles


def test_no_import_circles() -> None:
    """No module imports, directly or through others, a module that imports it back. Imports
    inside functions count too."""
    circles = import_circles(import_graph())
    assert not circles, "import circles: " + "; ".join(" -> ".join(circle) for circle in circles)


def test_the_circle_check_finds_a_circle_through_a_function_level_import(tmp_path: Path) -> None:
    package = tmp_path / "carnac_env"
    (package / "inner").mkdir(parents=True)
    for name, text in [
        ("__init__.py", ""),
        ("a.py", "def f():\n    from carnac_env.inner import b\n"),
        ("inner/__init__.py", ""),
        ("inner/b.py", "from carnac_env.inner import c\n"),
        ("inner/c.py", "import carnac_env.a\n"),
        ("d.py", "from carnac_env.inner.b import x\n"),
    ]:
        (package / name).write_text(text, encoding="utf-8")
    graph = import_graph(package)
    assert graph["carnac_env.a"] == {"carnac_env.inner.b"}
    assert import_circles(graph) == [["carnac_env.a", "carnac_env.inner.b", "carnac_env.inner.c", "carnac_env.a"]]
    (package / "inner/c.py").write_text("import carnac_env.inner\n", encoding="utf-8")  # the package: no circle
    assert import_circles(import_graph(package)) == []
