"""LangChain and LangGraph on turnstream: a chat message history over a session's compacted context, and a
LangGraph pre-model hook that hands the model that context plus recalled memory instead of the whole state.

The message conversions are pure functions (`to_langchain`, `from_langchain`); the history and the hook only
move their results through the gateway clients. `recall_tool` is the recall tool (integrations/recall.py) as a
LangChain tool. Needs the `langchain` extra (langchain-core, langgraph).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import orjson
from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    InvalidToolCall,
    SystemMessage,
    ToolCall,
    ToolMessage,
    convert_to_openai_messages,
)
from langchain_core.messages.tool import invalid_tool_call, tool_call
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langchain_core.tools import StructuredTool

from turnstream.client import ContextClient, GatewayClient, RecordTimeout, SyncContextClient, SyncGatewayClient
from turnstream.compaction.fitting import tail_start, unit_starts
from turnstream.compaction.marker import MARKERS, marker_message
from turnstream.integrations import recall
from turnstream.integrations._turns import SessionErased, next_seq, session_turns
from turnstream.integrations.openai_tools import RecallHandler
from turnstream.schemas.context import ContextDoc
from turnstream.schemas.turn import Turn
from turnstream.settings import Settings
from turnstream.text.chat import Message, call_ids, content_text, tool_calls
from turnstream.text.language import detect_language
from turnstream.text.tokens import REPLY_PRIMING_TOKENS, count_message

PROMPT_CACHE_SIZE = 1024
"""Steps whose opening prompt a hook keeps for the step's later model calls."""

_ROLES = {"system": "system", "human": "user", "ai": "assistant", "tool": "tool"}
"""LangChain message type -> chat role."""


# --- conversions (pure) -------------------------------------------------------------------------------------


def _parsed_call(call_id: str, name: str, arguments: str) -> ToolCall | InvalidToolCall:
    """A LangChain tool call from JSON arguments; arguments that are not a JSON object stay as text, invalid."""
    try:
        args = orjson.loads(arguments)
    except orjson.JSONDecodeError:
        args = None
    if isinstance(args, dict):
        return tool_call(name=name, args=args, id=call_id)
    return invalid_tool_call(name=name, args=arguments, id=call_id, error="arguments are not a JSON object")


def to_langchain_message(message: Message) -> BaseMessage:
    """One chat message as its LangChain message; an assistant's tool calls with their arguments parsed."""
    role, name = message["role"], message.get("name")
    content = message.get("content")
    content = "" if content is None else content  # null only on an assistant message that makes tool calls
    if role == "system":
        return SystemMessage(content, name=name)
    if role == "user":
        return HumanMessage(content, name=name)
    if role == "tool":
        return ToolMessage(content, tool_call_id=message["tool_call_id"], name=name)
    calls = [_parsed_call(*call) for call in tool_calls(message)]
    return AIMessage(
        content,
        name=name,
        tool_calls=[c for c in calls if c["type"] == "tool_call"],
        invalid_tool_calls=[c for c in calls if c["type"] == "invalid_tool_call"],
    )


def to_langchain(messages: Sequence[Message]) -> list[BaseMessage]:
    return [to_langchain_message(message) for message in messages]


def _openai_call(call: ToolCall | InvalidToolCall) -> dict[str, Any]:
    arguments = call["args"] if isinstance(call["args"], str) else orjson.dumps(call["args"]).decode()
    return {"id": call["id"], "type": "function", "function": {"name": call["name"], "arguments": arguments}}


def _content(content: str | list[str | dict[str, Any]]) -> str | list[dict[str, Any]]:
    """LangChain content as chat content: a bare string in a part list becomes a text part."""
    if isinstance(content, str):
        return content
    return [part if isinstance(part, dict) else {"type": "text", "text": part} for part in content]


def _role(message: BaseMessage) -> str:
    role = message.role if isinstance(message, ChatMessage) else _ROLES.get(message.type)
    if role is None or role not in _ROLES.values():
        kind = type(message).__name__
        raise ValueError(f"a {kind} (role {role or message.type!r}) has no chat role turnstream keeps")
    return role


