"""The eval document in trec_eval's layout (`eval --trec-eval`; with --per-query, trec_eval -q's), so scripts
that parse trec_eval's output keep working."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragdiff.core.fmt import number

if TYPE_CHECKING:
    from ragdiff.core.metrics.specs import Metric
    from ragdiff.core.report.eval_doc import EvalReport

TREC_EVAL_WIDTH = 22  # trec_eval prints "%-22s\t%s\t%.4f": measure, topic, value


def trec_eval_name(metric: Metric) -> str | None:
    """trec_eval's name for a ragdiff metric, None when trec_eval has no such measure (mrr@k, judged@k: its unj_k
    counts differently, DESIGN.md). The whole-ranking measures of ndcg and map carry ragdiff's own name there."""
    name = metric.spec.trec_eval
    if name is None:
        return None
    if "{k}" not in name:
        return name if metric.k is None else None
    return metric.family if metric.k is None else name.format(k=metric.k)


def trec_eval_text(report: EvalReport) -> str:
    """trec_eval's output for each run, one after another: with `per_query` (trec_eval -q) every scored query's
    lines in trec_eval's topic order (ids in byte order), each the metrics in the order asked; then the `all`
    lines: runid (the run's name), num_q (queries scored) and each metric's mean. Only the metrics trec_eval
    has (trec_eval_name)."""
    out: list[str] = []

    def line(measure: str, topic: str, value: str) -> None:
        out.append(f"{measure:<{TREC_EVAL_WIDTH}}\t{topic}\t{value}\n")

    per_query = report.per_query
    for ev in report.evals:
        shared = [(m.name, trec_eval_name(m)) for m in ev.metrics if trec_eval_name(m) is not None]
        if per_query and shared:
            rows = ev.per_query.select("query_id", *[n for n, _ in shared]).sort("query_id")
            columns = [rows.get_column(n).to_list() for n, _ in shared]
            for i, qid in enumerate(rows.get_column("query_id").to_list()):
                for (_, measure), values in zip(shared, columns):
                    line(measure, qid, number(values[i], "eval"))
        line("runid", "all", "".join(ev.run.name.split()) or "ragdiff")
        line("num_q", "all", str(len(ev.queries.scored)))
        for name, measure in shared:
            line(measure, "all", number(ev.means.get(name), "eval"))
    return "".join(out)
