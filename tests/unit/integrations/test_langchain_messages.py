"""LangChain messages <-> chat messages and turns, and the pre-model hook's choice of messages: no services."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    FunctionMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    convert_to_openai_messages,
)

from turnstream.compaction.marker import MARKERS
from turnstream.compaction.messages import validate_messages
from turnstream.integrations._turns import next_seq, session_turns, turn_id
from turnstream.integrations.langchain import (
    answered,
    from_langchain,
    from_langchain_message,
    model_input,
    newest_human,
    to_langchain,
    to_langchain_message,
    turnstream_pre_model_hook,
)
from turnstream.prompt.assemble import Prompt
from turnstream.settings import Settings
from turnstream.text.tokens import count_messages

text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.floats(allow_nan=False, allow_infinity=False) | text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=8,
)
arguments = st.dictionaries(text, json_values, max_size=4)
content = text | st.lists(st.builds(lambda t: {"type": "text", "text": t}, text), min_size=1, max_size=3)
names = st.none() | st.from_regex(r"[a-z]{1,8}", fullmatch=True)


@st.composite
def tool_step(draw: st.DrawFn, number: int) -> list[BaseMessage]:
    """An assistant message making 1-3 calls, then one result per call, in any order."""
    ids = [f"call-{number}-{n}" for n in range(draw(st.integers(1, 3)))]
    calls = [
        {
            "id": i,
            "name": draw(st.from_regex(r"[a-z_]{1,12}", fullmatch=True)),
            "args": draw(arguments),
            "type": "tool_call",
        }
        for i in ids
    ]
    results = [ToolMessage(draw(content), tool_call_id=i) for i in draw(st.permutations(ids))]
    return [AIMessage(draw(st.just("") | text), tool_calls=calls), *results]


@st.composite
def conversations(draw: st.DrawFn) -> list[BaseMessage]:
    messages: list[BaseMessage] = [SystemMessage(draw(text))] if draw(st.booleans()) else []
    for number in range(draw(st.integers(0, 8))):
        kind = draw(st.sampled_from(["human", "ai", "tools"]))
        if kind == "tools":
            messages += draw(tool_step(number))
        else:
            cls = HumanMessage if kind == "human" else AIMessage
            messages.append(cls(draw(content), name=draw(names)))
    return messages


@given(conversations())
def test_a_conversation_with_tool_calls_comes_back_as_it_went(messages: list[BaseMessage]) -> None:
    assert to_langchain(from_langchain(messages)) == messages


@given(conversations(), st.integers(0, 10_000))
def test_the_chat_messages_are_valid_turns_numbered_on_from_the_context(
    messages: list[BaseMessage], first: int
) -> None:
    chat = from_langchain(messages)
    validate_messages(chat)  # the worker's own rule: shapes, and every call answered before anything else
    turns = session_turns("s-1", chat, first, tenant="acme", user_id="maya", ts=1.0)
    assert [t.seq for t in turns] == list(range(first, first + len(chat)))
    assert len({t.turn_id for t in turns}) == len(turns)
    assert [t.message for t in turns] == chat


def test_tool_calls_carry_json_arguments_and_results_their_call_id() -> None:
    call = AIMessage("", tool_calls=[{"id": "c1", "name": "weather", "args": {"city": "Oslo", "days": 2}}])
    assert from_langchain([call, ToolMessage("rain", tool_call_id="c1")]) == [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "weather", "arguments": '{"city":"Oslo","days":2}'},
                }
            ],
        },
        {"role": "tool", "content": "rain", "tool_call_id": "c1"},
    ]


def test_arguments_that_are_no_json_object_stay_text_as_an_invalid_call_and_go_back_unchanged() -> None:
    calls = [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "not json"}},
        {"id": "c2", "type": "function", "function": {"name": "g", "arguments": "[1, 2]"}},
    ]
    message = to_langchain_message({"role": "assistant", "content": None, "tool_calls": calls})
    assert isinstance(message, AIMessage) and message.tool_calls == [] and message.content == ""
    assert [(c["id"], c["args"]) for c in message.invalid_tool_calls] == [("c1", "not json"), ("c2", "[1, 2]")]
    assert from_langchain_message(message)["tool_calls"] == calls


def test_a_context_s_marker_and_summary_are_system_messages() -> None:
    context = [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Plan a trip"},
        {"role": "system", "content": "[history compressed]"},
        {"role": "system", "content": "Summary: Oslo"},
        {"role": "user", "content": [{"type": "text", "text": "and Bergen?"}]},
    ]
    assert [type(m) for m in to_langchain(context)] == [
        SystemMessage,
        HumanMessage,
        SystemMessage,
        SystemMessage,
        HumanMessage,
    ]


def test_bare_strings_in_a_part_list_become_text_parts() -> None:
    assert from_langchain_message(HumanMessage(["hi", {"type": "image_url", "image_url": {"url": "x"}}]))[
        "content"
    ] == [{"type": "text", "text": "hi"}, {"type": "image_url", "image_url": {"url": "x"}}]


@pytest.mark.parametrize(
    "message", [FunctionMessage("1", name="f"), ChatMessage("x", role="developer")], ids=["function", "developer"]
)
def test_a_message_with_no_chat_role_turnstream_keeps_is_refused(message: BaseMessage) -> None:
    with pytest.raises(ValueError, match="no chat role"):
        from_langchain_message(message)


def test_a_chat_message_with_a_chat_role_is_that_role() -> None:
    assert from_langchain_message(ChatMessage("hi", role="user")) == {"role": "user", "content": "hi"}


def test_turn_ids_follow_position_and_content() -> None:
    message = {"role": "user", "content": "hi"}
    assert turn_id(3, message) == turn_id(3, dict(message))
    assert len({turn_id(3, message), turn_id(4, message), turn_id(3, {"role": "user", "content": "ho"})}) == 3
    assert next_seq(None) == 0


def test_the_model_sees_the_prompt_then_the_state_s_step() -> None:
    step = [
        HumanMessage("and Bergen?", id="h2"),
        AIMessage("", tool_calls=[{"id": "c", "name": "f", "args": {}}]),
        ToolMessage("ok", tool_call_id="c"),
    ]
    state = [HumanMessage("Plan a trip", id="h1"), AIMessage("Sure"), *step]
    assert newest_human(state) == 2 and newest_human([AIMessage("hi")]) is None
    prompt = [{"role": "system", "content": "[history compressed]"}, {"role": "user", "content": "and Bergen?"}]
    assert model_input(prompt, state[2:]) == [SystemMessage("[history compressed]"), *step]


def test_a_context_recorded_mid_step_loses_its_unanswered_call_before_the_model_sees_it() -> None:
    user = {"role": "user", "content": "weather?"}
    call = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": c, "type": "function", "function": {"name": "weather", "arguments": "{}"}} for c in ("a", "b")
        ],
    }
    results = [{"role": "tool", "tool_call_id": c, "content": "rain"} for c in ("b", "a")]
    assert answered([user, call, results[0]]) == [user] and answered([user, call]) == [user]
    assert answered([user, call, *results]) == [user, call, *results] and answered([user]) == [user]
    assert model_input([user, call, {"role": "user", "content": "and?"}], [HumanMessage("and?")]) == [
        HumanMessage("weather?"),
        HumanMessage("and?"),
    ]


def _step(n: int) -> list[dict[str, Any]]:
    """A tool-call step whose arguments LangChain sends longer than they were recorded (json.dumps' spaces)."""
    arguments = f'{{"city":"Oslo","day":{n},"seats":2,"class":"second"}}'
    call = {"id": f"c{n}", "type": "function", "function": {"name": "search_trains", "arguments": arguments}}
    return [
        {"role": "user", "content": f"And day {n}?"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": f"c{n}", "content": f"Day {n}: the 8:05 train."},
        {"role": "assistant", "content": f"Take the 8:05 on day {n}."},
    ]


def _sent(messages: list[BaseMessage]) -> int:
    return count_messages(convert_to_openai_messages(messages))


ANCHORS = [{"role": "system", "content": "You plan train trips."}, {"role": "user", "content": "Plan my trip."}]
MEMORY = {"role": "system", "content": "Memory about the user:\n- prefers window seats"}
QUESTION = {"role": "user", "content": "Which train on day 4?"}


def test_a_prompt_filled_to_its_budget_as_counted_fits_it_as_langchain_sends_it() -> None:
    marker = {"role": "system", "content": MARKERS["en"]}
    prompt = [*ANCHORS, marker, {"role": "system", "content": "Summary: days 0 and 1."}, MEMORY]
    prompt += [*_step(2), *_step(3), QUESTION]
    budget = count_messages(prompt)  # the read filled it exactly
    step = [HumanMessage(QUESTION["content"])]
    assert _sent(model_input(prompt, step)) > budget  # the re-written arguments go over
    sent = model_input(prompt, step, budget)
    assert _sent(sent) <= budget
    # the oldest units went, the call with its result; the anchors, marker, summary and memory block stay
    assert sent == [*to_langchain([*prompt[:5], _step(2)[-1], *_step(3)]), *step]
    assert model_input(prompt, step, budget + 40) == model_input(prompt, step)  # room enough: nothing goes


def test_a_prompt_that_had_no_marker_gets_one_after_its_anchors_when_its_tail_is_cut() -> None:
    prompt = [*ANCHORS, MEMORY, *_step(2), *_step(3), QUESTION]
    step = [HumanMessage(QUESTION["content"])]
    sent = model_input(prompt, step, count_messages(prompt))
    assert _sent(sent) <= count_messages(prompt)
    marker = {"role": "system", "content": MARKERS["en"]}
    assert sent == [*to_langchain([*ANCHORS, marker, MEMORY, _step(2)[-1], *_step(3)]), *step]


class RecordingContext:
    """Stands for SyncContextClient.build_prompt: what it was asked, and a prompt naming the call."""

    settings = Settings()

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, str | None, bool]] = []

    def build_prompt(
        self,
        session_id: str,
        user_text: str,
        k: int | None = None,
        tenant: str | None = None,
        user_id: str | None = None,
        record: bool = True,
    ) -> Prompt:
        self.calls.append((session_id, user_text, user_id, record))
        head = {"role": "system", "content": f"prompt {len(self.calls)}"}
        return Prompt([head, {"role": "user", "content": user_text}], [], [], False, {})