def from_langchain_message(message: BaseMessage) -> Message:
    """One LangChain message as a chat message: tool calls with JSON arguments, a tool result with its call's id."""
    converted: Message = {"role": _role(message), "content": _content(message.content)}
    if message.name:
        converted["name"] = message.name
    if isinstance(message, AIMessage) and (message.tool_calls or message.invalid_tool_calls):
        calls: list[ToolCall | InvalidToolCall] = [*message.tool_calls, *message.invalid_tool_calls]
        converted["tool_calls"] = [_openai_call(call) for call in calls]
    if isinstance(message, ToolMessage):
        converted["tool_call_id"] = message.tool_call_id
    return converted


def from_langchain(messages: Sequence[BaseMessage]) -> list[Message]:
    return [from_langchain_message(message) for message in messages]


def context_messages(doc: ContextDoc | None) -> list[BaseMessage]:
    """A stored context as LangChain messages (anchors, marker and summary block as system messages), or none."""
    return [] if doc is None else to_langchain(doc.messages)


def newest_human(messages: Sequence[BaseMessage]) -> int | None:
    """Index of the newest HumanMessage, where the step the model is in began."""
    return next((i for i in range(len(messages) - 1, -1, -1) if isinstance(messages[i], HumanMessage)), None)


def answered(messages: Sequence[Message]) -> Sequence[Message]:
    """`messages` without a trailing tool-call message whose results are not all in yet (recorded mid-step): a chat
    model refuses a call left unanswered when the next message comes."""
    last = next((i for i in range(len(messages) - 1, -1, -1) if messages[i]["role"] != "tool"), None)
    if last is None or not set(call_ids(messages[last])) - {m["tool_call_id"] for m in messages[last + 1 :]}:
        return messages
    return messages[:last]


def sent_tokens(message: BaseMessage) -> int:
    """Tokens a LangChain message costs as a chat model is sent it: LangChain writes tool-call arguments again from
    their parsed form (json.dumps, with spaces), so a call costs more than the compact JSON it was recorded as."""
    return sum(count_message(m) for m in convert_to_openai_messages([message]))


def model_input(
    prompt: Sequence[Message], step: Sequence[BaseMessage], budget_tokens: int | None = None
) -> list[BaseMessage]:
    """build_prompt's messages but its closing user message, then the step as the state has it: the user's own message
    (its parts and id kept) and the calls and results made since. With `budget_tokens`, the prompt's part and the
    step's user message fit it as LangChain sends them: the context's oldest tail units make room, as in the read."""
    context = to_langchain(answered(prompt[:-1]))
    if budget_tokens is None or not step:
        return [*context, *step]
    return [*within_budget(context, sent_tokens(step[0]) + REPLY_PRIMING_TOKENS, budget_tokens), *step]


def within_budget(context: list[BaseMessage], taken: int, budget_tokens: int) -> list[BaseMessage]:
    """`context` (a prompt's messages before its user message, as LangChain messages) within `budget_tokens` less
    `taken`, as sent: its oldest tail units dropped by the compactor's rule (whole call groups, the newest kept, a
    marker after the anchors when the prompt had none).

    The read fills a prompt to its budget counting tool-call arguments as recorded; LangChain sends them longer.
    Cutting here, on the converted messages, rather than reading again with a smaller budget: a second read would
    find the memories the first one gave already in the session's dedup window and leave them out, and the read's
    memory block and summary are system messages this side cannot re-cut.
    """
    costs = [sent_tokens(m) for m in context]
    if sum(costs) + taken <= budget_tokens:
        return context
    messages = from_langchain(context)
    anchors = next((i + 1 for i, m in enumerate(messages) if m["role"] == "user"), None)
    if anchors is None:
        return context  # no anchors, so no tail: the read kept what the budget allowed
    # the tail follows the anchors and the system messages the read put after them (marker, summary, memory)
    begin = max((i + 1 for i, m in enumerate(messages) if m["role"] == "system" and i >= anchors), default=anchors)
    marked = any(m["role"] == "system" and m.get("content") in MARKERS.values() for m in messages[:begin])
    marker = None if marked else marker_message(detect_language(messages))
    marker_cost = count_message(marker) if marker else 0
    room = budget_tokens - taken - sum(costs[:begin])
    start = tail_start(costs[begin:], unit_starts(messages[begin:]), room, marker_cost)
    if start == 0:
        return context
    cut = [to_langchain_message(marker)] if marker else []
    return [*context[:anchors], *cut, *context[anchors:begin], *context[begin + start :]]


