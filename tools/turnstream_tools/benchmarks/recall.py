"""Recall: how many questions about a long chat the prompt from build_prompt can answer, through the real path.

Every turn goes through Kafka and the worker; each question is asked with ContextClient.build_prompt
at 2,000- and 4,000-token prompt budgets. A question counts as covered when every content word of its
gold answer (lower-cased, function words dropped; for Chinese, the answer's characters in a row) is in
the returned messages. Evidence: the turns that hold a question's answer (LoCoMo's `evidence` dia_ids;
the planted turn of a generated chat) are in the prompt when it recalls them or carries their message;
the figure is the share of questions with all of theirs in, and the share of evidence turns in.
Yardsticks from the same turns, offline: the newest messages that fit the same budget, and the whole
history, both written as dated lines (`[8 May 2023] Caroline: …`), so "when" questions are judged
alike on every side.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from turnstream.client import ContextClient
from turnstream.memory.archive import archive_entry
from turnstream.operations.diff_report import Question
from turnstream.prompt.recalled import recall_line
from turnstream.redis.keys import KeyLayout
from turnstream.schemas.archive import entry_id
from turnstream.schemas.ids import owner_key, session_key
from turnstream.text.chat import content_text
from turnstream.text.language import detect_language
from turnstream.text.terms import CJK_RUN, FUNCTION_WORDS
from turnstream.text.tokens import count_messages
from turnstream_tools.benchmarks.figures import Figure, Row, Target
from turnstream_tools.benchmarks.live import Live, encode, last_versions
from turnstream_tools.samples.recall_set import RecallCase, recall_case

PROMPT_BUDGETS = (2000, 4000)
TARGETS = {2000: 0.88, 4000: 0.95}
"""Coverage as a share of the full history's, per prompt budget (the semantic issue's targets: 0.85 at 2,000
tokens before it)."""
SIDES = ("build_prompt", "newest tail", "full history")
WORDS_ONLY = " words only"
"""The label of the reads without the semantic share, beside those with it."""
EVIDENCE_TARGET = 90.0
"""Percent of LoCoMo dev questions with all their evidence turns in the prompt at 4,000 tokens."""
LOCOMO_DEV = ("26.json", "30.json", "41.json")
"""The development split of LoCoMo's locomo10 conversations; the other seven are held out and never read here."""
_WORD = re.compile(r"[^\W_]+")
_SESSION_DATE = re.compile(r"(\d{1,2}):(\d{2}) ([ap]m) on (\d{1,2}) (\w+), (\d{4})")
_DIA_ID = re.compile(r"D\d+:\d+")
_SAYS_PHOTO = re.compile(r"an? (?:photo|photograph|photography|picture|image) of\b", re.I)
"""A caption that already says it shows a photo ("a photo of a dog", as BLIP writes most)."""


def answer_covered(answer: str, text: str, words: set[str]) -> bool:
    """Every content word of `answer` is among `words`, and every CJK run of it is in `text`."""
    runs = CJK_RUN.findall(answer)
    content = [w for w in _WORD.findall(CJK_RUN.sub(" ", answer.lower())) if w not in FUNCTION_WORDS]
    return all(run in text for run in runs) and all(w in words for w in content)


def prompt_holds(answer: str, messages: Sequence[Mapping[str, Any]]) -> bool:
    """Whether a prompt's `messages` cover `answer` (answer_covered over their text): one question's score."""
    text = "\n".join(content_text(m.get("content")) for m in messages)
    return answer_covered(answer, text, set(_WORD.findall(CJK_RUN.sub(" ", text.lower()))))


def coverage(answers: list[str], prompts: list[list[dict[str, Any]]]) -> float:
    """Percent of `answers` covered by the prompt asked for each."""
    covered = sum(prompt_holds(answer, messages) for answer, messages in zip(answers, prompts))
    return 100.0 * covered / max(len(answers), 1)


def evidence_shares(needed: list[tuple[str, ...]], present: list[set[str]]) -> tuple[float, float]:
    """(percent of questions with every evidence turn present, percent of evidence turns present), over the
    questions that list evidence; `present` holds the turn ids each question's prompt carries."""
    listed = [(set(turns), shown) for turns, shown in zip(needed, present) if turns]
    whole = sum(turns <= shown for turns, shown in listed)
    found = sum(len(turns & shown) for turns, shown in listed)
    return 100.0 * whole / max(len(listed), 1), 100.0 * found / max(sum(len(turns) for turns, _ in listed), 1)


def prompt_turns(case: RecallCase, messages: list[dict[str, Any]], archived: Sequence[Mapping[str, Any]]) -> set[str]:
    """Ids of the case's turns a build_prompt prompt carries: recalled from the archive, or as the message itself."""
    recalled = {turn["id"] for turn in archived}
    contents = {content_text(m.get("content")) for m in messages if m.get("role") != "system"}
    return {
        turn["turn_id"]
        for turn in case.turns
        if entry_id(session_key(case.session_id, None), turn["turn_id"]) in recalled
        or content_text(turn["message"].get("content")) in contents
    }


