"""The package as an index would show it: metadata, the licence, py.typed and the index page.

The built sdist and wheel are checked by CI's wheel entry (.ci/check_dist.py), which also
installs the wheel in a fresh venv outside the repository and plays an arena with it.
"""

from __future__ import annotations

import re
import sys

import pytest
from _paths import ROOT

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = pytest.importorskip("tomli", reason="Python 3.10 reads pyproject.toml with tomli")

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
PROJECT = PYPROJECT["project"]
INDEX_PAGE = ROOT / PROJECT["readme"]["file"]


def test_licence_file_is_mit_as_the_metadata_says() -> None:
    assert PROJECT["license"] == "MIT"
    assert PROJECT["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License") and 'THE SOFTWARE IS PROVIDED "AS IS"' in text


def test_classifiers_name_status_audience_topic_and_each_python() -> None:
    classifiers = PROJECT["classifiers"]
    for prefix in ("Development Status :: ", "Intended Audience :: ", "Topic :: ", "Typing :: Typed"):
        assert any(c.startswith(prefix) for c in classifiers), prefix
    assert not any(c.startswith("License :: ") for c in classifiers)  # PEP 639: the license field says it
    versions = sorted(
        int(c.rsplit(".", 1)[1]) for c in classifiers if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)
    )
    oldest = int(re.fullmatch(r">=3\.(\d+)", PROJECT["requires-python"]).group(1))
    assert versions == list(range(oldest, versions[-1] + 1))  # no gap, starting at requires-python
    assert sys.version_info[:2] <= (3, versions[-1]), "a Python newer than the classifiers declare"


def test_typed_marker_ships_inside_the_package() -> None:
    assert (ROOT / "carnac_env" / "py.typed").is_file()
    assert PYPROJECT["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"] == ["carnac_env"]


def test_project_urls_are_absolute() -> None:
    urls = PROJECT["urls"]
    assert urls and all(re.fullmatch(r"https://\S+", value) for value in urls.values())


def test_index_page_has_no_relative_link_or_picture() -> None:
    text = INDEX_PAGE.read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)\s]+)", text) + re.findall(r"<([a-z]+:[^>\s]+)>", text)
    targets += re.findall(r"(?:src|href)=\"([^\"]+)\"", text)
    assert targets, "expected some links"
    relative = [t for t in targets if not t.startswith("https://")]
    assert not relative, relative
    assert "![" not in text  # no pictures: none could be shown without a public home for them


def test_index_page_names_the_python_versions_the_metadata_declares() -> None:
    text = INDEX_PAGE.read_text(encoding="utf-8")
    versions = [c.rsplit(" ", 1)[1] for c in PROJECT["classifiers"] if re.fullmatch(r".*Python :: 3\.\d+", c)]
    assert f"Python {versions[0]} to {versions[-1]}" in text


def test_index_page_names_only_extras_that_exist() -> None:
    text = INDEX_PAGE.read_text(encoding="utf-8")
    install = text[text.index("## Install") : text.index("## Quick start")]
    named = set(re.findall(r"`([a-z]+)`", install.split("extras add the rest:")[1]))
    assert named <= set(PROJECT["optional-dependencies"]), named - set(PROJECT["optional-dependencies"])


def test_index_page_quick_start_runs() -> None:
    text = INDEX_PAGE.read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    assert len(blocks) == 1
    namespace: dict = {}
    exec(compile(blocks[0], str(INDEX_PAGE), "exec"), namespace)  # our own page
    assert namespace["env"].unwrapped.game.is_over


@pytest.mark.parametrize("line", ["pip install -e .", 'pip install -e ".[test]"'])
def test_readme_says_how_to_install_from_a_clone(line: str) -> None:
    assert line in (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_version_is_the_one_the_metadata_declares() -> None:
    """One version: carnac_env._version (which the arena and the cards record) and pyproject's."""
    import carnac_env
    from carnac_env._version import __version__

    assert __version__ == PROJECT["version"] == carnac_env.__version__
