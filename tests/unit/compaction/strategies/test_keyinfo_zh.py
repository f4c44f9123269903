"""Chinese key facts: the subject is often dropped, kin are owned without 的, and names come after 叫."""

import pytest

from turnstream.compaction.strategies.keyinfo import KeyInfoExtractor, classify
from turnstream_tools.samples.recall_set import _ADJECTIVES, _FILLER, DETAILS


def facts_of(text: str) -> list[tuple[str, str, str]]:
    return [(f.type, f.key, f.text) for f in KeyInfoExtractor(40).extract((), [{"role": "user", "content": text}], 0)]


@pytest.mark.parametrize(("said", "answer"), [(said, answer) for said, _, answer in DETAILS["zh"]])
def test_each_planted_chinese_detail_is_a_fact_holding_its_answer(said: str, answer: str) -> None:
    assert [text for _, _, text in facts_of(said)] == [said]
    assert answer in said


def test_the_generated_chats_small_talk_gives_no_fact() -> None:
    topics, lines, _ = _FILLER["zh"]
    said = [line.format(t=topic, a=adjective) for topic in topics for line in lines for adjective in _ADJECTIVES["zh"]]
    assert [(text, facts_of(text)) for text in said if facts_of(text)] == []


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("我爸是医生。", ("fact", "爸")),
        ("我妹妹的猫叫开心果。", ("fact", "妹妹的猫")),
        ("我家是开餐馆的。", ("fact", "家")),
        ("房东说房租要涨到四千五百元。", ("fact", "fact:房东-东说-说房")),
        ("名字叫饼干。", ("fact", "fact:名字-字叫-叫饼")),
        ("我们的晚餐订在了山城小馆。", ("event", "decision:的晚-晚餐-餐订")),
        ("下周一去北京。", ("event", "event:下周-周一-一去")),
        # a pick among what the agent showed names the data the next step books
        ("就住浅草那家。", ("fact", "fact:就住-住浅-浅草")),
        ("我要第二个。", ("fact", "fact:要第-第二-二个")),
        ("选靠窗的吧。", ("fact", "fact:选靠-靠窗-窗的")),
    ],
)
def test_kin_names_amounts_and_bookings_are_facts(text: str, found: tuple[str, str]) -> None:
    assert classify(text, "user") == found


@pytest.mark.parametrize(
    "text", ["这周一部电影感觉有点美好。", "这周天气感觉有点忙。", "今天一个播客挺好笑的。", "我一直在想一点小事。"]
)
def test_a_week_before_a_measure_word_or_a_lone_yi_is_no_date_or_number(text: str) -> None:
    assert classify(text, "user") is None


@pytest.mark.parametrize("text", ["我想选一个安静的地方吧？", "你们选哪个吧。", "就要下雨了。", "我就要哭了。"])
def test_a_question_or_an_about_to_is_no_pick(text: str) -> None:
    assert classify(text, "user") is None


def test_a_leading_clause_joins_with_a_chinese_comma() -> None:
    assert facts_of("对了，我妹妹的猫叫开心果。") == [("fact", "妹妹的猫", "对了，我妹妹的猫叫开心果。")]


@pytest.mark.parametrize(
    "said",
    [
        "选CA929吧，便宜一点。",
        "李娜，护照E29221363；杨帆，护照E52341062。",
        "从北京出发，6月7号走，东京玩4晚，然后去首尔2晚，从首尔回北京。",
    ],
)
def test_a_sentence_is_one_fact_that_does_not_repeat_its_own_clauses(said: str) -> None:
    # a trailing clause the sentence's fact already holds neither lengthens it nor makes a second fact
    assert [text for _, _, text in facts_of(said)] == [said]