def newest_tail(messages: list[dict[str, Any]], question: str, budget: int) -> list[dict[str, Any]]:
    """The newest messages that fit `budget` with the question: the naive way to cut a long chat."""
    asked = {"role": "user", "content": question}
    kept: list[dict[str, Any]] = []
    for message in reversed(messages):
        if count_messages([message, *kept, asked]) > budget:
            break
        kept.insert(0, message)
    return [*kept, asked]


def dated_history(case: RecallCase) -> tuple[list[dict[str, Any]], list[str]]:
    """The case's messages, each written as a dated line with its speaker, and the turn id of each."""
    lines, ids = [], []
    language = detect_language([turn["message"] for turn in case.turns])
    for turn in case.turns:
        entry = archive_entry(case.session_id, turn["turn_id"], turn["seq"], turn["message"], turn["ts"])
        if entry is not None:
            lines.append({"role": turn["message"]["role"], "content": recall_line(entry, language)})
            ids.append(turn["turn_id"])
    return lines, ids


def _locomo_ts(when: str) -> float:
    hour, minute, half, day, month, year = _SESSION_DATE.match(when).groups()  # type: ignore[union-attr]  # LoCoMo's session dates all match
    clock = int(hour) % 12 + (12 if half == "pm" else 0)
    parsed = datetime.strptime(f"{day} {month} {year} {clock}:{minute}", "%d %B %Y %H:%M")
    return parsed.replace(tzinfo=UTC).timestamp()


def _photo(caption: str) -> str:
    """What a shared image's caption reads as: "shares a photo of a dog", never "a photo of a photo of"."""
    return f"shares {caption}" if _SAYS_PHOTO.match(caption) else f"shares a photo of {caption}"


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
            text = said["text"] + (f" [{_photo(said['blip_caption'])}]" if said.get("blip_caption") else "")
            role = "user" if said["speaker"] == first else "assistant"
            message = {"role": role, "name": re.sub(r"[^A-Za-z0-9_-]", "_", said["speaker"]), "content": text}
            turns.append(
                {
                    "turn_id": said["dia_id"],
                    "session_id": session_id,
                    "user_id": f"{session_id}-{first}",
                    "seq": len(turns),
                    "ts": start + 30 * n,
                    "message": message,
                }
            )
    asked = [qa for qa in data["qa"] if "answer" in qa]
    known = {turn["turn_id"] for turn in turns}
    # a few evidence lists run ids together ("D8:6; D9:17") or name a turn that is not there
    evidence = [tuple(i for i in _DIA_ID.findall(" ".join(qa.get("evidence", []))) if i in known) for qa in asked]
    return RecallCase(
        session_id, f"{session_id}-{first}", turns, [(qa["question"], str(qa["answer"])) for qa in asked], evidence
    )


def case_labels(case: RecallCase) -> dict[str, Any]:
    """A case's questions as a labelled set (`turnstream diff --labels` reads it): its session and user, and per
    question its gold answer and evidence turn ids; the turns themselves are in the log."""
    evidence = case.evidence or [() for _ in case.questions]
    return {
        "session_id": case.session_id,
        "user_id": case.user_id,
        "qa": [
            {"question": question, "answer": answer, "evidence": list(turns)}
            for (question, answer), turns in zip(case.questions, evidence)
        ],
    }


def labelled_questions(path: Path) -> dict[str, list[Question]]:
    """Session key -> its labelled questions, from `path`: a LoCoMo conversation (as `--locomo` reads them), or one
    case's labels or a list of them (case_labels). KeyError, TypeError or ValueError on a file of neither shape."""
    data = orjson.loads(path.read_bytes())
    if isinstance(data, dict) and "speaker_a" in data:
        case = locomo_case(path)
        pairs = {session_key(case.session_id, None): case.questions}
    else:
        labelled = data if isinstance(data, list) else [data]
        pairs = {
            session_key(str(one["session_id"]), one.get("tenant")): [
                (qa["question"], str(qa["answer"])) for qa in one["qa"]
            ]
            for one in labelled
        }
    return {key: [Question(question, answer=answer) for question, answer in asked] for key, asked in pairs.items()}


def recall_cases(locomo: Path | None) -> dict[str, list[RecallCase]]:
    """The generated English and Chinese chats, and LoCoMo's development split when a directory is given."""
    cases = {"generated en": [recall_case("en")], "generated zh": [recall_case("zh")]}
    if locomo is not None:
        cases["LoCoMo dev"] = [locomo_case(locomo / name) for name in LOCOMO_DEV]
    return cases


