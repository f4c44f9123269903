"""The local OpenAI-compatible server fixture, for the LLM strategy tests."""

from tests.support.llm_server import llm_server  # noqa: F401  (a fixture, found by name)