# --- the chat message history ---------------------------------------------------------------------------------


_shared: dict[Settings, SyncGatewayClient] = {}
_shared_lock = threading.Lock()

Closable = TypeVar("Closable", ContextClient, GatewayClient)


def shared_gateway(settings: Settings) -> SyncGatewayClient:
    """The process's SyncGatewayClient for `settings`, made on first use: one producer for every history and thread."""
    with _shared_lock:
        if settings not in _shared:
            _shared[settings] = SyncGatewayClient(settings)
        return _shared[settings]


@asynccontextmanager
async def _using(given: Closable | None, make: Callable[[], Closable]) -> AsyncIterator[Closable]:
    """`given`, or a client made for this one call and closed after it (an asyncio client is bound to its loop,
    so none is shared behind the caller's back)."""
    if given is not None:
        yield given
        return
    async with make() as made:
        yield made


class TurnstreamChatMessageHistory(BaseChatMessageHistory):
    """A session's compacted context as a LangChain chat history.

    `messages` reads the context from Redis; `add_messages` produces the messages as the session's next turns
    (numbered from the context's version) and returns once the context includes the last one (read-your-writes);
    `clear` erases the session as `turnstream forget --session` does. The sync methods share one
    SyncGatewayClient per settings in the process (`gateway` to pass one); the async ones use `async_gateway`
    when given (started), else clients opened for the call. One writer per session at a time: of two adding at
    once, the later gets RecordTimeout (its turns reuse seqs, which the worker drops), never a silent loss.
    """

    def __init__(
        self,
        session_id: str,
        *,
        user_id: str | None = None,
        tenant: str | None = None,
        settings: Settings | None = None,
        gateway: SyncGatewayClient | None = None,
        async_gateway: GatewayClient | None = None,
        timeout: float | None = None,
    ) -> None:
        self.session_id = session_id
        self.user_id = user_id
        self.tenant = tenant
        self.settings = settings if settings is not None else Settings()
        self.gateway = gateway
        self.async_gateway = async_gateway
        self.timeout = timeout if timeout is not None else self.settings.record_timeout_seconds
        """Seconds add_messages waits for the broker and the worker (RecordTimeout after them)."""
        self.version: int | None = None
        """The version of the context that included the last messages added, once some were."""

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]  # a read-only property of the live context
        return context_messages(self._sync().context.get(self.session_id, self.tenant, self.user_id))

    async def aget_messages(self) -> list[BaseMessage]:
        async with self._async_context() as context:
            return context_messages(await context.get(self.session_id, self.tenant, self.user_id))

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Record `messages` as the session's next turns, in order; return once the context includes the last."""
        if not messages:
            return
        gateway = self._sync()
        turns = self._turns(messages, gateway.context.get(self.session_id, self.tenant, self.user_id))
        try:
            self.version = gateway.record(turns, timeout=self.timeout)
        except RecordTimeout as timeout:
            if gateway.context.forgotten_key(timeout.session_key):
                raise SessionErased(timeout.session_key) from timeout
            raise

    async def aadd_messages(self, messages: Sequence[BaseMessage]) -> None:
        """add_messages on the asyncio clients."""
        if not messages:
            return  # before any client is opened for the call
        async with _using(self.async_gateway, lambda: GatewayClient(self.settings)) as gateway:
            turns = self._turns(messages, await gateway.context.get(self.session_id, self.tenant, self.user_id))
            try:
                self.version = await gateway.record(turns, timeout=self.timeout)
            except RecordTimeout as timeout:
                if await gateway.context.store.forgotten(timeout.session_key):
                    raise SessionErased(timeout.session_key) from timeout
                raise

    def clear(self) -> None:
        """Erase the session (see aclear) on an event loop in a thread of its own, so any thread may call it, even
        one running a loop (a notebook's)."""
        with ThreadPoolExecutor(1, thread_name_prefix="turnstream-clear") as pool:
            pool.submit(lambda: asyncio.run(self.aclear())).result()

    async def aclear(self) -> None:
        """Erase the session's context, recall list, archived turns and the memories taken from it, as `turnstream
        forget --session` does (a worker must confirm). The worker then drops every turn of this session id for
        settings.forget_marker_seconds, so a conversation that goes on takes a new session id."""
        from turnstream.operations.erasure import erase  # worker-side, as `forget`: loaded only to erase

        await erase(self.settings, session=self.session_id, tenant=self.tenant)

    def _turns(self, messages: Sequence[BaseMessage], doc: ContextDoc | None) -> list[Turn]:
        return session_turns(
            self.session_id,
            from_langchain(messages),
            next_seq(doc),
            tenant=self.tenant,
            user_id=self.user_id,
            ts=time.time(),
        )

    def _sync(self) -> SyncGatewayClient:
        return self.gateway if self.gateway is not None else shared_gateway(self.settings)

    def _async_context(self) -> AbstractAsyncContextManager[ContextClient]:
        given = self.async_gateway.context if self.async_gateway is not None else None
        return _using(given, lambda: ContextClient.from_settings(self.settings))


