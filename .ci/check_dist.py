"""Check the built sdist and wheel: what they carry, what they leave out, and their metadata.

``python .ci/check_dist.py DIST`` (DIST holds one ``.tar.gz`` and one ``.whl``, as
``python -m build --outdir DIST`` leaves them). Every file of the ``carnac_env`` package in the
source tree (its shipped models, reference panels and ``py.typed`` included) must be in both; the
sdist holds nothing else but the licence, the two READMEs, ``pyproject.toml`` and ``PKG-INFO``
(no examples, models of the examples, tests, docs, maintainer scripts or CI); the wheel's metadata must carry the
licence, the index page as its description, the classifiers and ``Requires-Python``.
Prints each check and exits 1 if any fails.
"""

from __future__ import annotations

import sys
import tarfile
import zipfile
from email.parser import Parser
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: What the sdist may hold at its top level (hatchling always adds .gitignore, which it reads
#: again when it builds the wheel from the sdist).
SDIST_TOP_LEVEL = {"carnac_env", "LICENSE", "README.md", "README-pypi.md", "pyproject.toml", "PKG-INFO", ".gitignore"}


def package_files() -> set[str]:
    """The package's files in the source tree, without byte code and numba caches."""
    files = set()
    for path in (ROOT / "carnac_env").rglob("*"):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
            files.add(path.relative_to(ROOT).as_posix())
    return files


def main(dist: Path) -> int:
    (sdist,) = dist.glob("*.tar.gz")
    (wheel,) = dist.glob("*.whl")
    failures: list[str] = []
    passed = 0

    def check(ok: bool, what: str) -> None:
        nonlocal passed
        print(f"{'ok  ' if ok else 'FAIL'} {what}")
        if ok:
            passed += 1
        else:
            failures.append(what)

    expected = package_files()
    with tarfile.open(sdist) as tar:
        names = [name.split("/", 1)[1] for name in tar.getnames() if "/" in name]
    sdist_files = {name for name in names if name and not name.endswith("/")}
    with zipfile.ZipFile(wheel) as zipped:
        wheel_files = set(zipped.namelist())
        (metadata_name,) = [n for n in wheel_files if n.endswith(".dist-info/METADATA")]
        metadata = Parser().parsestr(zipped.read(metadata_name).decode("utf-8"))
        licence_names = [n for n in wheel_files if n.endswith(".dist-info/licenses/LICENSE")]

    for kind, files in (("sdist", sdist_files), ("wheel", wheel_files)):
        missing = sorted(expected - files)
        check(
            not missing,
            f"the {kind} carries every file of carnac_env ({len(expected)}){': missing ' if missing else ''}"
            f"{', '.join(missing[:5])}",
        )
        for must in (
            "carnac_env/py.typed",
            "carnac_env/models/general.npz",
            "carnac_env/models/specialists/small.npz",
            "carnac_env/evaluate/panels/small-v1.json",
        ):
            check(must in files, f"the {kind} carries {must}")
        check(
            not any(name.startswith(("examples/", "tests/", "docs/", "scripts/", ".ci/")) for name in files),
            f"the {kind} carries no examples, tests, docs, scripts or CI",
        )
    extra = sorted({name.split("/", 1)[0] for name in sdist_files} - SDIST_TOP_LEVEL)
    check(
        not extra,
        f"the sdist holds only {', '.join(sorted(SDIST_TOP_LEVEL))}{': also ' if extra else ''}{', '.join(extra)}",
    )
    check(bool(licence_names), "the wheel carries LICENSE under .dist-info/licenses")
    check(metadata.get("License-Expression") == "MIT", "the wheel's metadata says License-Expression: MIT")
    check(metadata.get("Requires-Python", "").startswith(">=3."), "the wheel's metadata has Requires-Python")
    check(metadata.get("Description-Content-Type") == "text/markdown", "the description is Markdown")
    index_page = (ROOT / "README-pypi.md").read_text(encoding="utf-8")
    check(metadata.get_payload().strip() == index_page.strip(), "the description is README-pypi.md")
    check(
        any(value.startswith("Development Status") for value in metadata.get_all("Classifier", [])),
        "the wheel's metadata has the classifiers",
    )
    for path in (sdist, wheel):
        print(f"     {path.name}: {path.stat().st_size / 1e6:.1f} MB")
    print(f"check_dist: {passed} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(Path(sys.argv[1])))
