"""Recall: how many questions about a long chat the prompt from build_prompt can answer, through the real path.

Every turn goes through Kafka and the worker; each question is asked with ContextClient.build_prompt
at a 4,000-token prompt budget. A question counts as covered when every content word of its gold
answer (lower-cased, function words dropped; for Chinese, the answer's characters in a row) is in
the returned messages. Yardsticks from the same turns, offline: the newest messages that fit the same
budget, and the whole history, both written as dated lines (`[8 May 2023] Caroline: …`) as the memory
block writes recalled turns, so "when" questions are judged alike on every side.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

import orjson

from turnstream.benchmarks.figures import Figure, Row, Target
from turnstream.benchmarks.live import Live, encode, last_versions
from turnstream.client import ContextClient
from turnstream.compaction.tokens import count_messages
from turnstream.memory.archive import archive_entry
from turnstream.memory.recall import recall_line
from turnstream.samples.recall_set import RecallCase, recall_case
from turnstream.text.chat import content_text
from turnstream.text.language import detect_language
from turnstream.text.terms import CJK_RUN, FUNCTION_WORDS

PROMPT_BUDGET = 4000
TARGET = 70.0
LOCOMO_DEV = ("26.json", "30.json", "41.json")
"""The development split of LoCoMo's locomo10 conversations; the other seven are held out and never read here."""
_WORD = re.compile(r"[^\W_]+")
_SESSION_DATE = re.compile(r"(\d{1,2}):(\d{2}) ([ap]m) on (\d{1,2}) (\w+), (\d{4})")


def answer_covered(answer: str, text: str, words: set[str]) -> bool:
    """Every content word of `answer` is among `words`, and every CJK run of it is in `text`."""
    runs = CJK_RUN.findall(answer)
    content = [w for w in _WORD.findall(CJK_RUN.sub(" ", answer.lower())) if w not in FUNCTION_WORDS]
    return all(run in text for run in runs) and all(w in words for w in content)


def coverage(answers: list[str], prompts: list[list[dict[str, Any]]]) -> float:
    """Percent of `answers` covered by the prompt asked for each."""
    covered = 0
    for answer, messages in zip(answers, prompts):
        text = "\n".join(content_text(m.get("content")) for m in messages)
        covered += answer_covered(answer, text, set(_WORD.findall(CJK_RUN.sub(" ", text.lower()))))
    return 100.0 * covered / max(len(answers), 1)


def newest_tail(messages: list[dict[str, Any]], question: str, budget: int) -> list[dict[str, Any]]:
    """The newest messages that fit `budget` with the question: the naive way to cut a long chat."""
    asked = {"role": "user", "content": question}
    kept: list[dict[str, Any]] = []
    for message in reversed(messages):
        if count_messages([message, *kept, asked]) > budget:
            break
        kept.insert(0, message)
    return [*kept, asked]


def dated_history(case: RecallCase) -> list[dict[str, Any]]:
    """The case's messages, each written as a dated line with its speaker."""
    lines = []
    language = detect_language([turn["message"] for turn in case.turns])
    for turn in case.turns:
        entry = archive_entry(case.session_id, turn["turn_id"], turn["seq"], turn["message"], turn["ts"])
        if entry is not None:
            lines.append({"role": turn["message"]["role"], "content": recall_line(entry, language)})
    return lines


def _locomo_ts(when: str) -> float:
    hour, minute, half, day, month, year = _SESSION_DATE.match(when).groups()  # type: ignore[union-attr]
    clock = int(hour) % 12 + (12 if half == "pm" else 0)
    parsed = datetime.strptime(f"{day} {month} {year} {clock}:{minute}", "%d %B %Y %H:%M")
    return parsed.replace(tzinfo=timezone.utc).timestamp()


def locomo_case(path: Path) -> RecallCase:
    """One LoCoMo conversation as turns: the first speaker as the user, the second as the assistant, both named."""
    data = orjson.loads(path.read_bytes())
    first = data["speaker_a"]
    session_id = f"locomo-{path.stem}"
    turns: list[dict[str, Any]] = []
    sessions = sorted((int(k.split("_")[1]), k) for k in data if re.fullmatch(r"session_\d+", k))
    for _, key in sessions:
        start = _locomo_ts(data[f"{key}_date_time"])
        for n, said in enumerate(data[key]):
            text = said["text"] + (f" [shares a photo of {said['blip_caption']}]" if said.get("blip_caption") else "")
            role = "user" if said["speaker"] == first else "assistant"
            message = {"role": role, "name": re.sub(r"[^A-Za-z0-9_-]", "_", said["speaker"]), "content": text}
            turns.append({"turn_id": said["dia_id"], "session_id": session_id, "user_id": f"{session_id}-{first}",
                          "seq": len(turns), "ts": start + 30 * n, "message": message})
    questions = [(qa["question"], str(qa["answer"])) for qa in data["qa"] if "answer" in qa]
    return RecallCase(session_id, f"{session_id}-{first}", turns, questions)


def recall_cases(locomo: Path | None) -> dict[str, list[RecallCase]]:
    """The generated English and Chinese chats, and LoCoMo's development split when a directory is given."""
    cases = {"generated en": [recall_case("en")], "generated zh": [recall_case("zh")]}
    if locomo is not None:
        cases["LoCoMo dev"] = [locomo_case(locomo / name) for name in LOCOMO_DEV]
    return cases


async def recall_figure(live: Live, cases: dict[str, list[RecallCase]], progress: Callable[[str], None]) -> Figure:
    """Produce every case through the worker, then ask every question through build_prompt."""
    turns = [turn for group in cases.values() for case in group for turn in case.turns]
    await live.send(live.pipeline, encode(turns))
    await live.until(live.versions_reached(last_versions(turns)), "recall: every turn applied")
    progress(f"recall: {len(turns):,} turns applied; asking")
    rows: list[Row] = []
    data: dict[str, Any] = {}
    settings = live.pipeline.model_copy(update={"prompt_budget_tokens": PROMPT_BUDGET})
    async with ContextClient.from_settings(settings) as client:
        for name, group in cases.items():
            answers, ours, tails, full = [], [], [], []
            for case in group:
                history = dated_history(case)
                for question, answer in case.questions:
                    prompt = await client.build_prompt(case.session_id, question, user_id=case.user_id)
                    answers.append(answer)
                    ours.append(prompt.messages)
                    tails.append(newest_tail(history, question, PROMPT_BUDGET))
                    full.append([*history, {"role": "user", "content": question}])
            figures = {"build_prompt": coverage(answers, ours), "newest tail": coverage(answers, tails),
                       "full history": coverage(answers, full)}
            data[name] = {"questions": len(answers), **figures,
                          "max_prompt_tokens": max(count_messages(m) for m in ours)}
            rows.append(Row.of(f"{name} vs newest tail", "% answered", figures["build_prompt"], figures["newest tail"]))
            rows.append(Row.of(f"{name} vs full history", "% answered", figures["build_prompt"], figures["full history"]))
            progress(f"recall {name}: {figures['build_prompt']:.1f}% (tail {figures['newest tail']:.1f}%, full {figures['full history']:.1f}%)")
    measured = data.get("LoCoMo dev", {}).get("build_prompt")
    target = Target(f"LoCoMo dev ≥ {TARGET:.0f} % at {PROMPT_BUDGET:,} tokens", measured >= TARGET) if measured is not None else None
    return Figure("recall", "7 Recall at 4k tokens", "build_prompt", "yardstick", rows, target, data)
