"""One module per `turnstream` subcommand; each exposes `register(subparsers)`."""
