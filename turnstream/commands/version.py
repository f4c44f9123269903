"""`turnstream version`: the package and its main dependencies' versions."""

from __future__ import annotations

import argparse
from importlib.metadata import PackageNotFoundError, version

from turnstream import __version__

_DEPENDENCIES = ("faust-streaming", "aiokafka", "redis", "openai", "orjson", "tiktoken")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("version", help="print turnstream's version and its dependencies'")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    print(f"turnstream {__version__}")
    for name in _DEPENDENCIES:
        try:
            print(f"  {name} {version(name)}")
        except PackageNotFoundError:  # an extra's package: the SDK alone has no Faust and no OpenAI client
            print(f"  {name} not installed")
    return 0