async def recall_figure(live: Live, cases: dict[str, list[RecallCase]], progress: Callable[[str], None]) -> Figure:
    """Produce every case through the worker, then ask every question through build_prompt at each budget."""
    turns = [turn for group in cases.values() for case in group for turn in case.turns]
    await live.send(live.pipeline, encode(turns))
    await live.until(live.versions_reached(last_versions(turns)), "recall: every turn applied")
    semantic = live.pipeline.embeddings != "off"
    if semantic:  # the semantic share reads what the embedding agent stored: every archived turn
        owners = sorted({owner_key(case.user_id, None, case.session_id) for group in cases.values() for case in group})
        await live.until(lambda: _all_embedded(live, owners), "recall: every archived turn embedded")
    progress(f"recall: {len(turns):,} turns applied{' and embedded' if semantic else ''}; asking")
    rows: list[Row] = []
    data: dict[str, Any] = {}
    ways = [("", live.pipeline)]
    if semantic:  # the same archive read with words only, side by side
        ways.append((WORDS_ONLY, live.pipeline.model_copy(update={"embeddings": "off"})))
    for budget in PROMPT_BUDGETS:
        for way, reader in ways:
            settings = reader.model_copy(update={"prompt_budget_tokens": budget})
            async with ContextClient.from_settings(settings) as client:
                for name, group in cases.items():
                    measured = await _measure(client, group, budget)
                    data.setdefault(name + way, {})[str(budget)] = measured
                    rows += _rows(f"{name}{way} at {budget // 1000}k", measured)
                    cov, ev = measured["coverage"], measured["evidence_questions"]
                    progress(
                        f"recall {name}{way} at {budget:,}: {cov['build_prompt']:.1f}% (tail "
                        f"{cov['newest tail']:.1f}%, full {cov['full history']:.1f}%), evidence "
                        f"{ev['build_prompt']:.1f}% of questions"
                    )
    return Figure(
        "recall",
        "7 Recall at 2k and 4k tokens",
        "build_prompt",
        "yardstick",
        rows,
        recall_target(data.get("LoCoMo dev")),
        data,
    )


async def _all_embedded(live: Live, owners: list[str]) -> bool:
    """Whether every archived turn of `owners` has its vector (the embedding agent has caught up)."""
    for owner in owners:
        keys = KeyLayout(live.pipeline.topic_prefix).owner(owner)
        if await live.redis.hlen(keys.vectors) < await live.redis.hlen(keys.archive):
            return False
    return True


async def _measure(client: ContextClient, group: list[RecallCase], budget: int) -> dict[str, Any]:
    """Coverage and evidence of build_prompt and both yardsticks over `group`'s questions at `budget`."""
    answers: list[str] = []
    needed: list[tuple[str, ...]] = []
    prompts: dict[str, list[list[dict[str, Any]]]] = {side: [] for side in SIDES}
    present: dict[str, list[set[str]]] = {side: [] for side in SIDES}
    for case in group:
        history, ids = dated_history(case)
        evidence = case.evidence or [() for _ in case.questions]
        for (question, answer), turns in zip(case.questions, evidence):
            prompt = await client.build_prompt(case.session_id, question, user_id=case.user_id)
            tail = newest_tail(history, question, budget)
            answers.append(answer)
            needed.append(turns)
            for side, messages, shown in (
                ("build_prompt", prompt.messages, prompt_turns(case, prompt.messages, prompt.archived)),
                ("newest tail", tail, set(ids[len(ids) - len(tail) + 1 :])),
                ("full history", [*history, {"role": "user", "content": question}], set(ids)),
            ):
                prompts[side].append(messages)
                present[side].append(shown)
    shares = {side: evidence_shares(needed, present[side]) for side in SIDES}
    return {
        "questions": len(answers),
        "with_evidence": sum(1 for turns in needed if turns),
        "coverage": {side: coverage(answers, prompts[side]) for side in SIDES},
        "evidence_questions": {side: shares[side][0] for side in SIDES},
        "evidence_turns": {side: shares[side][1] for side in SIDES},
        "max_prompt_tokens": max((count_messages(m) for m in prompts["build_prompt"]), default=0),
    }


def _rows(label: str, measured: dict[str, Any]) -> list[Row]:
    cov, whole, turns = measured["coverage"], measured["evidence_questions"], measured["evidence_turns"]
    rows = [
        Row.of(f"{label} vs newest tail", "% answered", cov["build_prompt"], cov["newest tail"]),
        Row.of(f"{label} vs full history", "% answered", cov["build_prompt"], cov["full history"]),
    ]
    if measured["with_evidence"]:
        rows += [
            Row.of(f"{label} evidence vs {side}", "% questions, all turns in", whole["build_prompt"], whole[side])
            for side in SIDES[1:]
        ]
        rows.append(
            Row.of(
                f"{label} evidence turns vs full history", "% turns in", turns["build_prompt"], turns["full history"]
            )
        )
    return rows


def recall_target(locomo: dict[str, Any] | None) -> Target | None:
    """LoCoMo dev: coverage at each budget against the full history's, and the evidence at 4,000 tokens."""
    if locomo is None:
        return None
    met = all(
        measured["coverage"]["build_prompt"] >= share * measured["coverage"]["full history"]
        for budget, share in TARGETS.items()
        if (measured := locomo.get(str(budget)))
    )
    evidence = locomo.get("4000", {}).get("evidence_questions", {}).get("build_prompt", 0.0)
    return Target(
        "LoCoMo dev: ≥ 0.88× full at 2k, ≥ 0.95× at 4k, evidence ≥ 90 % at 4k", met and evidence >= EVIDENCE_TARGET
    )
