"""The serve overhead bench runs against the same live stack as the HTTP API's tests: their fixtures, shared."""

from tests.integration.serve.conftest import live, live_settings, tokens_file

__all__ = ["live", "live_settings", "tokens_file"]
