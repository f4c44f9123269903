"""The memory block: the profile, the recalled memories and the archived turns, within its room."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from turnstream.memory.profile import cut_profile
from turnstream.prompt.recalled import LINE_SEPARATOR_TOKENS, RecalledTurn, choose_turns, dated_lines
from turnstream.schemas.archive import ArchiveEntry
from turnstream.schemas.prompt_read import Recalled
from turnstream.text.chat import Message
from turnstream.text.language import Language
from turnstream.text.locale import LOCALES
from turnstream.text.tokens import count_message, count_text


def memory_block(
    profile: str, recalled: list[Recalled], turns: list[RecalledTurn], language: Language
) -> Message | None:
    """The one system message holding the profile, the recalled memories and turns; None when all are empty."""
    if not profile and not recalled and not turns:
        return None
    locale = LOCALES[language]
    parts = [locale.memory_title]
    if profile:
        parts.append(f"{locale.profile_heading}\n{profile}")
    if recalled:
        lines = "\n".join(
            f"- {locale.memory_label.format(label=locale.memory_labels[m.type])}{m.text}" for m in recalled
        )
        parts.append(f"{locale.memories_heading}\n{lines}")
    if turns:
        parts.append("\n".join([locale.turns_heading, *dated_lines((turn.day, turn.line) for turn in turns)]))
    return {"role": "system", "content": "\n".join(parts)}


def without_lines(recalled: list[Recalled], lines: set[str]) -> list[Recalled]:
    """`recalled` less the lines of their texts that are among `lines`: a summary memory's statement that a
    recalled turn shows, dated to its day, is said once, by the turn."""
    if not lines:
        return recalled
    kept = []
    for memory in recalled:
        text = lines_not_in(memory.text, lines)
        if text.strip():
            kept.append(memory if text == memory.text else replace(memory, text=text))
    return kept


def lines_not_in(text: str, lines: set[str]) -> str:
    """`text` less its lines that are among `lines` (a profile's or a memory's statement a recalled turn shows)."""
    return "\n".join(line for line in text.splitlines() if line.strip() not in lines) if lines else text


def fill_block(
    profile: str,
    recalled: list[Recalled],
    archived: list[tuple[ArchiveEntry, float]],
    shown: set[tuple[str, int]],
    shown_texts: frozenset[str],
    room: int,
    language: Language,
    semantic: Sequence[tuple[ArchiveEntry, float]] = (),
) -> tuple[Message | None, list[Recalled], list[RecalledTurn]]:
    """The block within `room` tokens: profile and memories first (distilled, few), archived turns in what is left.

    Too little room: the lowest-scored memories go first, then the profile from its oldest end.
    """
    while True:
        block = memory_block(profile, recalled, [], language)
        base = count_message(block) if block else 0
        if block is None or base <= room:
            break  # an empty block fits any room, even the negative room of a context over the budget
        if recalled:
            recalled = recalled[:-1]
        else:
            shorter = cut_profile(profile, len(profile) * 3 // 4)
            profile = shorter if len(shorter) < len(profile) else ""  # a cut that cannot shorten it drops it
    locale = LOCALES[language]
    # the turns' heading, and the block's own title message when profile and memories left none
    title = 0 if block else count_message({"role": "system", "content": locale.memory_title}) + LINE_SEPARATOR_TOKENS
    overhead = count_text(locale.turns_heading) + LINE_SEPARATOR_TOKENS + title
    turns = choose_turns(archived, shown, room - base - overhead, language, shown_texts, semantic)
    while turns:  # the line counts are estimates: check the real block, dropping the weakest line if needed
        # a statement the profile or a memory repeats from a recalled turn is said once, by the dated turn
        lines = {turn.line for turn in turns}
        said = without_lines(recalled, lines)
        block = memory_block(lines_not_in(profile, lines).strip(), said, turns, language)
        if block is not None and count_message(block) <= room:
            return block, said, turns
        turns.remove(min(turns, key=lambda t: (t.score, t.hit)))
    return memory_block(profile, recalled, [], language), recalled, []
