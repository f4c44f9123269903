"""Figure 16: agent values through `turnstream compact --llm` (`turnstream bench --agents-only --llm-stand-in`).

Figure 13's traces and budgets, compacted by the LLM strategies (`llm/strategies.py`: the model's key facts over
the offline ones, its rolling summary) that ask the bench's stand-in model (stand_in_model.py) at each drop,
synchronously, as `compact --llm` does. Each budget's shares, development and held-out seeds, beside figure 13's
offline ones from the same run; and the compacted histories holding a reference the model invented (none may).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from turnstream.llm.strategies import build_llm_strategy
from turnstream.settings import Settings
from turnstream_tools.benchmarks.agent_values import Measure, Tally, agent_values, domain_of
from turnstream_tools.benchmarks.figures import Figure, Row, Target
from turnstream_tools.benchmarks.stand_in_model import StandInModel, with_stand_in
from turnstream_tools.samples.agent_traces import agent_traces


def compact_llm_values(
    model: StandInModel, per_domain: int, seeds: Sequence[int]
) -> dict[int, dict[int, dict[str, Measure]]]:
    """Per seed, figure 13's measures (per budget, per domain) of that seed's traces through the LLM strategies."""
    strategy = build_llm_strategy(with_stand_in(Settings(), model))
    return {
        seed: agent_values(
            [(domain_of(t), t.messages) for t in agent_traces(per_domain, seed)], strategy, invented=model.invented
        )
        for seed in seeds
    }


def beside_offline(where: str, ours: Tally, offline: Tally, clean: int, points: int) -> tuple[list[Row], bool]:
    """Figures 15 and 16's rows at one budget `where`: old and all values kept with the model against offline, and
    the calls clean with the model; and whether the model held the offline shares with every call clean."""
    rows = [
        Row.of(f"old values {where}, with the model vs offline", "% kept", ours.old_kept_pct, offline.old_kept_pct),
        Row.of(f"all values {where}, with the model vs offline", "% kept", ours.kept_pct, offline.kept_pct),
        Row.of(f"invariants {where}, with the model", "calls clean / calls", clean, points),
    ]
    held = ours.old_kept_pct >= offline.old_kept_pct and ours.kept_pct >= offline.kept_pct and clean == points
    return rows, held


def compact_llm_figure(
    with_model: Mapping[int, Mapping[int, Mapping[str, Measure]]],
    offline: Figure,
    invented: int,
    answered: Mapping[str, int],
) -> Figure:
    """Figure 16 from `compact_llm_values` (the development seed first) and figure 13 of the same run."""
    development, *held_out = with_model

    def offline_tally(seed: int, budget: int) -> Tally:
        by_budget = offline.data["budgets"] if seed == development else offline.data["held_out"][str(seed)]
        kept = by_budget[str(budget)]["all"]["sides"]["turnstream"]
        return Tally(kept["needed"], kept["kept"], kept["old"], kept["old_kept"])

    rows: list[Row] = []
    met = True
    holding = 0
    for budget in with_model[development]:
        for label, seeds in (("", [development]), (", held-out seeds", held_out)):
            if not seeds:
                continue
            pooled, theirs = Measure(), Tally()
            for seed in seeds:
                pooled.add(with_model[seed][budget]["all"])
                theirs.add(offline_tally(seed, budget))
            shown, held = beside_offline(
                f"at {budget:,}{label}", pooled.sides["turnstream"], theirs, pooled.clean, pooled.points
            )
            rows += shown
            met = met and held
            holding += pooled.invented
    rows.append(
        Row.of(
            "compacted histories holding an invented reference", "histories / references invented", holding, invented
        )
    )
    data = {
        "budgets": {str(b): {d: m.to_dict() for d, m in by.items()} for b, by in with_model[development].items()},
        "held_out": {
            str(seed): {str(b): {d: m.to_dict() for d, m in by.items()} for b, by in with_model[seed].items()}
            for seed in held_out
        },
        "model_answers": dict(answered),
        "references_invented": invented,
    }
    return Figure(
        "agent_values_llm",
        "16 Agent values through compact --llm (a stand-in model)",
        "with the model",
        "offline",
        rows,
        Target(
            "figure 13's offline shares held or raised; no invented reference kept; invariants 100 %",
            met and holding == 0,
        ),
        data,
    )
