"""The judging queue (ragdiff.core.judge.pool): pool, order, progress, resume, corpus search, flags."""

from __future__ import annotations

import json
import pytest

from ragdiff.core.labels.gold import load_gold
from ragdiff.core.judge.pool import JudgeQueue, Position, add_flag, read_flags, search_corpus
from ragdiff.core.io.runs import load_run


def queue_of(lesson, depth=3):
    runs = [load_run(lesson["a"]), load_run(lesson["b"])]
    return JudgeQueue.build(runs, load_gold(lesson["gold"]), depth=depth)


def top(path, depth):
    out = {}
    for line in path.read_text().splitlines():
        record = json.loads(line)
        out[record["query_id"]] = [r["id"] if isinstance(r, dict) else r for r in record["results"]][:depth]
    return out


def test_the_pool_is_the_union_of_each_runs_top_depth_with_every_rank(lesson):
    queue = queue_of(lesson, depth=2)
    a, b = top(lesson["a"], 50), top(lesson["b"], 50)
    for qid in ("q1", "q2", "q3", "q4"):
        chunks = [e.chunk_id for e in queue.entries[qid]]
        assert sorted(chunks) == sorted(set(a[qid][:2]) | set(b[qid][:2]))
        for entry in queue.entries[qid]:  # the rank in each run at any depth, None where it is absent
            assert entry.ranks == tuple(run.index(entry.chunk_id) + 1 if entry.chunk_id in run else None
                                        for run in (a[qid], b[qid]))


def test_unjudged_first_then_judged_and_progress(lesson):
    queue = queue_of(lesson, depth=3)
    # q1: policy-14 (gold) and policy-9 (not relevant) are judged; policy-2 and policy-31 are not
    entries = [e.chunk_id for e in queue.entries["q1"]]
    assert entries[:2] == ["policy-31", "policy-2"] or entries[:2] == ["policy-2", "policy-31"]
    assert set(entries[2:]) == {"policy-14", "policy-9"}
    assert queue.query_progress("q1") == (2, 4)
    judged = sum(queue.is_judged(q, e.chunk_id) for q in queue.queries for e in queue.entries[q])
    total = sum(len(queue.entries[q]) for q in queue.queries)
    assert queue.progress() == (judged, total)


def test_next_unjudged_walks_the_queries_and_comes_round_to_the_skipped(lesson):
    queue = queue_of(lesson, depth=3)
    order = [(q, e.chunk_id) for p in queue.positions() for q, e in [queue.entry_at(p)]
             if not queue.is_judged(q, e.chunk_id)]
    first = queue.next_unjudged()
    assert queue.entry_at(first)[0] == order[0][0] and queue.entry_at(first)[1].chunk_id == order[0][1]
    seen, at = [], first
    for _ in range(len(order)):  # judge each in turn: every unjudged chunk once, in queue order
        qid, entry = queue.entry_at(at)
        seen.append((qid, entry.chunk_id))
        queue.set_label(qid, entry.chunk_id, "not_relevant", 0)
        at = queue.next_unjudged(at)
    assert seen == order and at is None
    # a skipped chunk comes back after the rest (round to the start)
    queue.set_label(*order[0], None, None)
    assert queue.next_unjudged(Position(len(queue.queries) - 1, 0)) == first


def test_a_label_file_without_judgments(tmp_path, lesson):
    gold = tmp_path / "empty.yaml"
    gold.write_text("queries:\n  - id: q1\n    text: refund window for ebooks\n  - id: q2\n    text: x\n")
    queue = JudgeQueue.build([load_run(lesson["a"]), load_run(lesson["b"])], load_gold(gold), depth=2)
    assert queue.queries == ("q1", "q2")
    assert queue.progress() == (0, len(queue.entries["q1"]) + len(queue.entries["q2"]))
    assert queue.next_unjudged() == Position(0, 0)


