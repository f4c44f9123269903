"""`turnstream serve`: the gateway SDK over HTTP, for gateways in any language.

Every endpoint calls the SDK itself (GatewayClient, ContextClient, MemoryStore, streams.erasure); this
package adds only what HTTP needs: tokens and tenants (tenants.py, scope.py), the request and reply models
and the OpenAPI document made from them (models.py, routes.py, openapi.py), the mapping of failures to
statuses (errors.py), metrics (metrics.py), the aiohttp wiring (app.py, handlers.py) and the process
(service.py, run.py). Imported by the CLI only: `import turnstream.client` loads none of it.
"""
