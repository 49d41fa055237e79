"""The judgment store (`ragdiff.core.labels.store.Judgments`): the one copy of the open label file's judgments.
`apply` is the only way to change it and tells every listener, once a call, what each chunk was and is; the
judging queue reads its labels there and its counts follow what the store tells it."""

from __future__ import annotations

from types import SimpleNamespace as Obj

import pytest

from ragdiff.core.labels.gold import load_gold
from ragdiff.core.labels.marks import UNJUDGED, Judgment
from ragdiff.core.labels.store import Changed, Judgments
from ragdiff.core.judge.pool import JudgeQueue
from ragdiff.core.io.runs import load_run


def change(q, c, kind, grade=None):
    return Obj(query_id=q, chunk_id=c, after=Obj(kind=kind, grade=grade))


def test_apply_tells_each_listener_once_what_each_chunk_was_and_is(lesson):
    store = Judgments.of_gold(load_gold(lesson["gold"]))
    assert store.label_of("q1", "policy-14") == ("gold", 3) and store.is_judged("q1", "policy-9")
    heard = []
    store.listen(heard.append)
    generation = store.generation
    told = store.apply([change("q1", "policy-14", "not_relevant", 0), change("q1", "new", "gold", 2),
                        change("q1", "policy-9", "unjudged"), change("q2", "policy-15", "gold", 1)])
    assert heard == [told] and store.generation == generation + 1
    assert told == [Changed("q1", "policy-14", Judgment("gold", 3), Judgment("not_relevant", 0)),
                    Changed("q1", "new", UNJUDGED, Judgment("gold", 2)),
                    Changed("q1", "policy-9", Judgment("not_relevant", 0), UNJUDGED),
                    Changed("q2", "policy-15", Judgment("gold", 1), Judgment("gold", 1))]  # a decision that changed nothing
    assert ("q1", "policy-9") not in store and store.label_of("q1", "new") == ("gold", 2)
    store.apply([change("q1", "d", "drafted", 2)])  # an undo back to a model's proposal: kept, not judged
    assert store.label_of("q1", "d") == ("drafted", 2) and not store.is_judged("q1", "d")
    assert store.apply([]) == [] and len(heard) == 2  # nothing applied, nobody told


def test_the_store_is_read_only_from_outside(lesson):
    store = Judgments.of_gold(load_gold(lesson["gold"]))
    with pytest.raises(TypeError):
        store[("q1", "x")] = ("gold", 1)
    with pytest.raises(TypeError):
        del store[("q1", "policy-14")]
    with pytest.raises(AttributeError):
        store.flagged.add(("q1", "x"))


def test_the_queue_reads_the_store_and_its_counts_follow_what_the_store_tells_it(lesson):
    """The review's path: the store is the app's, the queue built over it hears its changes (`changed`), and its
    labels are the store's own (no copy of its own to keep in step)."""
    gold = load_gold(lesson["gold"])
    store = Judgments.of_gold(gold)
    queue = JudgeQueue.build([load_run(lesson["a"]), load_run(lesson["b"])], gold, depth=3, store=store)
    store.listen(queue.changed)
    assert queue.labels is store
    position = queue.next_unjudged()
    qid, entry = queue.entry_at(position)
    judged = queue.progress()[0]
    queue.decide(qid, entry.chunk_id)
    assert queue.progress()[0] == judged and queue.saving == 1
    store.apply([change(qid, entry.chunk_id, "gold", 2)])
    assert queue.progress()[0] == judged + 1 and queue.saving == 0 and queue.label_of(qid, entry.chunk_id) == ("gold", 2)
    store.apply([change(qid, entry.chunk_id, "unjudged")])  # an undo
    assert queue.progress()[0] == judged and not queue.is_done(qid, entry.chunk_id)
    pooled = [e.chunk_id for e in queue.entries[qid] if e.pooled]
    assert queue.query_progress(qid) == (sum(queue.is_judged(qid, c) for c in pooled), len(pooled))


def _rows(frame):
    return sorted(frame.select("query_id", "chunk_id", "grade", *(["level"] if "level" in frame.columns else []))
                  .iter_rows())


def test_the_gold_frames_are_derived_from_the_store_as_the_file_has_them(lesson):
    """The gold frames the metrics and the judging queue read are the store's: after marks, undos and a draft
    decided, `gold()` holds what the label file reopened holds, judgments and drafts alike."""
    from ragdiff.core.labels import LabelFile, Mark

    path = lesson["gold"]
    text = path.read_text()
    path.write_text(text.replace("  - id: q1\n", "  - id: q1\n    drafted: {policy-31: 2}\n", 1))
    gold = load_gold(path)
    store = Judgments.of_gold(gold)
    assert store.gold() is gold  # nothing changed: the gold set as read
    label_file = LabelFile(path, reviewer="tester")
    for mark in (Mark("q1", "policy-14", "not_relevant"), Mark("q2", "new-chunk", "evidence"),
                 Mark("q2", "policy-15", "gold", 3), Mark("q1", "policy-31", "gold", 2)):
        store.apply([label_file.apply(mark)])
    again = load_gold(path)
    assert _rows(store.gold().judgments) == _rows(again.judgments)
    assert _rows(store.gold().drafts) == _rows(again.drafts) == []
    store.apply([label_file.undo()])  # the draft decided comes back
    again = load_gold(path)
    assert _rows(store.gold().judgments) == _rows(again.judgments)
    assert _rows(store.gold().drafts) == _rows(again.drafts) == [("q1", "policy-31", 2)]
    store.apply([label_file.undo()])
    assert _rows(store.gold().judgments) == _rows(load_gold(path).judgments)
    assert dict(store) == dict(Judgments.of_gold(load_gold(path)))  # every (query, chunk), read query by query


def test_since_gives_what_the_store_took_after_a_generation(lesson):
    store = Judgments.of_gold(load_gold(lesson["gold"]))
    store.apply([change("q1", "a", "gold", 1)])
    then = store.generation
    second = store.apply([change("q1", "b", "evidence", 1), change("q2", "c", "not_relevant", 0)])
    third = store.apply([change("q1", "a", "unjudged")])
    assert store.since(then) == second + third and store.since(store.generation) == []
