"""Every request and reply the API tests send or get, checked against the OpenAPI document the server serves."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import aiohttp
import jsonschema


class Contract:
    """The served document's schemas per operation, with $refs resolved inside the document."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document
        self.checked = 0

    def _operation(self, method: str, template: str) -> dict[str, Any]:
        path = self.document["paths"].get(template)
        assert path is not None and method.lower() in path, f"{method} {template} is not in the OpenAPI document"
        return path[method.lower()]  # type: ignore[no-any-return]

    def _validate(self, schema: dict[str, Any], value: Any, what: str) -> None:
        root = {"components": self.document["components"], **schema}
        try:
            jsonschema.Draft202012Validator(root).validate(value)
        except jsonschema.ValidationError as error:
            raise AssertionError(
                f"{what} does not match the OpenAPI document: {error.message} at {list(error.path)}"
            ) from None
        self.checked += 1

    def check_request(self, method: str, template: str, body: Any) -> None:
        schema = self._operation(method, template)["requestBody"]["content"]["application/json"]["schema"]
        self._validate(schema, body, f"request {method} {template}")

    def check_reply(self, method: str, template: str, status: int, body: Any) -> None:
        responses = self._operation(method, template)["responses"]
        assert str(status) in responses, f"{method} {template} answered {status}, which the document does not list"
        schema = responses[str(status)]["content"]["application/json"]["schema"]
        self._validate(schema, body, f"reply {status} to {method} {template}")


class Api:
    """An HTTP client of the API that checks every JSON request and reply with `contract`."""

    def __init__(self, url: str, token: str | None, contract: Contract, http: aiohttp.ClientSession) -> None:
        self.url = url.rstrip("/")
        self.headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.contract = contract
        self.http = http

    def with_token(self, token: str | None) -> Api:
        return Api(self.url, token, self.contract, self.http)

    async def call(
        self,
        method: str,
        template: str,
        path: dict[str, str] | None = None,
        body: Any = None,
        query: dict[str, str] | None = None,
        raw: bytes | None = None,
    ) -> tuple[int, Any, dict[str, str]]:
        """(status, JSON body, headers); `raw` sends bytes unchecked (a malformed or oversized body)."""
        url = self.url + template.format(**{k: quote(v, safe="") for k, v in (path or {}).items()})
        if body is not None:
            self.contract.check_request(method, template, body)
        data = raw if raw is not None else None
        async with self.http.request(
            method,
            url,
            json=body if raw is None and body is not None else None,
            data=data,
            params=query,
            headers=self.headers,
        ) as response:
            reply = await response.json(content_type=None)
            self.contract.check_reply(method, template, response.status, reply)
            return response.status, reply, dict(response.headers)
