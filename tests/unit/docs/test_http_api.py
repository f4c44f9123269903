"""docs/http-api.md and the TypeScript client's README say what the routes answer: every authenticated route is in
the endpoint table, 404 is named exactly where a route can answer it, and an unknown id has the answer there that the
route (and so the OpenAPI document) gives."""

from pathlib import Path

import pytest

from turnstream.serve.routes import ROUTES, Route

ROOT = Path(__file__).parents[3]
HTTP_API = (ROOT / "docs" / "http-api.md").read_text(encoding="utf-8")
TS_README = (ROOT / "clients" / "typescript" / "README.md").read_text(encoding="utf-8")
AUTHENTICATED = [route for route in ROUTES if not route.public]


def table_rows(text: str, header: str) -> list[str]:
    """The rows of the markdown table whose header row starts with `header`."""
    lines = text.split("\n" + header, 1)[1].splitlines()[2:]
    return lines[: next((i for i, line in enumerate(lines) if not line.startswith("|")), len(lines))]


def endpoint_row(route: Route) -> str:
    shown = f"`{route.method} {route.path.replace('{session_id}', '{id}').replace('{user_id}', '{id}')}`"
    (row,) = [row for row in table_rows(HTTP_API, "| endpoint |") if shown in row.split(" | ")[0]]
    return row


def unknown_answer(route: Route) -> int:
    """What the route answers for an id its tenant has nothing of."""
    return 404 if 404 in route.errors else 200


@pytest.mark.parametrize("route", AUTHENTICATED, ids=lambda r: r.operation)
def test_the_endpoint_table_names_404_exactly_where_the_route_answers_it(route: Route) -> None:
    assert ("404" in endpoint_row(route)) == (404 in route.errors)


@pytest.mark.parametrize("route", [r for r in AUTHENTICATED if r.operation != "record"], ids=lambda r: r.operation)
def test_the_unknown_id_table_gives_each_route_its_answer(route: Route) -> None:
    name = "`DELETE`" if route.method == "DELETE" else f"`{route.operation}`"
    (row,) = [row for row in table_rows(HTTP_API, "| route | unknown session or user |") if row.startswith(f"| {name}")]
    assert row.split(" | ")[1].startswith(str(unknown_answer(route)))


def test_a_turns_session_must_be_the_paths_and_the_pages_say_so() -> None:
    (record,) = [route for route in AUTHENTICATED if route.operation == "record"]
    assert "`session_id` must be the path's" in record.description
    assert "`session_id` must be the path's" in endpoint_row(record)
    assert "`turns.N.session_id`" in TS_README


def test_the_typescript_readme_gives_each_call_the_routes_answer_for_an_unknown_id() -> None:
    unknown = TS_README.split("An unknown session or user", 1)[1].split("\n\n", 1)[0]
    assert "`context` null" in unknown and "another tenant's" in unknown  # the client maps the 404 to null
    assert "`eraseSession`/`eraseUser` throw `NotFound`" in unknown
    assert "`search` nothing found" in unknown and "`prompt` the prompt of what there is" in unknown
