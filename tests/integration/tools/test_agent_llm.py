"""Figure 16's path: the agent traces through compact --llm's strategies, asking the stand-in model over HTTP."""

from __future__ import annotations

from turnstream_tools.benchmarks.agent_llm import compact_llm_figure, compact_llm_values
from turnstream_tools.benchmarks.agent_values import agent_figure
from turnstream_tools.benchmarks.stand_in_model import StandInModel


def test_the_traces_through_compact_llm_keep_every_invented_reference_out() -> None:
    model = StandInModel()
    try:
        measured = compact_llm_values(model, 1, (0,))
    finally:
        model.stop()
    invented = model.invented()
    # a summary merge and an extraction at each drop, each extraction with a reference of its own
    assert model.answered["summary"] == model.answered["extraction"] == len(invented) > 50
    figure = compact_llm_figure(measured, agent_figure(1), len(invented), model.answered)
    assert figure.row("compacted histories holding an invented reference").a == 0
    for budget, by_domain in measured[0].items():
        total = by_domain["all"]
        assert total.points > 0 and total.clean == total.points and total.invented == 0
        assert figure.row(f"invariants at {budget:,}, with the model").b == total.points
