"""The package's import promises: a light rules core, a quick package import that still
registers the Gymnasium id, and the ``module:id`` form that needs no prior import."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def _run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return done.stdout.strip()


NEW_TOP_LEVEL_MODULES = """
import json, sys
before = set(sys.modules)
import {module}
new = sorted({{m.split('.')[0] for m in set(sys.modules) - before}})
print(json.dumps([m for m in new if m not in sys.stdlib_module_names]))
"""


@pytest.mark.parametrize("module", ["carnac_env.core", "carnac_env"])
def test_core_and_package_import_numpy_and_the_standard_library_only(module: str) -> None:
    loaded = json.loads(_run(NEW_TOP_LEVEL_MODULES.format(module=module)))
    assert set(loaded) <= {"carnac_env", "numpy"}, loaded


def test_importing_the_package_registers_the_id_once_gymnasium_loads() -> None:
    code = (
        "import carnac_env, gymnasium\n"
        "env = gymnasium.make('carnac_env/Carnac-v0', board='small')\n"
        "print(env.reset(seed=0)[0].shape)"
    )
    assert _run(code) == "(5, 8, 9)"


def test_importing_the_package_after_gymnasium_registers_at_once() -> None:
    assert _run("import gymnasium, carnac_env\nprint('carnac_env/Carnac-v0' in gymnasium.registry)") == "True"


def test_the_module_id_form_needs_no_prior_import() -> None:
    code = (
        "import gymnasium\nenv = gymnasium.make('carnac_env:carnac_env/Carnac-v0', board='small')\nprint(env.spec.id)"
    )
    assert _run(code) == "carnac_env/Carnac-v0"


def test_lazy_attributes_resolve_and_unknown_ones_raise() -> None:
    import carnac_env

    assert carnac_env.GameState.__name__ == "GameState"
    assert callable(carnac_env.env)
    with pytest.raises(AttributeError, match="no attribute 'nonsense'"):
        _ = carnac_env.nonsense


def test_a_find_spec_before_the_import_still_registers() -> None:
    """Libraries probe for Gymnasium with importlib.util.find_spec (TorchRL does) before importing it."""
    code = (
        "import importlib.util, carnac_env\n"
        "assert importlib.util.find_spec('gymnasium') is not None\n"
        "import gymnasium\n"
        "print('carnac_env/Carnac-v0' in gymnasium.registry)"
    )
    assert _run(code) == "True"


#: The modules kept for old imports, and the names each held, now at home elsewhere.
OLD_PATHS = {
    "carnac_env.aec": ("carnac_env.envs.aec", ["env", "raw_env", "AGENTS", "RENDER_MODES"]),
    "carnac_env.gym_env": ("carnac_env.envs.gym", ["CarnacEnv"]),
    "carnac_env.vector_env": ("carnac_env.envs.vector", ["CarnacVectorEnv", "AUTORESET_MODES"]),
    "carnac_env.env_common": ("carnac_env.envs.infos", ["AECInfo", "GymInfo", "VectorInfo", "blank_info"]),
    "carnac_env.rllib": ("carnac_env.envs.rllib", ["RLlibObservations", "env", "multi_agent_env"]),
    "carnac_env.symmetry": ("carnac_env.core.symmetry", ["augment", "symmetries", "symmetry", "transform_action"]),
}


@pytest.mark.parametrize("old", sorted(OLD_PATHS))
def test_old_module_paths_still_import_the_same_objects(old: str) -> None:
    import importlib

    new, names = OLD_PATHS[old]
    kept, home = importlib.import_module(old), importlib.import_module(new)
    assert "kept for old imports" in kept.__doc__.lower()
    for name in names:
        assert getattr(kept, name) is getattr(home, name), (old, name)
    assert set(kept.__all__) <= set(dir(kept))


def test_no_module_of_the_package_imports_a_path_kept_for_old_imports() -> None:
    """The thin modules are for users' old imports; the package itself imports the new homes."""
    import ast
    from pathlib import Path

    package = Path(__file__).resolve().parent.parent / "carnac_env"
    old = {*OLD_PATHS, "carnac_env.openspiel"}
    offenders = []
    for path in package.rglob("*.py"):
        if path.parent == package and f"carnac_env.{path.stem}" in old:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
            offenders += [f"{path.relative_to(package)}: {name}" for name in names if name in old]
    assert offenders == [], offenders