def test_search_corpus_and_add_a_chunk_no_run_returned(lesson):
    hits = search_corpus(lesson["corpus"], "CFO approves expenses")
    assert {h.chunk_id for h in hits[:2]} == {"finance-3", "finance-4"}  # the two holding all three words
    assert hits[0].score == 3 and all(h.score < 3 for h in hits[2:])
    queue = queue_of(lesson, depth=1)
    size = queue.query_progress("q1")[1]
    position = queue.add("q1", "finance-4")
    assert queue.entry_at(position)[1].chunk_id == "finance-4" and not queue.entry_at(position)[1].pooled
    assert queue.query_progress("q1")[1] == size  # not part of the pool's count
    assert queue.add("q1", "finance-4") == position


def test_flags_round_trip(tmp_path):
    gold = tmp_path / "gold.yaml"
    gold.write_text("queries: []\n")
    assert read_flags(gold) == set()
    add_flag(gold, "q1", "c'1", "tester")
    add_flag(gold, "q2", "c2", "tester")
    with (tmp_path / "gold.yaml.ragdiff-flags.jsonl").open("a") as handle:
        handle.write('{"torn": ')
    assert read_flags(gold) == {("q1", "c'1"), ("q2", "c2")}


def test_search_corpus_finds_words_a_json_writer_escaped(tmp_path):
    """Python's json.dumps writes é as \\u00e9 by default: the text is the decoded string, so a search for
    "café" finds that chunk, and the snippet is the chunk's own text."""
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"id": "menu#1", "text": "Le café crème coûte 3 €"}) + "\n"
                      + json.dumps({"id": "menu#2", "text": "tea only"}) + "\n")
    assert "\\u00e9" in corpus.read_text()
    hits = search_corpus(corpus, "café")
    assert [h.chunk_id for h in hits] == ["menu#1"]
    assert "café crème" in hits[0].snippet


@pytest.mark.parametrize("lead", ["ß" * 60, "İ" * 60, "ﬁ" * 60, "Straße " * 12],
                         ids=["sharp-s", "dotted-I", "fi-ligature", "words"])
def test_search_corpus_snippet_and_marks_are_the_matched_text_when_folding_changes_length(tmp_path, lead):
    """ß folds to "ss", İ to "i̇", ﬁ to "fi": a position in the folded text is not the same position in the
    text. The snippet is cut around the match in the text itself and each mark is exactly a matched word."""
    corpus = tmp_path / "corpus.jsonl"
    text = lead + " the refund window closes after fourteen days; a refund is paid back"
    corpus.write_text(json.dumps({"id": "c1", "text": text}) + "\n")
    [hit] = search_corpus(corpus, "Refund")
    assert "the refund window" in hit.snippet
    assert [hit.snippet[a:b] for a, b in hit.marks] == ["refund", "refund"]


def test_search_corpus_marks_a_word_whose_folding_is_longer(tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"id": "c1", "text": "ßß the ﬁsh shop on Großstraße  opens at nine"}) + "\n")
    [hit] = search_corpus(corpus, "FISH grossstrasse")
    assert hit.snippet == "ßß the ﬁsh shop on Großstraße opens at nine"  # whitespace runs made one space
    assert [hit.snippet[a:b] for a, b in hit.marks] == ["ﬁsh", "Großstraße"]


def test_search_corpus_reads_a_null_text_or_title_as_none(tmp_path):
    """A null text is no text (as the corpus reader has it), not the word "None" to find and show."""
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"id": "c1", "text": None, "title": "refund policy"}) + "\n"
                      + json.dumps({"id": "c2", "text": "refund in none of these", "title": None}) + "\n")
    hits = {h.chunk_id: h for h in search_corpus(corpus, "refund none")}
    assert hits["c1"].snippet == "" and hits["c1"].score == 1  # found by its title only
    assert hits["c2"].score == 2 and hits["c2"].title is None


def _walked(queue, qid):
    """A query's progress by walking its pool (what progress() did at every call)."""
    pooled = [e for e in queue.entries[qid] if e.pooled]
    return sum(queue.is_done(qid, e.chunk_id) for e in pooled), len(pooled)


