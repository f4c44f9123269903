"""`python -m turnstream` runs the CLI."""

import sys

from turnstream.cli import main

sys.exit(main())
