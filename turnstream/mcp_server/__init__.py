"""`turnstream mcp`: turnstream's memory as MCP tools for agents (the official `mcp` SDK, the `mcp` extra).

tools.py holds the tools and their descriptions, auth.py the bearer token check of the HTTP transport (the API's
own token table), run.py the process over stdio or streamable HTTP. Imported by the CLI only.
"""