# --- the LangGraph pre-model hook -----------------------------------------------------------------------------


class _StateKey(Protocol):
    def __call__(self, state: Any, config: RunnableConfig) -> str | None: ...


Key = str | _StateKey
"""Where the hook finds an id: a name looked up in config["configurable"], then in the state; or a callable."""


def _field(state: Any, name: str) -> Any:
    return state.get(name) if isinstance(state, Mapping) else getattr(state, name, None)


def _lookup(key: Key | None, state: Any, config: RunnableConfig) -> str | None:
    if key is None:
        return None
    if callable(key):
        return key(state, config)
    configurable = config.get("configurable") or {}
    found = configurable[key] if key in configurable else _field(state, key)
    return None if found is None else str(found)


@dataclass(frozen=True, slots=True)
class _Step:
    """What one model call of a step asks turnstream for."""

    session_id: str
    tenant: str | None
    user_id: str | None
    user_text: str
    messages: list[BaseMessage]
    """The state's messages from the step's user message on."""
    opening: bool
    """The step's first model call: nothing answered the user message yet."""

    @property
    def cache_key(self) -> tuple[str, str | None, str]:
        return self.session_id, self.tenant, self.messages[0].id or self.user_text


class _Hook:
    """The hook's sync and async paths over one cache of the prompts that opened each step.

    A step's later model calls (after tool results) reuse the prompt of its first: building it again would lose
    the memories the first call was given, which the dedup window now keeps out of every prompt of the session.
    """

    def __init__(
        self,
        settings: Settings,
        session_key: Key,
        user_key: Key | None,
        tenant_key: Key | None,
        context: SyncContextClient | None,
        async_context: ContextClient | None,
    ) -> None:
        self.settings = settings
        self.keys = (session_key, user_key, tenant_key)
        self.context = context
        self.async_context = async_context
        self._prompts: OrderedDict[tuple[str, str | None, str], list[Message]] = OrderedDict()

    def step(self, state: Any, config: RunnableConfig) -> _Step | None:
        messages = list(_field(state, "messages") or [])
        start = newest_human(messages)
        if start is None:
            return None
        session_id, user_id, tenant = (_lookup(key, state, config) for key in self.keys)
        if not session_id:
            raise ValueError(
                f"no session id for the turnstream pre-model hook: {self.keys[0]!r} is neither in "
                "config['configurable'] nor in the state"
            )
        text = content_text(from_langchain_message(messages[start])["content"])
        return _Step(session_id, tenant, user_id, text, messages[start:], start == len(messages) - 1)

    def cached(self, step: _Step) -> list[Message] | None:
        return None if step.opening else self._prompts.get(step.cache_key)

    def answer(self, step: _Step, prompt: list[Message], budget_tokens: int) -> dict[str, list[BaseMessage]]:
        self._prompts[step.cache_key] = prompt
        self._prompts.move_to_end(step.cache_key)
        if len(self._prompts) > PROMPT_CACHE_SIZE:
            self._prompts.popitem(last=False)
        return {"llm_input_messages": model_input(prompt, step.messages, budget_tokens)}

    def __call__(self, state: Any, config: RunnableConfig) -> dict[str, list[BaseMessage]]:
        step = self.step(state, config)
        if step is None:
            return {"llm_input_messages": list(_field(state, "messages") or [])}
        context = self.context if self.context is not None else shared_gateway(self.settings).context
        prompt = self.cached(step)
        if prompt is None:
            prompt = context.build_prompt(
                step.session_id, step.user_text, tenant=step.tenant, user_id=step.user_id, record=step.opening
            ).messages
        return self.answer(step, prompt, context.settings.prompt_budget_tokens)

    async def acall(self, state: Any, config: RunnableConfig) -> dict[str, list[BaseMessage]]:
        step = self.step(state, config)
        if step is None:
            return {"llm_input_messages": list(_field(state, "messages") or [])}
        prompt = self.cached(step)
        memory = self.async_context.memory if self.async_context is not None else None
        settings = memory.settings if memory is not None else self.settings  # what the read budgets by
        if prompt is None:
            async with _using(self.async_context, lambda: ContextClient.from_settings(self.settings)) as context:
                prompt = (
                    await context.build_prompt(
                        step.session_id, step.user_text, tenant=step.tenant, user_id=step.user_id, record=step.opening
                    )
                ).messages
        return self.answer(step, prompt, settings.prompt_budget_tokens)


