import pytest

from turnstream.text.chat import call_ids, content_text, message_text, tool_calls

pytestmark = pytest.mark.unit


def test_message_text_includes_tool_calls_and_content_parts() -> None:
    message = {
        "role": "assistant",
        "content": [{"type": "text", "text": "checking"}],
        "tool_calls": [{"id": "1", "function": {"name": "search", "arguments": '{"q": "x"}'}}],
    }
    assert message_text(message) == 'checking\nsearch({"q": "x"})'


@pytest.mark.parametrize(
    ("content", "text"),
    [
        ("plain", "plain"),
        (
            [
                {"type": "text", "text": "a"},
                {"type": "image_url", "image_url": {"url": "x"}},
                {"type": "text", "text": "b"},
            ],
            "a\nb",
        ),
        ([{"type": "text", "text": ""}, {"type": "text", "text": "b"}], "\nb"),  # as validated parts say
        ([{"type": "image_url", "text": "not text"}], ""),
        (None, ""),
        # tolerated shapes, which no validator lets through
        ([{"text": "untyped"}, "bare", 3, None], "untyped\nbare\n3"),
        ({"k": 1}, '{"k":1}'),
    ],
)
def test_content_text(content: object, text: str) -> None:
    assert content_text(content) == text


def test_tool_calls_read_validated_calls_and_tolerate_bad_ones() -> None:
    valid = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "search", "arguments": "{}"}},
            {"id": "b", "type": "function", "function": {"name": "book", "arguments": '{"id": 7}'}},
        ],
    }
    assert tool_calls(valid) == [("a", "search", "{}"), ("b", "book", '{"id": 7}')]
    assert call_ids(valid) == ("a", "b")
    assert call_ids({"role": "user", "content": "hi"}) == ()
    assert tool_calls({"role": "assistant", "tool_calls": ["x", {"id": 5}]}) == [("5", "tool", "")]
    assert tool_calls({"role": "assistant", "tool_calls": "nope"}) == [] and tool_calls("nope") == []
