"""The diff document: what `ragdiff diff` found, as one JSON-able dict (DESIGN's shape) that every renderer reads.

`--json` prints it (`as_json`); the terminal report (`text_diff`), `--markdown` (`markdown`, a pull-request
comment) and `ragdiff report` (`html_page`, one HTML page) render it, so the flips, verdicts and numbers are
the same everywhere by construction.

- Two runs: DESIGN's shape — `a`, `b`, per metric `{"a", "b", "delta", "p_value", "ci95", …}`, `flips`, ….
- Several runs against one baseline (`diff BASE RUN [RUN ...]`): `{"baseline", "runs": [one comparison per run,
  each shaped like the two-run document], "p_adjustment"}`; every p-value is Holm-adjusted across
  runs × metrics, each metric carries `p_adjusted` beside the raw `p_value`, and the verdicts read the
  adjusted one.
- Beside the comparison (`slices`): how many drafts wait, what is not a retrieval query, and with
  `--drafted as-labels` / `--by-tag` the means as if every draft were accepted and per tag.

`DiffReport` holds the document and the metrics it names, so a renderer shows each metric the way its spec
says; `comparisons(report)` gives either shape as a list of two-run documents, which is what the renderers loop
over.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ragdiff.core import fmt
from ragdiff.core.metrics.diff import Diff, Flip, worth_text
from ragdiff.core.metrics.holm import adjust
from ragdiff.core.metrics.evaluate import RunEval, evaluate
from ragdiff.core.metrics.specs import Metric
from ragdiff.core.report.notes import drafts_summary


# --------------------------------------------------------------------------------------------------------------
# the document


def _flip_entry(f: Flip) -> dict:
    return {"query_id": f.query_id, "text": f.text, "direction": f.direction, "a_rank": f.a_rank,
            "b_rank": f.b_rank}


def _settings(d: Diff) -> dict:
    s = d.settings
    return {**s.as_json(), "flips": d.flips, "seed": d.seed, "alpha": d.alpha}


def _unjudged_entry(m) -> dict | None:
    """Each run's upper bound (unjudged chunks in the top `window` relevant) and whether the verdict could flip."""
    c = m.unjudged
    if c is None:
        return None
    return {"window": c.window,
            "a": {"upper_bound": fmt.json_number(c.a_bound), "unjudged": c.a_unjudged},
            "b": {"upper_bound": fmt.json_number(c.b_bound), "unjudged": c.b_unjudged},
            "relabelled": c.side, "if_relabelled": {"a": fmt.json_number(c.if_a), "b": fmt.json_number(c.if_b),
                                                   "p_value": fmt.json_number(c.p_value), "verdict": c.verdict or None},
            "could_flip": c.could_flip, "sentence": c.sentence or None}


def _comparison(d: Diff) -> dict:
    """Everything about one run against the baseline (the part a multi-run document repeats per run)."""
    s = d.settings
    metrics = {}
    for m in d.metrics:
        entry = {"a": fmt.json_number(m.a), "b": fmt.json_number(m.b), "delta": fmt.json_number(m.delta),
                 "p_value": fmt.json_number(m.p_value)}
        if m.p_adjusted is not None:
            entry["p_adjusted"] = fmt.json_number(m.p_adjusted)
        entry.update({"ci95": [fmt.json_number(m.ci95[0]), fmt.json_number(m.ci95[1])], "n": m.n,
                      "queries_worth": fmt.json_number(m.queries_worth),
                      "worth": worth_text(m), "test": m.method, "verdict": m.verdict,
                      "verdict_words": m.verdict_words, "highlight": m.is_quality_change, "summary": m.summary,
                      "sentence": m.sentence, "detectable_change": fmt.json_number(m.detectable),
                      "detectable_queries": fmt.json_number(m.detectable * m.n) if m.n else None,
                      "noise": m.noise_words,
                      "unjudged": _unjudged_entry(m)})
        metrics[m.name] = entry
    return {
        "queries": {"scored": len(d.scored), "unanswerable": d.unanswerable},
        "by_hand": d.by_hand,
        "metrics": metrics,
        "flips": {"k": s.k, "hit_to_miss": [f.query_id for f in d.hit_to_miss],
                  "miss_to_hit": [f.query_id for f in d.miss_to_hit]},
        "flipped_queries": [_flip_entry(f) for f in d.hit_to_miss + d.miss_to_hit],
        "reranker_opportunity": {
            side: {"run": o.run, f"recall@{o.k}": fmt.json_number(o.recall_k),
                   f"recall@{o.depth}": fmt.json_number(o.recall_depth),
                   "count": o.count, "queries": o.queries}
            for side, o in d.opportunity.items()
        },
        "overlap": None if d.overlap is None else {
            # Jaccard and RBO of the top k, RBO of the top depth; the share of RBO's weight in the top k says
            # how little the order deep in the lists moves it
            "k": d.overlap.k, "depth": d.overlap.depth, "rbo_p": d.overlap.p,
            "rbo_weight_top_k": fmt.json_number(d.overlap.weight_top_k),
            "mean_jaccard": fmt.json_number(d.overlap.mean_jaccard),
            "mean_rbo_k": fmt.json_number(d.overlap.mean_rbo_k),
            "mean_rbo": fmt.json_number(d.overlap.mean_rbo),
            "per_query": {q: {"jaccard": fmt.json_number(j), "rbo_k": fmt.json_number(rk), "rbo": fmt.json_number(r)}
                          for q, j, r, rk in d.overlap.per_query.select("query_id", "jaccard", "rbo", "rbo_k")
                          .iter_rows()},
        },
        "judged_warning": d.judged_warning,
        "regressions": [_flip_entry(f) for f in d.regressions],
    }