def test_progress_kept_as_decisions_come_equals_the_pool_walked(lesson):
    """The counts are kept on every decide/apply/set_label/add, never walked again: after any sequence of
    them (seeded) they equal a walk over the pool, per query and in all."""
    import random
    from types import SimpleNamespace as Obj

    queue = queue_of(lesson, depth=3)
    rng = random.Random(7)
    pairs = [(q, e.chunk_id) for q in queue.queries for e in queue.entries[q]] + [("q1", "finance-4"), ("q2", "nowhere")]
    labels = [("gold", 2), ("not_relevant", 0), ("evidence", 1), ("drafted", 1), ("unjudged", None), (None, None)]
    for step in range(400):
        qid, chunk = rng.choice(pairs)
        what = rng.randrange(5)
        if what == 0:
            queue.decide(qid, chunk)
        elif what == 1:
            kind, grade = rng.choice(labels)
            queue.apply([Obj(query_id=qid, chunk_id=chunk, after=Obj(kind=kind, grade=grade))])
        elif what == 2:
            queue.apply([], failed=Obj(query_id=qid, chunk_id=chunk))
        elif what == 3:
            queue.set_label(qid, chunk, *rng.choice(labels))
        elif qid in queue.queries:
            queue.add(qid, chunk)
        walked = {q: _walked(queue, q) for q in queue.queries}
        assert {q: queue.query_progress(q) for q in queue.queries} == walked, step
        done, total = map(sum, zip(*walked.values()))
        assert (queue.decided(), queue.progress()[1]) == (done, total), step
        # the header's judged: durable decisions only, never one still on its way
        durable = sum(queue.is_judged(q, e.chunk_id) for q in queue.queries for e in queue.entries[q] if e.pooled)
        assert queue.progress()[0] == durable, step


def test_a_failed_decision_leaves_flight(lesson):
    from types import SimpleNamespace as Obj

    queue = queue_of(lesson, depth=3)
    qid, entry = queue.entry_at(queue.next_unjudged())
    done, judged = queue.decided(), queue.progress()[0]
    queue.decide(qid, entry.chunk_id)
    assert queue.is_done(qid, entry.chunk_id) and queue.decided() == done + 1
    assert queue.progress()[0] == judged and queue.saving == 1  # not judged until durable: saving
    following = queue.next_unjudged()
    assert following is None or queue.entry_at(following) != (qid, entry)  # the queue moved past it
    queue.apply([], failed=Obj(query_id=qid, chunk_id=entry.chunk_id))
    assert not queue.is_done(qid, entry.chunk_id) and queue.decided() == done and queue.saving == 0
    assert queue.entry_at(queue.next_unjudged()) == (qid, entry)


def test_the_widest_id_is_measured_once_and_kept_by_add(lesson):
    queue = queue_of(lesson, depth=3)
    calls = []

    def cells(chunk_id):
        calls.append(chunk_id)
        return len(chunk_id)

    widest, rank = queue.widest_id(cells)
    assert widest == max(len(e.chunk_id) for q in queue.queries for e in queue.entries[q])
    assert rank == max(r for q in queue.queries for e in queue.entries[q] for r in e.ranks if r is not None)
    measured = len(calls)
    assert queue.widest_id(cells) == (widest, rank) and len(calls) == measured  # kept, not measured again
    queue.add("q1", "a-chunk-found-by-searching-the-corpus")
    assert queue.widest_id(cells) == (len("a-chunk-found-by-searching-the-corpus"), rank)
    assert len(calls) == measured + 1


def _python_order(queue):
    """The queue order by the rule one judgment at a time (is_judged): per query the pool order (best rank
    across the runs, then the chunks more runs hold, then by id), unjudged before judged, stable."""
    out = {}
    for qid in queue.queries:
        pooled = sorted(queue.entries[qid], key=lambda e: (min(r for r in e.ranks if r is not None),
                                                            -sum(r is not None for r in e.ranks), e.chunk_id))
        out[qid] = [e.chunk_id for e in sorted(pooled, key=lambda e: queue.is_judged(qid, e.chunk_id))]
    return out


