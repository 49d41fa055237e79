"""The judging queue's decisions (`ragdiff.app.judge.JudgeScreen`): each key decides the chunk on screen when
it was pressed, sends the decision to the label writer (`ragdiff.app.session.LabelSession`) and moves the queue
on; the writer's outcome comes back to `mark_done`. A query a model drafted is kept (a) or dropped (d) before its
chunks (app/drafted_query.py).

Mixed into JudgeScreen (Textual finds the actions on this class too).
"""

from __future__ import annotations

from rich.text import Text

from ragdiff.app import drafted_query
from ragdiff.app.messages import MarkDone
from ragdiff.app.session import Target
from ragdiff.app.text import clean
from ragdiff.core import vocab


class Deciding:
    def _target(self) -> Target | None:
        if self.position is None:
            return None
        qid, entry = self.queue.entry_at(self.position)
        run, rank = next(((name, r) for name, r in zip(self.queue.run_names, entry.ranks) if r is not None),
                         (None, None))
        return Target(qid, entry.chunk_id, run, rank)

    def _query_waits(self) -> str | None:
        """The drafted query on screen, while nobody has kept or dropped it."""
        if self.position is None:
            return None
        qid = self.queue.queries[self.position.query]
        return qid if drafted_query.waits(self.queue, qid) else None

    def action_decide(self, label: str, grade: int | None = None) -> None:
        target = self._target()
        if target is None:
            self.set_status("nothing to judge")
            return
        if self._query_waits() is not None:
            self.set_status(drafted_query.reminder(target.query_id))
            return
        self.queue.decide(target.query_id, target.chunk_id, label, grade)
        # the decision that leaves none of the query's pool unjudged finishes it: a person has read every
        # pooled chunk's label, which is what the label file's `reviewed:` date says (DESIGN)
        done, size = self.queue.query_progress(target.query_id)
        self.session.mark(target, label, grade, reviewed=self.queue.finishes_queries and size > 0 and done == size)
        self._advance(f"{clean(target.chunk_id)}: {vocab.word(label, grade)} · saving …")

    def action_accept(self) -> None:
        """The draft's own grade as the decision (one key); any other decision key overrides it. On a drafted
        query not yet kept: keeps it."""
        qid = self._query_waits()
        if qid is not None:
            drafted_query.decide(self.queue, self.session, qid, drafted_query.KEEP)
            self.set_status(f"kept the drafted query {clean(qid)} · saving … · now its chunks")
            self.show_position()
            return
        target = self._target()
        decision = None if target is None else self.queue.accepting(target.query_id, target.chunk_id)
        if decision is None:
            self.set_status("no drafted label here to accept: decide with 0-3, g, e or x")
            return
        self.action_decide(*decision)

    def action_drop_query(self) -> None:
        qid = self._query_waits()
        if qid is None:
            self.set_status("d drops a drafted query before its chunks are judged; this one is not waiting for that")
            return
        drafted_query.decide(self.queue, self.session, qid, drafted_query.DROP)
        self.position = self.queue.next_unjudged(self.position) or next(iter(self.queue.positions()), None)
        self.set_status(f"dropped the drafted query {clean(qid)} · saving … · u brings it back")
        self.show_position()

    def action_skip(self) -> None:
        if self._query_waits() is not None:  # the whole query: it comes back after the rest
            here, queue = self.position.query, self.queue
            self.position = next((p for p in queue.positions(self.position) if p.query != here
                                  and not queue.is_done(queue.queries[p.query], queue.entry_at(p)[1].chunk_id)),
                                 self.position)
            self.set_status(f"skipped the drafted query {clean(self.queue.queries[here])}: it comes back after "
                            "the rest")
            self.show_position()
            return
        target = self._target()
        if target is not None:
            self.queue.skip(target.query_id, target.chunk_id)
            self._advance(f"skipped {clean(target.chunk_id)}: it comes back after the rest")

    def action_flag(self) -> None:
        target = self._target()
        if target is None:
            return
        if self._query_waits() is not None:
            self.set_status(drafted_query.reminder(target.query_id))
            return
        self.queue.flag(target.query_id, target.chunk_id)
        self.session.flag(target)
        self._advance(f"{clean(target.chunk_id)} flagged for a second opinion")

    def _advance(self, said: str) -> None:
        following = self._following()
        if following is None or following == self.position:
            total = self.queue.progress()[1]
            note = (f"every pooled chunk is judged ({self.queue.decided()}/{total})" if following is None
                    else "it is the only unjudged chunk left")
            self._note = (self.app.keys_seen, note)  # said until the next key, whatever saves come back
            self.set_status(f"{said} · {note}")
        else:
            if following.query != self.position.query:
                said += f" · next query: {clean(self.queue.queries[following.query])}"
            self.set_status(said)
            self.position = following
        self.show_position()

    def mark_done(self, message: MarkDone) -> None:
        """A decision's outcome came back from the writer: the app has applied it to the queue
        (`apply_outcome`); this screen shows it, and after `u` goes back to the chunk taken back."""
        if message.undo and message.changes:  # back to the chunk that was taken back, to judge it again
            change = message.changes[-1]
            if change.query_id in self.queue.queries:
                self.queue.taken_back(change.query_id, change.chunk_id)
                self.position = self.queue.add(change.query_id, change.chunk_id)
        elif message.undo and message.query_edit is not None:  # back to the drafted query, to decide it again
            qid = message.query_edit.query_id
            if qid in self.queue.queries:
                self.position = self.queue.first_of_query(self.queue.queries.index(qid)) or self.position
        if message.status:
            status = Text(clean(message.status), style="bold red" if message.error else "")
            if self._note is not None and self._note[0] == self.app.keys_seen:
                status.append(f" · {self._note[1]}", style="bold")
            self.set_status(status)
        self.show_position()


    def action_undo(self) -> None:
        self.session.undo()

    def action_retry(self) -> None:
        self.session.retry()

    def action_drop(self) -> None:
        self.session.drop()

    def saved(self, message) -> None:
        """The label file was rewritten (or could not be: said in red, with the key that retries)."""
        if message.error:
            self.set_status(Text(clean(message.status), style="bold red"))
        self.show_position()
