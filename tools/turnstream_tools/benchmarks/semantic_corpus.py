"""One conversation made ready for the semantic-candidates measure: its archived turns, their terms and vectors.

Turns are archived as the worker archives them (memory/archive.py), so the lexical side indexes exactly the
product's terms; each is embedded as "Speaker: text" and each question as the user asks it. The CPU time of
embedding is measured here too: turns in batches sorted by length, questions one at a time (as a gateway
embeds a query).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from turnstream.embeddings.base import Embedder, passage_text
from turnstream.memory.archive import archive_entry
from turnstream.prompt.recalled import LINE_SEPARATOR_TOKENS, turn_line
from turnstream.text.language import detect_language
from turnstream.text.tokens import count_text
from turnstream_tools.samples.recall_set import RecallCase


@dataclass(frozen=True)
class Corpus:
    """The archived turns of one or more conversations (one owner each) and the questions asked about each."""

    name: str
    owners: list[list[int]]
    """Per conversation, the numbers of its turns: a question is asked of its own owner's archive only."""
    ids: list[str]
    """Per turn, its turn id (what the evidence names)."""
    passages: list[str]
    counts: list[Counter[str]]
    """Per turn, its index terms as the archive stores them."""
    json_bytes: list[int]
    """Per turn, the size of its archive entry's JSON: what a stored vector is set against."""
    tokens: list[int]
    """Per turn, what its line costs a prompt's memory block (as prompt/recalled.py writes and counts it)."""
    rows: list[int]
    """Per turn, its place in its owner's archive (the neighbours of a hit are the turns beside it there)."""
    questions: list[tuple[int, str, tuple[str, ...]]]
    """(conversation, question, evidence turn ids), for questions that list evidence."""


@dataclass(frozen=True)
class Embedded:
    """A corpus's vectors under one model, with what making them cost."""

    model_id: str
    turns: NDArray[np.float32]
    queries: NDArray[np.float32]
    turn_cpu_ms: float
    """CPU per turn, embedded in batches sorted by length."""
    query_cpu_ms: list[float]
    """CPU per question, embedded alone."""


def corpus(name: str, cases: Sequence[RecallCase]) -> Corpus:
    """The cases' turns archived, and their questions that list evidence."""
    owners: list[list[int]] = []
    ids: list[str] = []
    passages: list[str] = []
    counts: list[Counter[str]] = []
    json_bytes: list[int] = []
    tokens: list[int] = []
    rows: list[int] = []
    questions: list[tuple[int, str, tuple[str, ...]]] = []
    for number, case in enumerate(cases):
        owners.append([])
        language = detect_language([turn["message"] for turn in case.turns])
        for turn in case.turns:
            entry = archive_entry(case.session_id, turn["turn_id"], turn["seq"], turn["message"], turn["ts"])
            if entry is not None:
                owners[-1].append(len(ids))
                ids.append(turn["turn_id"])
                passages.append(passage_text(entry.speaker, entry.text))
                counts.append(entry.term_counts())
                json_bytes.append(len(entry.to_json()))
                tokens.append(count_text(turn_line(entry, language)) + LINE_SEPARATOR_TOKENS)
                rows.append(len(owners[-1]) - 1)
        questions += [
            (number, question, evidence) for (question, _), evidence in zip(case.questions, case.evidence) if evidence
        ]
    return Corpus(name, owners, ids, passages, counts, json_bytes, tokens, rows, questions)


def embed(embedder: Embedder, data: Corpus) -> Embedded:
    """The corpus's turns and questions under `embedder`, timed in CPU (threads as the embedder was built)."""
    started = time.process_time()
    turns = embedder.embed_passages(data.passages)
    turn_ms = 1000 * (time.process_time() - started) / max(len(data.passages), 1)
    queries, query_ms = [], []
    for _, question, _ in data.questions:
        started = time.process_time()
        queries.append(embedder.embed_queries([question])[0])
        query_ms.append(1000 * (time.process_time() - started))
    stacked = np.vstack(queries) if queries else np.zeros((0, embedder.dims), np.float32)
    return Embedded(embedder.model_id, turns, stacked, turn_ms, query_ms)