def test_the_hook_records_a_step_s_first_prompt_and_gives_its_later_calls_the_same() -> None:
    context = RecordingContext()
    hook = turnstream_pre_model_hook(Settings(), context=context)  # type: ignore[arg-type]
    config: Any = {"configurable": {"thread_id": "t-1", "user_id": "maya"}}
    human = HumanMessage("weather in Oslo?", id="h1")
    first = hook.invoke({"messages": [human]}, config)
    call = AIMessage("", tool_calls=[{"id": "c", "name": "weather", "args": {}}], id="a1")
    later = hook.invoke({"messages": [human, call, ToolMessage("rain", tool_call_id="c", id="t1")]}, config)
    assert context.calls == [("t-1", "weather in Oslo?", "maya", True)]
    assert first["llm_input_messages"] == [SystemMessage("prompt 1"), human]
    assert (
        later["llm_input_messages"][0] == SystemMessage("prompt 1")
        and later["llm_input_messages"][-1].content == "rain"
    )
    hook.invoke({"messages": [human, call, ToolMessage("rain", tool_call_id="c"), HumanMessage("and Bergen?")]}, config)
    assert context.calls[-1] == ("t-1", "and Bergen?", "maya", True)


def test_the_hook_finds_the_session_in_the_state_or_says_where_it_looked() -> None:
    context = RecordingContext()
    hook = turnstream_pre_model_hook(Settings(), session_key="conversation", context=context)  # type: ignore[arg-type]
    hook.invoke({"messages": [HumanMessage("hi")], "conversation": "c-9"})
    assert context.calls == [("c-9", "hi", None, True)]
    with pytest.raises(ValueError, match="'conversation' is neither in config"):
        hook.invoke({"messages": [HumanMessage("hi")]})
