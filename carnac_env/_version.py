"""The package's version, in a module below every layer (the arena and the evaluation cards
record it; ``carnac_env.__version__`` is this). Keep it equal to ``version`` in pyproject.toml
(tests/ci/test_packaging.py checks)."""

__version__ = "0.1.0"
