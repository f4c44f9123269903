"""`python -m turnstream` runs the CLI."""

import sys

from turnstream.cli import main

if __name__ == "__main__":  # a child process spawned by the worker imports this module again
    sys.exit(main())
