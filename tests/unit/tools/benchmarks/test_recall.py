"""The recall figure's pure parts: evidence shares, which turns a prompt carries, LoCoMo's evidence, the target."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from turnstream.operations.diff_report import Question
from turnstream.schemas.archive import entry_id
from turnstream_tools.benchmarks.recall import (
    case_labels,
    dated_history,
    evidence_shares,
    labelled_questions,
    locomo_case,
    newest_tail,
    prompt_holds,
    prompt_turns,
    recall_target,
)
from turnstream_tools.samples.recall_set import RecallCase, recall_case


def test_evidence_counts_whole_questions_and_single_turns() -> None:
    needed = [("a", "b"), ("c",), (), ("d", "e")]
    present = [{"a", "b", "x"}, set(), {"q"}, {"e"}]
    # the question without evidence is left out: 1 of 3 questions whole, 3 of 5 turns
    assert evidence_shares(needed, present) == (100 / 3, 60.0)
    assert evidence_shares([], []) == (0.0, 0.0)


@given(
    st.lists(st.tuples(st.sets(st.sampled_from("abcdef"), max_size=4), st.sets(st.sampled_from("abcdef"))), max_size=12)
)
def test_evidence_shares_are_percentages_and_whole_never_beats_turns_at_full(
    pairs: list[tuple[set[str], set[str]]],
) -> None:
    needed, present = [tuple(sorted(n)) for n, _ in pairs], [p for _, p in pairs]
    whole, turns = evidence_shares(needed, present)
    assert 0 <= whole <= 100 and 0 <= turns <= 100
    assert (whole == 100) == (turns == 100) or not any(needed)
    assert evidence_shares(needed, [set(n) for n in needed]) == ((100.0, 100.0) if any(needed) else (0.0, 0.0))


def case() -> RecallCase:
    turns = [
        {
            "turn_id": f"t{i}",
            "session_id": "s",
            "user_id": "u",
            "seq": i,
            "ts": 1683554160.0 + i,
            "message": {"role": "user" if i % 2 == 0 else "assistant", "content": f"line {i} " * 20},
        }
        for i in range(6)
    ]
    return RecallCase("s", "u", turns, [("q?", "a")], [("t1",)])


def test_a_prompt_carries_recalled_turns_and_context_messages_not_the_summary() -> None:
    c = case()
    messages = [
        {"role": "system", "content": c.turns[2]["message"]["content"]},
        c.turns[5]["message"],
        {"role": "user", "content": "q?"},
    ]
    assert prompt_turns(c, messages, [{"id": entry_id("s", "t1")}]) == {"t1", "t5"}


def test_the_newest_tail_keeps_the_newest_lines_and_knows_their_turns() -> None:
    history, ids = dated_history(case())
    assert ids == [f"t{i}" for i in range(6)] and history[0]["content"].startswith("[8 May 2023] ")
    tail = newest_tail(history, "q?", 150)
    assert 1 < len(tail) < 7 and tail[:-1] == history[len(history) - len(tail) + 1 :]


def test_the_generated_chats_name_the_turn_each_detail_was_planted_in() -> None:
    for language in ("en", "zh"):
        c = recall_case(language)
        said = {t["turn_id"]: t["message"]["content"] for t in c.turns}
        assert len(c.evidence) == len(c.questions)
        assert all(
            len(turns) == 1 and answer.split()[0] in said[turns[0]]
            for (_, answer), turns in zip(c.questions, c.evidence)
        )


def test_locomo_evidence_is_split_and_checked_against_the_turns(tmp_path: Path) -> None:
    data = {
        "speaker_a": "Ann",
        "speaker_b": "Bo",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a cat."},
            {"speaker": "Bo", "dia_id": "D1:2", "text": "Lovely!", "blip_caption": "a cat"},
            {"speaker": "Ann", "dia_id": "D1:3", "text": "Here.", "blip_caption": "a photo of a cat on a sofa"},
        ],
        "qa": [
            {"question": "What did Ann adopt?", "answer": "a cat", "evidence": ["D1:1; D1:2", "D9:9"], "category": 4},
            {"question": "Trick?", "adversarial_answer": "none", "evidence": ["D1:1"], "category": 5},
        ],
    }
    (tmp_path / "26.json").write_bytes(orjson.dumps(data))
    c = locomo_case(tmp_path / "26.json")
    assert c.questions == [("What did Ann adopt?", "a cat")] and c.evidence == [("D1:1", "D1:2")]
    assert c.turns[1]["message"] == {"role": "assistant", "name": "Bo", "content": "Lovely! [shares a photo of a cat]"}
    assert c.turns[2]["message"]["content"] == "Here. [shares a photo of a cat on a sofa]"


def test_a_prompt_holds_an_answer_when_every_content_word_or_cjk_run_is_in_it() -> None:
    messages = [{"role": "system", "content": "[3 May] Maya: my sister's cat is called Pistachio"}, {"role": "user"}]
    assert prompt_holds("Pistachio", messages) and prompt_holds("the Pistachio", messages)
    assert not prompt_holds("Clay Loft", messages)
    assert prompt_holds("开心果", [{"role": "user", "content": "猫叫开心果。"}])
    assert not prompt_holds("开心果", [{"role": "user", "content": "开心 果"}])


def test_labels_written_for_a_case_read_back_as_its_questions(tmp_path: Path) -> None:
    case = recall_case("en")
    (tmp_path / "labels.json").write_bytes(orjson.dumps([case_labels(case)]))
    read = labelled_questions(tmp_path / "labels.json")
    assert read == {case.session_id: [Question(q, answer=a) for q, a in case.questions]}
    assert case_labels(case)["qa"][0]["evidence"] == list(case.evidence[0])


def test_a_locomo_conversation_is_a_labelled_set_of_its_session(tmp_path: Path) -> None:
    data = {
        "speaker_a": "Ann",
        "speaker_b": "Bo",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a cat."}],
        "qa": [{"question": "What did Ann adopt?", "answer": "a cat", "evidence": ["D1:1"], "category": 4}],
    }
    (tmp_path / "30.json").write_bytes(orjson.dumps(data))
    assert labelled_questions(tmp_path / "30.json") == {"locomo-30": [Question("What did Ann adopt?", answer="a cat")]}
    (tmp_path / "bad.json").write_bytes(b'{"qa": []}')
    with pytest.raises(KeyError):
        labelled_questions(tmp_path / "bad.json")


def measured(ours: float, full: float, evidence: float) -> dict[str, object]:
    return {"coverage": {"build_prompt": ours, "full history": full}, "evidence_questions": {"build_prompt": evidence}}


def test_the_target_needs_both_budgets_and_the_evidence() -> None:
    assert recall_target(None) is None
    assert recall_target({"2000": measured(77, 87, 80), "4000": measured(83, 87, 90)}).met  # type: ignore[union-attr]
    # 0.874× at 2,000 tokens: under the 0.88× the semantic issue asks
    assert not recall_target({"2000": measured(76, 87, 80), "4000": measured(83, 87, 90)}).met  # type: ignore[union-attr]
    assert not recall_target({"2000": measured(77, 87, 80), "4000": measured(83, 87, 89)}).met  # type: ignore[union-attr]