def diff_document(d: Diff, a_path: str | None = None, b_path: str | None = None,
                  gold_path: str | None = None) -> dict:
    """The two-run document (`ragdiff diff A B --json`)."""
    return {"a": {"name": d.a_name, "path": a_path}, "b": {"name": d.b_name, "path": b_path}, "gold": gold_path,
            "settings": _settings(d), **_comparison(d)}


def document(diffs: list[Diff], base_path: str | None = None, run_paths: list[str | None] | None = None,
             gold_path: str | None = None) -> dict:
    """One run: the two-run document. Several (one baseline, each diff's A): the multi-run document, with
    p-values Holm-adjusted across runs × metrics (call it on fresh diffs; it adjusts them)."""
    run_paths = run_paths or [None] * len(diffs)
    if len(diffs) == 1:
        return diff_document(diffs[0], base_path, run_paths[0], gold_path)
    tests = adjust(diffs)
    first = diffs[0]
    return {
        "baseline": {"name": first.a_name, "path": base_path},
        "gold": gold_path,
        "settings": _settings(first),
        "p_adjustment": {"method": "holm", "across": "runs × metrics", "tests": tests,
                         "note": f"p (Holm): p-values Holm-adjusted across {len(diffs)} runs × {len(first.metrics)} "
                                 f"metrics ({tests} tests); the verdicts read them (the raw p is p_value in --json "
                                 "and in each sentence)"},
        "runs": [{"b": {"name": d.b_name, "path": p}, **_comparison(d)} for d, p in zip(diffs, run_paths)],
    }


@dataclass
class DiffReport:
    """The document (`doc`: what --json prints) and the metrics it names, each with the spec that says how it
    is shown (judged@k as a share); `notes`: lines every scoring command says about the gold set."""

    doc: dict
    metrics: dict[str, Metric]
    notes: list[str | None] = field(default_factory=list)


def report(diffs: list[Diff], base_path: str | None = None, run_paths: list[str | None] | None = None,
           gold_path: str | None = None, notes: list[str | None] = ()) -> DiffReport:
    """The diff document of these comparisons with one baseline (see `document`) and their metrics."""
    return DiffReport(document(diffs, base_path, run_paths, gold_path),
                      {m.metric.name: m.metric for m in diffs[0].metrics}, list(notes))


def comparisons(report: DiffReport) -> list[dict]:
    """Either document shape as a list of two-run documents (baseline as `a`, the run as `b`), each with
    `specs`: the report's metrics by name (not part of the JSON document)."""
    doc = report.doc
    if "runs" not in doc:
        return [{**doc, "specs": report.metrics}]
    common = {"a": doc["baseline"], "gold": doc["gold"], "settings": doc["settings"],
              "p_adjustment": doc["p_adjustment"], "specs": report.metrics}
    return [{**common, **run} for run in doc["runs"]]


def slices(evals: list[RunEval], gold, drafts_as_labels: bool, tags: bool, flips: int, seed: int,
           alpha: float) -> dict:
    """What diff adds to its document beside the comparison: how many drafts wait, the means with every draft
    accepted (--drafted as-labels) and every metric per tag (--by-tag), for the baseline and each run, with
    each run's paired test against the baseline per tag (`flips`, `seed`, `alpha`: the comparison's)."""
    out: dict = {"drafted": drafts_summary(gold), "not_retrieval": gold.not_retrieval()}
    if drafts_as_labels:
        accepted = gold.with_drafts_as_labels()
        out["drafts_as_labels"] = {
            ev.run.name: {n: fmt.json_number(v)
                          for n, v in evaluate(ev.run, accepted, ev.settings, ev.metrics).means.items()}
            for ev in evals}
    if tags:
        from ragdiff.core.metrics.slices import by_tag

        out["by_tag"] = {ev.run.name: {t.tag: {"queries": t.queries,
                                               "metrics": {n: fmt.json_number(v) for n, v in t.means.items()}}
                                       for t in by_tag(ev, gold)} for ev in evals}
        out["by_tag_tests"] = by_tag_tests(evals, gold, flips, seed, alpha)
    return out


def by_tag_tests(evals: list[RunEval], gold, flips: int, seed: int, alpha: float) -> dict:
    """Each run against the baseline per tag and metric: diff's paired test over the tag's queries, the p-value
    Holm-adjusted across the tags (core/slices.tag_tests), the interval and the verdict by diff's rules."""
    from ragdiff.core.metrics.diff import MIN_QUERIES_FOR_VERDICT
    from ragdiff.core.metrics.slices import tag_tests

    out: dict = {"p_adjustment": "Holm across the tags, for each run and metric",
                 "min_queries_for_verdict": MIN_QUERIES_FOR_VERDICT, "runs": {}}
    for ev in evals[1:]:
        runs = out["runs"].setdefault(ev.run.name, {})
        for t in tag_tests(evals[0], ev, gold, flips=flips, seed=seed, alpha=alpha):
            m = t.result
            runs.setdefault(t.tag, {})[m.name] = {
                "n": m.n, "delta": fmt.json_number(m.delta), "p_value": fmt.json_number(m.p_value),
                "p_adjusted": fmt.json_number(m.p_adjusted), "ci95": [fmt.json_number(x) for x in m.ci95],
                "verdict": m.verdict, "verdict_words": m.verdict_words, "sentence": m.sentence}
    return out