@pytest.mark.parametrize("gold_text, name", [
    # qrels: a negative grade is unjudged, 0 is judged; a query the gold set lacks (q9) is not pooled
    ("q1 0 c1 1\nq1 0 c2 -1\nq1 0 c3 0\nq1 0 c6 -2\nq2 0 d1 0\nq2 0 d4 3\n", "gold.qrels"),
    # YAML: a draft is not a person's judgment
    ("queries:\n  - id: q1\n    text: one\n    gold: [c1, c4]\n    drafted: {c2: 1, c5: 0}\n"
     "  - id: q2\n    text: two\n    not_relevant: [d2]\n    evidence: [d3]\n", "gold.yaml"),
])
def test_the_built_order_and_counts_follow_the_one_judgment_rule(tmp_path, gold_text, name):
    """build sorts and counts with polars; each query's order and count equal the rule applied one judgment at
    a time (JudgeQueue.is_judged, vocab.kind_of) and a walk over the pool."""
    (tmp_path / name).write_text(gold_text)
    (tmp_path / "a.trec").write_text("".join(f"{q} Q0 {c} {r} {9 - r} a\n" for q, cs in
                                             (("q1", "c1 c2 c3 c4 c5"), ("q2", "d1 d2 d3 d4"), ("q9", "e1 e2"))
                                             for r, c in enumerate(cs.split(), start=1)))
    (tmp_path / "b.trec").write_text("".join(f"{q} Q0 {c} {r} {9 - r} b\n" for q, cs in
                                             (("q1", "c5 c4 c6 c1"), ("q2", "d4 d5 d1"))
                                             for r, c in enumerate(cs.split(), start=1)))
    runs = [load_run(tmp_path / "a.trec"), load_run(tmp_path / "b.trec")]
    queue = JudgeQueue.build(runs, load_gold(tmp_path / name), depth=4)
    assert queue.queries == ("q1", "q2")
    assert {q: [e.chunk_id for e in queue.entries[q]] for q in queue.queries} == _python_order(queue)
    assert {q: queue.query_progress(q) for q in queue.queries} == {q: _walked(queue, q) for q in queue.queries}
    assert any(queue.is_judged(q, e.chunk_id) for q in queue.queries for e in queue.entries[q])
    assert any(not queue.is_judged(q, e.chunk_id) for q in queue.queries for e in queue.entries[q])


# the levels a judgments frame can carry (and two it should not: a draft, the writer's old "none") by every grade
_GRID_LEVELS = ("gold", "evidence", "not_relevant", "drafted", "none")
_GRID_GRADES = (-2, -1, 0, 1, 3, None)


def _grid_gold(tmp_path):
    """A gold set of one query whose judgments are every (level, grade) of the grid, one chunk each, and a run
    returning every chunk (so every judgment is in the pool)."""
    import polars as pl
    from dataclasses import replace

    from ragdiff.core.labels.gold import JUDGMENT_SCHEMA

    (tmp_path / "gold.yaml").write_text("queries:\n  - id: q1\n    text: one\n    gold: [c0]\n")
    cells = [(level, grade) for level in _GRID_LEVELS for grade in _GRID_GRADES]
    chunks = [f"c{i}" for i in range(len(cells))] + ["unlabelled"]
    judgments = pl.DataFrame({"query_id": ["q1"] * len(cells), "chunk_id": chunks[:-1],
                              "grade": [g for _, g in cells], "level": [lv for lv, _ in cells],
                              "line": [None] * len(cells)}, schema=JUDGMENT_SCHEMA)
    (tmp_path / "a.trec").write_text("".join(f"q1 Q0 {c} {r} {100 - r} a\n" for r, c in enumerate(chunks, 1)))
    gold = replace(load_gold(tmp_path / "gold.yaml"), judgments=judgments)
    return gold, dict(zip(chunks, cells)), load_run(tmp_path / "a.trec")


