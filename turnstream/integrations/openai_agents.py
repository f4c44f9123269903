"""TurnstreamSession: an OpenAI Agents SDK `Session` whose history is a turnstream session's compacted context.

`add_items` produces the SDK's Responses-API input items as turns and returns once the worker's context
includes them; `get_items` reads that context back as input items: the anchors, the "history compressed"
marker and the summary/facts block (system messages), the recent tail. Between the two the items go through
chat messages, the form the worker compacts:

- user, assistant, system and developer messages become chat messages of that role, developer as system
  (the chat roles a turn may have), so a developer message comes back as a system one. Text parts
  (input_text, output_text) become text, a lone one a plain string; other parts (images, files) are kept as
  they are. A refusal part is kept as text, so what the model said stays in the history.
- consecutive `function_call` items become ONE assistant message with one tool call each (parallel calls),
  a `function_call_output` a tool message answering its call_id: the compactor keeps or drops a call and its
  results whole, and get_items gives every call with its output.
- reasoning items, hosted-tool calls (web and file search, computer, MCP, code interpreter...) and item
  references are dropped: a chat message cannot carry them, a model cannot take another response's
  reasoning back as input, and a hosted call's result lives on the provider's side. Keeping them in the
  turn's `meta` would store them without their ever coming back, since the context holds messages only.

Turns are numbered from the context's version (integrations/_turns.py), so a session is written by one
TurnstreamSession at a time (its calls take turns on a lock); two writers at once lose the later write to a
RecordTimeout, never silently. `pop_item` sends a pop control record (schemas/control.py) that the worker
applies to the session's tail. `clear_session` erases the session as `turnstream forget --session` does:
erasure is final, so a cleared session id takes no turns any more (TURNSTREAM_FORGET_MARKER_SECONDS);
start a new session id after it.

`recall_tool` is the recall tool (integrations/recall.py) as an Agents SDK FunctionTool, for an Agent's `tools`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Sequence
from types import TracebackType
from typing import Any, cast

from agents.items import TResponseInputItem
from agents.memory import SessionSettings
from agents.tool import FunctionTool
from agents.tool_context import ToolContext

from turnstream.client import ContextClient, GatewayClient, RecordTimeout, SyncContextClient
from turnstream.compaction.incremental import PopError
from turnstream.integrations import recall
from turnstream.integrations._turns import SessionErased, next_seq, session_turns, turn_id
from turnstream.integrations.openai_tools import RecallHandler
from turnstream.schemas.context import ContextDoc
from turnstream.schemas.control import PopRequest, pop_record
from turnstream.settings import Settings
from turnstream.text.chat import Message

__all__ = [
    "PopError",
    "SessionErased",
    "TurnstreamSession",
    "context_items",
    "items_of",
    "messages_from_items",
    "recall_tool",
]

Item = dict[str, Any]
"""A Responses-API input item as plain JSON (TResponseInputItem is a union of TypedDicts over it)."""

TEXT_PARTS = ("input_text", "output_text", "text")


# Items -> chat messages (add_items)


def messages_from_items(items: Iterable[Item]) -> list[Message]:
    """The chat messages of `items` in order; consecutive function calls become one assistant message."""
    messages: list[Message] = []
    calls_open = False  # the newest message is made of function calls only: a next call joins it
    for item in items:
        if item.get("type") == "function_call":
            call = {
                "id": item["call_id"],
                "type": "function",
                "function": {"name": item["name"], "arguments": item["arguments"]},
            }
            if calls_open:
                messages[-1]["tool_calls"].append(call)
            else:
                messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
            calls_open = True
        elif (message := _message(item)) is not None:
            messages.append(message)
            calls_open = False
        # a dropped item (reasoning between parallel calls) leaves the calls open
    return messages


def _message(item: Item) -> Message | None:
    """The chat message of a message or function_call_output item; None for an item that is dropped."""
    kind = item.get("type", "message" if "role" in item else None)
    if kind == "function_call_output":
        return {"role": "tool", "tool_call_id": item["call_id"], "content": _chat_content(item["output"])}
    if kind == "message" and item.get("role") in ("user", "assistant", "system", "developer"):
        role = "system" if item["role"] == "developer" else item["role"]
        return {"role": role, "content": _chat_content(item["content"])}
    return None


def _chat_content(content: str | list[Item]) -> str | list[Item]:
    """Responses content as chat content: text parts as text, a lone text part as a plain string."""
    if isinstance(content, str):
        return content
    parts = [_chat_part(part) for part in content]
    if len(parts) == 1 and parts[0].get("type") == "text":
        return str(parts[0]["text"])
    return parts


def _chat_part(part: Item) -> Item:
    if part.get("type") in TEXT_PARTS:
        return {"type": "text", "text": part["text"]}
    if part.get("type") == "refusal":
        return {"type": "text", "text": part["refusal"]}
    return part


# Chat messages -> items (get_items, pop_item)


def items_of(message: Message) -> list[Item]:
    """The input items of one context message: a message item, one function_call per tool call, or an output."""
    role, content = message["role"], message.get("content") or ""
    if role == "tool":
        return [
            {
                "type": "function_call_output",
                "call_id": message["tool_call_id"],
                "output": _items_content(content, "input_text"),
            }
        ]
    items: list[Item] = []
    if content or not message.get("tool_calls"):  # a message that only calls tools has no content
        items.append(
            {"role": role, "content": _items_content(content, "output_text" if role == "assistant" else "input_text")}
        )
    items += [
        {
            "type": "function_call",
            "call_id": call["id"],
            "name": call["function"]["name"],
            "arguments": call["function"]["arguments"],
        }
        for call in message.get("tool_calls") or ()
    ]
    return items


def _items_content(content: str | list[Item], text_type: str) -> str | list[Item]:
    if isinstance(content, str):
        return content
    return [{"type": text_type, "text": part["text"]} if part.get("type") == "text" else part for part in content]


def context_items(messages: Sequence[Message], limit: int | None = None) -> list[Item]:
    """The context's messages as input items, every call with its output; with `limit`, the newest `limit`
    items, widened to the start of a tool-call step that would otherwise lose its call or an output."""
    units = [_answered(unit) for unit in _steps(messages)]
    if limit is not None:
        units = _newest(units, limit)
    return [item for unit in units for item in unit]


def _steps(messages: Sequence[Message]) -> list[list[Item]]:
    """The items per message, the results of a tool-call message joined to its step."""
    steps: list[list[Item]] = []
    for message in messages:
        if message["role"] == "tool" and steps:
            steps[-1] += items_of(message)
        else:
            steps.append(items_of(message))
    return steps


def _answered(step: list[Item]) -> list[Item]:
    """`step` without a call that has no output yet (only the newest step can have one) and without an output
    whose call is not in it: the Responses and chat APIs refuse either."""
    calls = {item["call_id"] for item in step if item.get("type") == "function_call"}
    outputs = {item["call_id"] for item in step if item.get("type") == "function_call_output"}
    return [item for item in step if item.get("call_id") is None or item["call_id"] in calls & outputs]


def _newest(steps: list[list[Item]], limit: int) -> list[list[Item]]:
    """The newest steps that hold at least `limit` items (all, when there are fewer)."""
    taken, count = len(steps), 0
    while taken > 0 and count < limit:
        taken -= 1
        count += len(steps[taken])
    return steps[taken:]


def tail_start(doc: ContextDoc) -> int:
    """Index of the first tail message: after the summary block when history was dropped, else after the
    anchors (everything up to the first user message, or the leading system messages before one)."""
    if doc.marker_index is not None:
        return next(
            (i for i in range(doc.marker_index, len(doc.messages)) if doc.positions[i] is not None), len(doc.messages)
        )
    roles = [message["role"] for message in doc.messages]
    if "user" in roles:
        return roles.index("user") + 1
    return next((i for i, role in enumerate(roles) if role != "system"), len(roles))


def poppable(doc: ContextDoc) -> tuple[int, Item]:
    """The conversation position of the context's newest message and its one item; PopError when it cannot be
    popped (pinned as an anchor or compacted away, or a message of several items)."""
    newest = len(doc.messages) - 1
    position = doc.positions[newest] if len(doc.positions) == len(doc.messages) else None  # none in older documents
    if position is None or newest < tail_start(doc):
        raise PopError(
            f"session {doc.session_key!r}: its newest item is no longer in the context's tail "
            "(an anchor, or compacted into the summary): it cannot be popped"
        )
    items = items_of(doc.messages[newest])
    if len(items) != 1:
        raise PopError(
            f"session {doc.session_key!r}: its newest message holds {len(items)} items (a message and "
            "its tool calls, or parallel calls): they are popped together or not at all"
        )
    return position, items[0]


# The Session


class TurnstreamSession:
    """An Agents SDK session on a turnstream session: `Runner.run(agent, input, session=TurnstreamSession(...))`.

    It connects on first use and closes with `aclose()` or `async with`; pass `gateway` to share one
    GatewayClient (one Kafka producer) among a process's sessions, which then leaves it open.
    """

    session_settings: SessionSettings | None = None

    def __init__(
        self,
        session_id: str,
        *,
        user_id: str | None = None,
        tenant: str | None = None,
        settings: Settings | None = None,
        timeout: float | None = None,
        gateway: GatewayClient | None = None,
        session_settings: SessionSettings | None = None,
    ) -> None:
        """`timeout`: how long add_items and pop_item wait for the context to include their write (default: the
        settings' record_timeout_seconds)."""
        self.session_id = session_id
        self.user_id = user_id
        self.tenant = tenant
        self.settings = settings or (gateway.settings if gateway else Settings())
        self.timeout = timeout if timeout is not None else self.settings.record_timeout_seconds
        self.session_settings = session_settings or SessionSettings()
        self._gateway = gateway
        self._owns_gateway = gateway is None
        self._starting = asyncio.Lock()
        self._writing = asyncio.Lock()  # writes number turns from the context they read: one at a time

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The compacted context as input items, oldest first; `limit` widens to keep tool-call steps whole."""
        doc = await self._context()
        return cast(list[TResponseInputItem], context_items(doc.messages if doc else [], limit))

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Produce `items` as the session's next turns; returns once the context includes them.

        RecordTimeout when it does not in time; SessionErased when the session was cleared (erased) before.
        """
        messages = messages_from_items(cast(list[Item], items))
        if not messages:
            return
        async with self._writing:
            gateway = await self._client()
            turns = session_turns(
                self.session_id,
                messages,
                next_seq(await self._context()),
                tenant=self.tenant,
                user_id=self.user_id,
                ts=time.time(),
            )
            try:
                await gateway.record(turns, timeout=self.timeout)
            except RecordTimeout as timeout:
                # an erased session's forget marker says why nothing was applied
                if await gateway.context.store.forgotten(timeout.session_key):
                    raise SessionErased(timeout.session_key) from timeout
                raise

    async def pop_item(self) -> TResponseInputItem | None:
        """Remove the newest item while it is in the context's tail and return it; None for an empty session.

        A popped function_call_output re-opens its call, which get_items leaves out until an output comes
        again (a call waiting for its output is the newest item, and the next pop takes it). PopError when
        the newest item is no longer in the tail (an anchor, or compacted away) or shares its message with
        other items; RecordTimeout when the worker did not apply the pop in time (its dead-letter topic says why).
        """
        async with self._writing:
            doc = await self._context()
            if doc is None or not doc.messages:
                return None
            position, item = poppable(doc)
            seq = next_seq(doc)
            request = PopRequest(self.session_id, self.tenant, turn_id(seq, {"pop": position}), seq, position)
            await self._apply_pop(request)
            return cast(TResponseInputItem, item)

    async def clear_session(self) -> None:
        """Erase the session as `turnstream forget --session` does; its id takes no turns afterwards."""
        from turnstream.operations.erasure import erase  # worker-side, as `forget`: loaded only to erase

        await erase(self.settings, session=self.session_id, tenant=self.tenant)

    async def _apply_pop(self, request: PopRequest) -> None:
        """Produce the pop and wait until the context includes it, as `record` does for turns."""
        gateway = await self._client()
        deadline = time.monotonic() + self.timeout
        acknowledged = await gateway.producer.send_raw(request.session_key.encode(), pop_record(request))
        try:
            await asyncio.wait_for(acknowledged, self.timeout)
        except TimeoutError:
            raise RecordTimeout(
                request.session_key, request.control_id, self.timeout, "acknowledged by the broker"
            ) from None
        result = await gateway.context.wait_for(
            self.session_id, request.control_id, max(0.0, deadline - time.monotonic()), self.tenant, self.user_id
        )
        if not result.fresh:
            raise RecordTimeout(request.session_key, request.control_id, self.timeout, "applied to the context")

    async def _context(self) -> ContextDoc | None:
        return await (await self._client()).context.get(self.session_id, self.tenant, self.user_id)

    async def _client(self) -> GatewayClient:
        async with self._starting:
            if self._gateway is None:
                gateway = GatewayClient(self.settings)
                await gateway.start()
                self._gateway = gateway
        return self._gateway

    async def aclose(self) -> None:
        """Close the gateway this session started (a shared one stays open)."""
        if self._owns_gateway and self._gateway is not None:
            gateway, self._gateway = self._gateway, None
            await gateway.aclose()

    async def __aenter__(self) -> TurnstreamSession:
        return self

    async def __aexit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        await self.aclose()


# The recall tool


def recall_tool(
    client: ContextClient | SyncContextClient,
    *,
    user_id: str | None = None,
    session_id: str | None = None,
    tenant: str | None = None,
) -> FunctionTool:
    """The recall tool as a FunctionTool: `Agent(..., tools=[recall_tool(client, user_id="maya")])`. The owner (the
    user, or with `session_id` and no user that session) is fixed here; the model only writes the query."""
    handler = RecallHandler(client, user_id=user_id, session_id=session_id, tenant=tenant)

    async def invoke(_context: ToolContext[Any], arguments: str) -> str:
        return await handler.acall(arguments)

    return FunctionTool(
        name=recall.NAME, description=recall.DESCRIPTION, params_json_schema=recall.parameters(), on_invoke_tool=invoke
    )
