"""Options that several subcommands share (their parsers import this module; it imports none of them)."""

from __future__ import annotations

import argparse

__all__ = ["add_ray_option"]


def add_ray_option(parser: argparse.ArgumentParser, help_text: str) -> None:
    """``--ray [ADDRESS]``: run on Ray (``local`` when given alone; None when absent)."""
    parser.add_argument("--ray", nargs="?", const="local", default=None, metavar="ADDRESS", help=help_text)
