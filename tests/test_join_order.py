"""Per-query tables come out in the order the code says (the scored queries' gold order), whatever order a
polars join happens to give: `per_query_values` and `window_counts` join with maintain_order="left" (polars
promises no order for a join without it, and the means are float sums over these rows in that order)."""

from __future__ import annotations

import random

from ragdiff.core.labels.gold import load_gold
from ragdiff.core.metrics.bounds import window_counts
from ragdiff.core.metrics.prepared import prepare
from ragdiff.core.metrics.scoring import per_query_values
from ragdiff.core.metrics.specs import EvalSettings, parse_metric
from ragdiff.core.io.runs import load_run


def test_per_query_rows_are_in_gold_order_on_thousands_of_queries(tmp_path):
    rng = random.Random(11)
    queries = [f"q{i:05d}" for i in range(6000)]
    rng.shuffle(queries)  # gold order: neither sorted nor the run's order
    qrels, run = [], []
    for q in queries:
        for c in range(rng.randint(1, 4)):
            qrels.append(f"{q} 0 c{c} {rng.choice([0, 1, 2, 3])}")
    for q in sorted(queries, key=lambda _: rng.random())[:5000]:  # some queries the run lacks
        run += [f"{q} Q0 c{c} {r} {1 / r} t" for r, c in enumerate(rng.sample(range(8), 6), 1)]
    (tmp_path / "qrels.txt").write_text("\n".join(qrels) + "\n")
    (tmp_path / "run.trec").write_text("\n".join(run) + "\n")
    gold = load_gold(tmp_path / "qrels.txt", "qrels")
    settings = EvalSettings(k=5, depth=10)
    prepared = prepare(load_run(tmp_path / "run.trec"), gold, settings)
    scored = prepared.scored.get_column("query_id").to_list()
    assert scored == [q for q in gold.queries.sort("position")["query_id"] if q in set(scored)]
    metrics = [parse_metric(n) for n in ("recall@5", "ndcg@5", "mrr", "map", "bpref", "judged@5", "rprec")]
    assert per_query_values(prepared, metrics, settings).get_column("query_id").to_list() == scored
    assert window_counts(prepared, 5, settings).get_column("query_id").to_list() == scored