def turnstream_pre_model_hook(
    settings: Settings | None = None,
    *,
    session_key: Key = "thread_id",
    user_key: Key | None = "user_id",
    tenant_key: Key | None = "tenant",
    context: SyncContextClient | None = None,
    async_context: ContextClient | None = None,
) -> RunnableLambda[Any, dict[str, list[BaseMessage]]]:
    """A `pre_model_hook` for LangGraph's `create_react_agent`: the model gets the session's compacted context and
    recalled memory (ContextClient.build_prompt for the state's newest HumanMessage), then that message and the
    tool calls and results made since, as `llm_input_messages` (a call of the context still waiting for its results
    is left out); the state itself is left as it is. The prompt and that message fit the read's prompt budget as
    LangChain sends them (model_input): the context's oldest tail units make room for the arguments it rewrites.

    The session id is `config["configurable"]["thread_id"]` (the checkpointer's thread), else the state's
    `thread_id` field; the user id (memories, profile) and tenant likewise under "user_id" and "tenant", else
    none. Name other keys with `session_key`, `user_key`, `tenant_key`, or pass callables `(state, config) -> id`.
    The hook only reads: record each finished step's messages (TurnstreamChatMessageHistory.add_messages or
    GatewayClient.record), so the next step's context has them. Sync graphs read through the process's shared
    client for `settings` (or `context`), async ones through `async_context` or a client opened per call.
    """
    hook = _Hook(
        settings if settings is not None else Settings(), session_key, user_key, tenant_key, context, async_context
    )
    return RunnableLambda(hook, afunc=hook.acall, name="turnstream_pre_model_hook")


# --- the recall tool ------------------------------------------------------------------------------------------


def recall_tool(
    client: SyncContextClient | ContextClient,
    *,
    user_id: str | None = None,
    session_id: str | None = None,
    tenant: str | None = None,
) -> StructuredTool:
    """The recall tool as a LangChain tool (`create_react_agent(model, [recall_tool(client, user_id="maya")])`,
    `model.bind_tools`): `invoke` on a SyncContextClient, `ainvoke` on either client. The owner (the user, or with
    `session_id` and no user that session) is fixed here; the model only writes the query. Its schema is JSON
    Schema, so LangChain passes the model's arguments on unchecked and the handler's checks answer them."""
    handler = RecallHandler(client, user_id=user_id, session_id=session_id, tenant=tenant)

    def run(**arguments: Any) -> str:
        return handler(arguments)

    async def arun(**arguments: Any) -> str:
        return await handler.acall(arguments)

    return StructuredTool(
        name=recall.NAME, description=recall.DESCRIPTION, args_schema=recall.parameters(), func=run, coroutine=arun
    )
