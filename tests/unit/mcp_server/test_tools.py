"""Which failures of a tool reach the model as a tool error with the HTTP API's words, and which stay crashes."""

from __future__ import annotations

import pytest
from mcp.server.mcpserver.exceptions import ToolError
from redis.exceptions import ConnectionError as RedisConnectionError

from turnstream.mcp_server.tools import expected_errors, tool_error
from turnstream.operations.erasure import ErasureNotConfirmed
from turnstream.serve.errors import InvalidRequest, NotFound
from turnstream.serve.scope import OutOfScope, Scope, owner_for


@pytest.mark.parametrize(
    "error, message",
    [
        (NotFound("maya"), "no such session or user"),
        (OutOfScope("s1"), "no such session or user"),  # another tenant's reads as unknown, as over HTTP
        (InvalidRequest("budget_tokens", "at least 64"), "budget_tokens: at least 64"),
        (InvalidRequest(None, "give user_id or session_id, exactly one"), "give user_id or session_id, exactly one"),
        (ErasureNotConfirmed("no worker confirmed it"), "no worker confirmed it"),
        (RedisConnectionError("refused"), "Redis is unavailable"),
    ],
)
def test_an_expected_failure_is_a_tool_error_with_the_apis_words(error: Exception, message: str) -> None:
    answer = tool_error(error)
    assert isinstance(answer, ToolError) and str(answer) == message


def test_a_search_or_note_without_an_owner_says_so() -> None:
    with pytest.raises(ValueError) as caught:
        owner_for(Scope("acme"), None, None)
    answer = tool_error(caught.value)
    assert answer is not None and str(answer) == "give user_id or session_id"


def test_a_crash_stays_a_crash_and_its_words_stay_on_the_server() -> None:
    assert tool_error(KeyError("secret detail")) is None
    with pytest.raises(KeyError, match="secret detail"), expected_errors():
        raise KeyError("secret detail")


def test_expected_errors_raise_the_sdks_tool_error_from_the_failure() -> None:
    with pytest.raises(ToolError, match="^no such session or user$") as caught, expected_errors():
        raise NotFound("maya")
    assert isinstance(caught.value.__cause__, NotFound)
    own = ToolError("already the model's words")
    with pytest.raises(ToolError) as again, expected_errors():
        raise own
    assert again.value is own