def test_the_judged_rule_is_the_same_for_one_judgment_and_for_frames(tmp_path):
    """vocab.kind_of (one judgment: is_judged, the lists, the report page) and the frame form that the queue's
    order and counts and metrics.judged_pairs filter with say the same of every level and grade, a null grade
    included (the three were written apart: metrics' `grade >= 0` dropped a null grade that the queue and
    kind_of called judged, and read a draft's or "none"'s grade as a judgment)."""
    from ragdiff.core import vocab
    from ragdiff.core.metrics.prepared import judged_pairs

    gold, cells, run = _grid_gold(tmp_path)
    one_at_a_time = {c for c, (level, grade) in cells.items() if vocab.kind_of(level, grade).judged}
    assert one_at_a_time == {c for c, (level, grade) in cells.items()
                             if level in ("gold", "evidence", "not_relevant") and (grade is None or grade >= 0)}
    assert set(judged_pairs(gold.judgments).get_column("chunk_id")) == one_at_a_time
    # Gold.qrels folds the levels into the grade: the grade alone decides there, as trec_eval reads a qrels file
    real = gold.judgments.filter(gold.judgments["level"].is_in(["gold", "evidence", "not_relevant"]))
    qrels = type(gold)(gold.path, gold.format, gold.queries, real).qrels()
    assert set(judged_pairs(qrels).get_column("chunk_id")) == one_at_a_time
    queue = JudgeQueue.build([run], gold, depth=len(cells) + 1)
    # the order and the counts build makes with polars: judged ones last, counted as judged
    order = [e.chunk_id for e in queue.entries["q1"]]
    assert set(order[len(order) - len(one_at_a_time):]) == one_at_a_time
    assert queue.query_progress("q1") == (len(one_at_a_time), len(cells) + 1) == _walked(queue, "q1")
    assert {c for c in order if queue.is_judged("q1", c)} == one_at_a_time


def test_the_queue_state_is_read_only_from_outside(lesson):
    """entries, labels and flags are read-only views: a write from outside, which would bypass the progress
    counts, fails; decisions go through decide/apply/set_label/flag/add, which keep them."""
    queue = queue_of(lesson, depth=3)
    before = queue.progress(), queue.query_progress("q1")
    qid, entry = queue.entry_at(queue.next_unjudged())
    with pytest.raises(TypeError):
        queue.labels[(qid, entry.chunk_id)] = ("gold", 1)
    with pytest.raises(TypeError):
        del queue.labels[("q1", "policy-14")]
    entries = {q: list(queue.entries[q]) for q in queue.queries}
    # whatever `entries[q]` hands out, a write through it either fails or leaves the queue as it was (it passed
    # only because a tuple copy came back, which has no append; handing out the queue's own list fails it)
    for write in (lambda v: v.append(entry), lambda v: v.insert(0, entry), lambda v: v.__setitem__(0, entry),
                  lambda v: v.__delitem__(0), lambda v: v.pop(), lambda v: v.clear(), lambda v: v.reverse(),
                  lambda v: v.extend([entry]), lambda v: v.__iadd__([entry])):
        try:
            write(queue.entries[qid])
        except (TypeError, AttributeError):
            pass
        assert {q: list(queue.entries[q]) for q in queue.queries} == entries
    assert queue.entries[qid] is queue.entries[qid]  # not a copy made at each read (the pool list reads it per row)
    with pytest.raises(TypeError):
        queue.entries["q9"] = ()
    with pytest.raises(AttributeError):
        queue.flagged.add((qid, entry.chunk_id))
    with pytest.raises(AttributeError):
        queue.labels = {}
    assert (queue.progress(), queue.query_progress("q1")) == before and before[1] == _walked(queue, "q1")
    assert not queue.is_judged(qid, entry.chunk_id) and not queue.is_flagged(qid, entry.chunk_id)
    queue.flag(qid, entry.chunk_id)
    assert queue.is_flagged(qid, entry.chunk_id) and (qid, entry.chunk_id) in queue.flagged
    assert queue.progress() == before[0]  # a flag leaves it unjudged
