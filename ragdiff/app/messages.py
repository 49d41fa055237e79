"""What workers send back to the app: plain dataclasses (Textual messages)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from textual.message import Message


@dataclass
class LoadProgress(Message):
    """A step of loading, for the progress line."""

    text: str


@dataclass
class Loaded(Message):
    """The runs and gold set are read and the model is built: the screen can show it."""

    model: Any  # ReviewModel
    seconds: float
    store: Any = None  # ragdiff.core.labels.store.Judgments of the gold set: the judgments every view reads


@dataclass
class LoadFailed(Message):
    """Loading failed: the words to show (and to print on exit)."""

    text: str


@dataclass
class CorpusReady(Message):
    """The corpus offset index is built (or could not be)."""

    chunks: int
    error: str | None
    snapshot_note: str | None = None  # the corpus is not the snapshot the gold file records


@dataclass
class VerdictsReady(Message):
    """p-values and verdicts for one (k, gold generation), computed in the background."""

    key: tuple
    result: Any


@dataclass
class UnjudgedReady(Message):
    """Both runs' unjudged rows, found after the first screen (`ReviewModel.unjudged_job`)."""

    generation: int
    result: object


@dataclass
class ViewReady(Message):
    """Another k's numbers (a `ragdiff.app.views.KView`), built in a worker before its key is pressed."""

    view: Any


@dataclass
class MarkDone(Message):
    """A label job finished: the status sentence and what changed (the model applies each Change)."""

    status: str
    error: bool = False
    changes: list = field(default_factory=list)  # ragdiff.core.labels.Change, in the order they were made
    target: Any = None  # the session.Target of a mark or flag (set also when it failed)
    undo: bool = False  # the job was `u`
    flagged: bool = False  # the job was a flag, written beside the label file (`target` is the chunk)
    query_edit: Any = None  # a drafted query kept or dropped, or that taken back (core.labels.Edit)


@dataclass
class QueueBuilt(Message):
    """The judging queue (J) built in a worker; or why not (the app keeps the query it opens at)."""

    queue: Any  # ragdiff.core.judge.pool.JudgeQueue, None when it failed
    error: str | None = None


@dataclass
class Saved(Message):
    """The label file was rewritten with the decisions the journal held (or could not be: `error`)."""

    status: str
    written: int  # decisions the rewrite put into the file
    unwritten: int  # decisions still only in the journal (a failed rewrite: r retries)
    error: bool = False
