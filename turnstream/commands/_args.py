"""Argument types shared by the commands: a bad value is argparse's one-line usage error, never a traceback."""

from __future__ import annotations

import argparse


def positive_int(text: str) -> int:
    """A whole number ≥ 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def positive_float(text: str) -> float:
    """A finite number > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be above 0, got {text}")
    return value


def port(text: str) -> int:
    """A TCP port; 0 asks for a free one."""
    try:
        number = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= number < 65536:
        raise argparse.ArgumentTypeError(f"port out of range: {number}")
    return number
