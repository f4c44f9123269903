"""Tokens file parsing and token -> tenant resolution."""

from __future__ import annotations

import pytest

from turnstream.serve.tenants import (
    TokenFileError,
    TokenTable,
    bearer,
    parse_inline_tokens,
    parse_tokens_file,
    token_table,
)

A, B = "a" * 20, "b" * 24


@pytest.mark.parametrize(
    "text, pairs",
    [
        (f'{{"{A}": "acme", "{B}": "globex"}}', [(A, "acme"), (B, "globex")]),
        (f"# tokens\n{A} acme\n\n{B}   globex  # second\n", [(A, "acme"), (B, "globex")]),
    ],
)
def test_both_file_forms_give_the_same_pairs(text: str, pairs: list[tuple[str, str]]) -> None:
    assert parse_tokens_file(text) == pairs


@pytest.mark.parametrize(
    "text, message",
    [
        ("{not json", "not valid JSON"),
        ('{"x": 1}', "map each token"),
        (f"{A} acme extra\n", "line 1: expected `TOKEN TENANT`, got 3"),
        (f"{A}\n", "line 1"),
    ],
)
def test_a_bad_file_names_the_problem_without_the_token(text: str, message: str) -> None:
    with pytest.raises(TokenFileError, match=message) as caught:
        parse_tokens_file(text)
    assert A not in str(caught.value)


@pytest.mark.parametrize(
    "pairs, message",
    [
        ([("short", "acme")], "shorter than 16"),
        ([(A, "ac:me")], "tenant 'ac:me'"),
        ([(A, "acme"), (A, "globex")], "token 2 is given twice"),
        ([], "no token configured"),
    ],
)
def test_unusable_tables_are_refused(pairs: list[tuple[str, str]], message: str) -> None:
    with pytest.raises(TokenFileError, match=message):
        TokenTable.of(pairs)


def test_each_token_resolves_to_its_own_tenant_and_nothing_else_resolves() -> None:
    table = TokenTable.of([(A, "acme"), (B, "globex"), ("c" * 16, "acme")])
    assert table.resolve(A) == "acme" and table.resolve(B) == "globex" and table.resolve("c" * 16) == "acme"
    for wrong in ("", A[:-1], A + "a", A.upper(), B + " "):
        assert table.resolve(wrong) is None
    assert table.tenants == {"acme", "globex"}


def test_the_table_keeps_digests_not_tokens() -> None:
    table = TokenTable.of([(A, "acme")])
    assert A.encode() not in repr(table).encode() and A not in repr(table)


@pytest.mark.parametrize(
    "header, token",
    [
        (f"Bearer {A}", A),
        (f"bearer   {A} ", A),
        ("Bearer", None),
        ("Bearer  ", None),
        (f"Basic {A}", None),
        ("", None),
    ],
)
def test_only_a_bearer_header_gives_a_token(header: str, token: str | None) -> None:
    assert bearer(header) == token


def test_inline_tokens_split_at_the_last_equals_sign() -> None:
    padded = "c" * 18 + "=="
    assert parse_inline_tokens(f"{A}=acme, {padded}=globex,") == [(A, "acme"), (padded, "globex")]
    with pytest.raises(TokenFileError, match="item 1"):
        parse_inline_tokens("no-tenant")


def test_file_and_inline_tokens_join_and_none_means_none() -> None:
    assert token_table(None, None) is None
    table = token_table(f"{A} acme\n", f"{B}=globex")
    assert table is not None and table.resolve(A) == "acme" and table.resolve(B) == "globex"
