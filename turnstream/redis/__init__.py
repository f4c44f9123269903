"""Redis: the key layout, the Lua scripts and their calls, and the readers and writers that run them."""
