"""The recall tool for a plain chat completions request: its `tools` entry and the handler that turns a tool call's
arguments into the tool message's content. The Agents SDK and LangChain tools wrap this same handler.

    recall = RecallHandler(SyncContextClient.from_settings(settings), user_id="maya")
    message = chat.chat.completions.create(model=..., messages=messages, tools=[recall.schema]).choices[0].message
    messages.append(message.model_dump(exclude_none=True))
    for call in message.tool_calls or []:
        messages.append({"role": "tool", "tool_call_id": call.id, "content": recall(call.function.arguments)})

(docs/getting-started.md#the-recall-tool has the whole exchange.)
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from turnstream.client.context import ContextClient
from turnstream.client.reads import search_owner
from turnstream.client.sync import SyncContextClient
from turnstream.integrations.recall import BadArguments, chat_tool, error_text, parse_arguments, render

__all__ = ["RecallHandler"]

Arguments = str | bytes | Mapping[str, Any]
"""A tool call's arguments: its JSON text, or the object a framework parsed it into."""


class RecallHandler:
    """The recall tool of one owner: a user (`user_id`, with its `tenant`), or with `session_id` and no user that
    session's own memories. The owner is fixed here; a model's arguments only say what to look for.

    Call it (a SyncContextClient) or await `acall` (a ContextClient; a SyncContextClient then runs in a thread).
    Arguments a model got wrong give a short error text as the result, never an exception: the run goes on and the
    model can call again. Failures of Redis are raised, as any read of the client raises them.
    """

    def __init__(
        self,
        client: ContextClient | SyncContextClient,
        *,
        user_id: str | None = None,
        session_id: str | None = None,
        tenant: str | None = None,
    ) -> None:
        search_owner(user_id, session_id, tenant)  # a tool without an owner fails where it is built, not at a call
        self.client = client
        self.user_id = user_id
        self.session_id = session_id
        self.tenant = tenant
        self.schema = chat_tool()
        """The chat completions `tools` entry."""

    def __call__(self, arguments: Arguments) -> str:
        """The tool message's content for `arguments`."""
        if not isinstance(self.client, SyncContextClient):
            raise TypeError("a RecallHandler on an asyncio ContextClient is awaited: acall, or use a SyncContextClient")
        search = self._search(arguments)
        return search if isinstance(search, str) else render(self.client.search(**search))

    async def acall(self, arguments: Arguments) -> str:
        """The tool message's content for `arguments`, on the event loop."""
        if isinstance(self.client, SyncContextClient):
            return await asyncio.to_thread(self, arguments)
        search = self._search(arguments)
        return search if isinstance(search, str) else render(await self.client.search(**search))

    def _search(self, arguments: Arguments) -> dict[str, Any] | str:
        """The search's arguments for a model's, or the error text the model gets instead."""
        try:
            args = parse_arguments(arguments)
        except BadArguments as error:
            return error_text(error)
        return {
            "text": args.query,
            "user_id": self.user_id,
            "session_id": self.session_id,
            "tenant": self.tenant,
            "k": args.max_memories,
            "budget_tokens": args.budget_tokens,
        }
