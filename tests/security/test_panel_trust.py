"""Issue 22 finding 2: a panel file is data, never code.

A panel member named by an import path would be imported and run when the evaluation
builds it; without ``--trust-panel-code`` such a panel is refused before anything is
imported. The shipped panels pass the same check, and mutated real panel files either load
(with built-in members only) or give a CarnacError: nothing else, and no import.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from carnac_env.agents import agent_names, make, parse_spec
from carnac_env.errors import CarnacError
from carnac_env.evaluate import PANEL_DIR, load_panel, panel_ids
from carnac_env.evaluate import panel as panel_module

EVIL = """
from pathlib import Path
Path("ran.txt").write_text("the panel's code ran")

class Agent:
    def __init__(self, seed=0):
        from carnac_env.agents import make
        self.inner = make("random", seed=seed)

    def act(self, env):
        return self.inner.act(env)
"""


def _panel_with(tmp_path: Path, spec: str) -> Path:
    data = json.loads((PANEL_DIR / "small-v1.json").read_text())
    data["members"][1]["spec"] = spec
    path = tmp_path / "panel.json"
    path.write_text(json.dumps(data))
    return path


def test_a_panel_member_naming_code_is_refused_before_any_import(tmp_path: Path) -> None:
    (tmp_path / "evilmod.py").write_text(EVIL)
    panel = _panel_with(tmp_path, "evilmod.Agent")
    command = [sys.executable, "-m", "carnac_env.cli", "evaluate", "random", "--board", "small"]
    command += ["--panel", str(panel), "--games", "1", "--out", "ev", "--no-progress"]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    line = done.stderr.strip().splitlines()[-1]
    assert line.startswith(f"carnac: error: panel file {panel}: member 'evilmod.Agent' names code to import")
    assert "--trust-panel-code" in line
    assert not (tmp_path / "ran.txt").exists() and not (tmp_path / "ev").exists()


def test_trust_panel_code_imports_the_member_as_asked(tmp_path: Path) -> None:
    (tmp_path / "evilmod.py").write_text(EVIL)
    panel = _panel_with(tmp_path, "evilmod.Agent")
    command = [sys.executable, "-m", "carnac_env.cli", "evaluate", "random", "--board", "small"]
    command += ["--panel", str(panel), "--games", "1", "--out", "ev", "--no-progress", "--trust-panel-code"]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "ran.txt").exists()
    card = json.loads((tmp_path / "ev" / "card.json").read_text())
    assert any(o["spec"] == "evilmod.Agent" for o in card["opponents"])


@pytest.mark.parametrize("spec", ["os.system", "subprocess.Popen", "evilmod.Agent:x=1", "nobody", ":sims=3", ""])
def test_other_non_builtin_members_are_refused(tmp_path: Path, spec: str) -> None:
    with pytest.raises(CarnacError, match=r"panel file .*member"):
        load_panel(_panel_with(tmp_path, spec), None)


def test_trust_code_must_be_a_flag(tmp_path: Path) -> None:
    with pytest.raises(CarnacError, match=r"trust_code=1; expected True or False"):
        load_panel("small-v1", None, trust_code=1)


def test_the_shipped_panels_name_built_in_agents_only() -> None:
    assert panel_ids()
    for panel_id in panel_ids():
        for member in load_panel(panel_id, None).members:
            assert parse_spec(member.spec)[0] in agent_names()


def test_a_shipped_panel_is_checked_the_same_way(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = json.loads((PANEL_DIR / "small-v1.json").read_text())
    data["members"][2]["spec"] = "evilmod.Agent"
    (tmp_path / "small-v1.json").write_text(json.dumps(data))
    monkeypatch.setattr(panel_module, "PANEL_DIR", tmp_path)
    with pytest.raises(CarnacError, match="names code to import"):
        load_panel("small-v1", "small")
    with pytest.raises(CarnacError, match="names code to import"):
        load_panel(None, "small")


# --------------------------------------------------------------------------- fuzzing
REAL = [(PANEL_DIR / f"{p}.json").read_bytes() for p in panel_ids()]
NASTY = st.one_of(
    st.sampled_from(["evilmod.Agent", "os.system", "mcts:sims=-1", "mcts:sims=1e999", "greedy", "random:x=1"]),
    st.sampled_from([None, True, 1.5, -1, 2**70, 10**400, float("nan"), float("inf"), "", "\u202e", [], {}]),
    st.text(max_size=8),
    st.integers(),
    st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=4), st.lists, max_leaves=6),
)


def _paths(value: object, prefix: tuple = ()) -> list[tuple]:
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*prefix, index))
    return found


def _set(value: object, path: tuple, new: object) -> object:
    if not path:
        return new
    value[path[0]] = _set(value[path[0]], path[1:], new)  # type: ignore[index]
    return value


@st.composite
def mutated_panels(draw: st.DrawFn) -> bytes:
    """A shipped panel file with a few fields replaced, removed or its bytes damaged."""
    raw = draw(st.sampled_from(REAL))
    if draw(st.booleans()):
        data = json.loads(raw)
        for _ in range(draw(st.integers(1, 3))):
            path = draw(st.sampled_from(_paths(data)))
            if path and draw(st.booleans()) and isinstance(data, dict):
                parent = data
                for key in path[:-1]:
                    parent = parent[key]
                if isinstance(parent, dict):
                    del parent[path[-1]]
                    continue
            data = _set(data, path, draw(NASTY))
        return json.dumps(data).encode()
    data = bytearray(raw)
    for _ in range(draw(st.integers(1, 4))):
        where = draw(st.integers(0, len(data) - 1))
        action = draw(st.sampled_from(["flip", "cut", "insert"]))
        if action == "flip":
            data[where] = draw(st.integers(0, 255))
        elif action == "cut":
            del data[where : where + draw(st.integers(1, 50))]
        else:
            data[where:where] = draw(st.binary(min_size=1, max_size=8))
    return bytes(data)


def _no_import(spec: str, path: str) -> object:
    raise AssertionError(f"a panel file made the package import {path!r}")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=mutated_panels())
def test_mutated_panel_files_load_with_built_in_members_or_give_a_carnac_error(tmp_path: Path, raw: bytes) -> None:
    path = tmp_path / "panel.json"
    path.write_bytes(raw)
    # the one place a spec imports a module (carnac_env.agents.user_code._import_target)
    with mock.patch("carnac_env.agents.user_code._import_target", _no_import):
        try:
            panel = load_panel(path, None)
        except CarnacError:
            return
        for member in panel.members:
            assert parse_spec(member.spec)[0] in agent_names()
            with contextlib.suppress(CarnacError):  # a bad option: refused as evaluate would
                make(member.spec)
