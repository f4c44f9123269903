"""The worker's writes of context documents to Redis: ContextStore (compare-and-set, one Lua script).

Not in client/, the gateway SDK, which only reads contexts (client/contexts.py); the worker's other Redis
writers (memories, profiles, the archive) are memory/'s, which the SDK shares for build_prompt.
"""

from turnstream.store.contexts import ContextStore

__all__ = ["ContextStore"]
