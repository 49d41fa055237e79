"""The judgment store (`ragdiff.core.labels.store.Judgments`): the one copy of the open label file's judgments.
`apply` is the only way to change it and tells every listener, once a call, what each chunk was and is; the
judging queue reads its labels there and its counts follow what the store tells it."""

from __future__ import annotations

from types import SimpleNamespace as Obj

import pytest

from ragdiff.core.gold import load_gold
from ragdiff.core.labels.marks import UNJUDGED, Judgment
from ragdiff.core.labels.store import Changed, Judgments
from ragdiff.core.pool import JudgeQueue
from ragdiff.core.runs import load_run


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
