"""A label file from real traffic (`ragdiff labels init GOLD --from LOG`, `labels add GOLD --from LOG`): the
lesson's "take fifty real queries … from support tickets, search logs or chat history", awkward ones included.

Reading. A log is CSV, TSV, JSONL (by its extension, else a first line that opens with `{`) or plain text, one
query a line. The query column is `--column`, else the one whose name says so (query, question, search, …),
else the one column whose values read as text. A column named like failed / zero_results (true = failed),
success / answered (false = failed) or status / outcome / feedback (a value such as `failed`, `no_answer`,
`thumbs_down`) marks failed queries; a conversation column (conversation_id, session_id, thread_id, …) lets
follow-ups be found.

Folding, for comparison only (the text kept is a spelling as written):
- exact duplicates: the same text after NFKC, lower case, punctuation to spaces and runs of white space to
  one. They fold into one query with a `count`; the first spelling is kept.
- near-duplicates: queries whose words, stop words left out and a plural `s` dropped, are the same set
  (reworded: "reset password how" ~ "how do I reset my password"), or differ by one slip (a letter added,
  dropped, changed or two swapped) in a word of six letters or more (mistyped: "timzone" ~ "timezone"; a
  shorter word such as ssl / sql, or any digit, is too likely another word). A group keeps its most frequent
  spelling as the query's text, its other spellings under `variants:` with their counts; `count` is the
  group's total, so the counts of the file add up to the log's non-blank lines.
- follow-ups: with a conversation column, a query after another in the same conversation that opens like a
  follow-up ("and …", "what about …", "also …") or leans on it ("it", "that", "those", "too") keeps the query
  before it as `context:`, is tagged `follow-up`, and folds only with the same follow-up after the same query.

Sampling (`--sample N --seed S`), stratified by frequency so the rare tail is not lost to the frequent head:
the queries (after folding) fall in bands by their count — 1, 2-3, 4-7, 8-15, … (powers of two) — and N is
shared evenly across the bands (a band with fewer queries than its share gives the rest to the others, the
largest first); each band is drawn with the seed. Sampling by traffic would give the head almost every slot;
sampling distinct queries uniformly would give it almost none, since most distinct queries are asked once.
Failed queries are always kept, on top of the draw's share only when they alone outnumber N.

Ids are `q` + the first 8 hex digits of the sha256 of the folded text (a follow-up's: of its context and its
text), longer where two would clash: the same query gets the same id in every file made from any log.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from ragdiff.core.errors import InputError, UsageError
from ragdiff.core.io.textio import BOM, BOM_CHAR, json_objects

__all__ = ["LogQuery", "QueryLog", "fold", "read_log", "render", "sample", "FORMATS"]

FORMATS = ("csv", "tsv", "jsonl", "text")
_SUFFIX = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl"}
# column names that say "the query", most telling first (compared in lower case)
QUERY_NAMES = ("query", "query_text", "search_query", "user_query", "question", "search", "search_term",
               "q", "prompt", "utterance", "message", "input", "text")
CONVERSATION_NAMES = ("conversation", "conversation_id", "session", "session_id", "thread", "thread_id", "chat",
                      "chat_id", "dialog", "dialog_id", "dialogue_id")
FAILED_NAMES = ("failed", "failure", "is_failed", "zero_results", "no_results", "no_result", "unanswered")
SUCCESS_NAMES = ("success", "succeeded", "is_success", "answered", "resolved", "found")
OUTCOME_NAMES = ("status", "outcome", "result", "feedback", "rating")
FAIL_WORDS = frozenset({"fail", "failed", "failure", "error", "no_answer", "no answer", "unanswered", "zero_results",
                        "no_results", "no results", "thumbs_down", "thumbsdown", "down", "bad", "negative", "-1",
                        "\N{THUMBS DOWN SIGN}"})
_TRUE = frozenset({"true", "1", "yes", "y", "t"})
# a follow-up opens like one, or leans on what came before
_FOLLOW_OPENERS = r"^(and|or|but|also|then|so|what about|how about|what if|and if|same|instead|ok|okay)\b"
_FOLLOW_WORDS = r"\b(it|its|that|this|those|these|them|they|there|too|also|else|same|instead)\b"
# words that do not change what is asked (left out of the near-duplicate comparison only); negations stay
STOP_WORDS = ("a an the i me my we our you your to of in on for at by from with is are was were be been do does "
              "did how what which who whom can could should would will shall may might must please it its this "
              "that these those there here as into about").split()
MIN_SLIP_WORD = 6  # a one-letter slip is a typo only in a word this long (ssl / sql, close / clone are words)
_PUNCT = r"[^\p{L}\p{N}]+"


@dataclass
class LogQuery:
    """One query of the label file to be: a group of log lines."""

    id: str
    text: str  # the spelling kept, as written
    count: int  # log lines in the group, variants included
    first: int  # the group's first line (or row) in the log
    variants: list[tuple[str, int]] = field(default_factory=list)  # the group's other spellings and their lines
    failed: bool = False
    context: str | None = None  # the query before a follow-up, as written
    key: str = ""  # the folded text the id is made from


@dataclass
class QueryLog:
    """A log read and folded: its queries (all of them, in the order of first appearance) and what was found."""

    path: Path
    fmt: str
    column: str | None  # the query column (None: plain text)
    lines: int  # non-blank queries read
    blank: int  # blank lines or empty cells, skipped
    failed_column: str | None
    conversation_column: str | None
    queries: list[LogQuery]
    exact_folded: int  # lines folded into an earlier identical query
    near_groups: int  # groups that hold more than one spelling

    @property
    def distinct(self) -> int:
        return len(self.queries)


# ------------------------------------------------------------------------------------------------ reading


def _fmt_of(path: Path, text: str) -> str:
    fmt = _SUFFIX.get(path.suffix.lower())
    if fmt is not None:
        return fmt
    for line in text.split("\n", 50):
        if line.strip():
            return "jsonl" if line.lstrip().startswith("{") else "text"
    return "text"


def _decode(path: Path) -> str:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError(path, "no such log file") from None
    except IsADirectoryError:
        raise InputError(path, "is a folder; expected a query log (CSV, TSV, JSONL or text, one query a line)") from None
    except OSError as err:
        raise InputError(path, f"cannot read: {err.strerror}") from None
    nul = data.find(b"\0", 0, 1 << 16)
    if nul >= 0:
        raise InputError(path, f"not a text file (a NUL byte at byte {nul}); expected a query log: CSV, TSV, JSONL "
                               "or plain text, one query a line")
    if data.startswith(BOM):
        data = data[len(BOM):]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        raise InputError(path, f"not UTF-8 text (byte {err.start}); expected a query log: CSV, TSV, JSONL or plain "
                               "text, one query a line", line) from None


def _table(path: Path, fmt: str, text: str) -> pl.DataFrame:
    """Every field as a string (an id column of digits stays as written)."""
    if fmt in ("csv", "tsv"):
        try:
            return pl.read_csv(io.BytesIO(text.encode()), separator="," if fmt == "csv" else "\t", infer_schema=False,
                               quote_char='"' if fmt == "csv" else None)
        except (pl.exceptions.ComputeError, pl.exceptions.NoDataError) as err:
            first = str(err).strip().split("\n")[0]
            raise InputError(path, f"cannot read it as {fmt.upper()} ({first}); expected a header line and one "
                                   "query a row") from None
    rows = [{k: (v if isinstance(v, str) or v is None else json.dumps(v, ensure_ascii=False)) for k, v in row.items()}
            for _, row in json_objects(path, text, "one JSON object a line")]
    names = list(dict.fromkeys(k for r in rows for k in r))
    return pl.DataFrame({k: [r.get(k) for r in rows] for k in names}, schema={k: pl.String for k in names})


def _pick(columns: list[str], names: tuple[str, ...]) -> str | None:
    lower = {c.strip().lower(): c for c in reversed(columns)}
    for name in names:
        if name in lower:
            return lower[name]
    return None


def _query_column(path: Path, df: pl.DataFrame, asked: str | None) -> str:
    columns = df.columns
    if asked is not None:
        if asked not in columns:
            raise InputError(path, f"no column {asked!r}; the columns are: {', '.join(map(repr, columns))}")
        return asked
    named = _pick(columns, QUERY_NAMES)
    if named is not None:
        return named
    # a column whose values read as text: most have a letter and a space
    share = df.select(pl.col(c).str.contains(r"\p{L}.*\s|\s.*\p{L}").mean() for c in columns).row(0)
    wordy = [c for c, s in zip(columns, share) if (s or 0) >= 0.5]
    if len(wordy) == 1:
        return wordy[0]
    said = ", ".join(map(repr, wordy or columns))
    raise InputError(path, f"cannot tell which column holds the queries ({said}); name it with --column")


def _failed_flag(df: pl.DataFrame) -> tuple[str | None, pl.Expr | None]:
    col = _pick(df.columns, FAILED_NAMES)
    values = lambda c: pl.col(c).fill_null("").str.strip_chars().str.to_lowercase()  # noqa: E731
    if col is not None:
        return col, values(col).is_in(list(_TRUE))
    col = _pick(df.columns, SUCCESS_NAMES)
    if col is not None:
        return col, values(col).is_in(["false", "0", "no", "n", "f"])
    col = _pick(df.columns, OUTCOME_NAMES)
    if col is not None and df.select(values(col).is_in(list(FAIL_WORDS)).any()).item():
        return col, values(col).is_in(list(FAIL_WORDS))
    return None, None


def read_log(path: Path, column: str | None = None) -> tuple[pl.DataFrame, dict]:
    """The log as rows `first` (line or row number), `text`, `failed`, `conv`, and what was found in it."""
    path = Path(path)
    text = _decode(path)
    if not text.strip(" \t\r\n" + BOM_CHAR):
        raise InputError(path, "the log is empty; expected one query a line (or CSV, TSV, JSONL with a query column)")
    fmt = _fmt_of(path, text)
    info = {"fmt": fmt, "column": None, "failed_column": None, "conversation_column": None}
    if fmt == "text":
        if column is not None:
            raise UsageError(f"--column {column}: {path} is plain text (one query a line), it has no columns")
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        df = pl.DataFrame({"text": lines}, schema={"text": pl.String}).with_columns(
            pl.col("text").str.strip_suffix("\r"))
        df = df.with_row_index("first", offset=1).with_columns(failed=pl.lit(False), conv=pl.lit(None, pl.String))
        return df, info
    table = _table(path, fmt, text)
    if not table.width:
        raise InputError(path, f"no columns; expected a {fmt.upper()} log with a query column")
    col = info["column"] = _query_column(path, table, column)
    failed_col, failed = _failed_flag(table)
    conv_col = _pick(table.columns, CONVERSATION_NAMES)
    info["failed_column"], info["conversation_column"] = failed_col, conv_col
    offset = 2 if fmt in ("csv", "tsv") else 1  # a CSV's first row is on line 2 (its header on 1)
    df = table.select(
        pl.col(col).alias("text"),
        (failed if failed is not None else pl.lit(False)).alias("failed"),
        (pl.col(conv_col) if conv_col is not None and conv_col != col else pl.lit(None, pl.String)).alias("conv"),
    ).with_row_index("first", offset=offset)
    return df, info


# ------------------------------------------------------------------------------------------------ folding


def _norm(expr: pl.Expr) -> pl.Expr:
    """Case, white space and punctuation do not tell queries apart (for comparison only)."""
    return expr.str.normalize("NFKC").str.to_lowercase().str.replace_all(_PUNCT, " ").str.strip_chars()


def _signature(norm: pl.Expr, stem: bool) -> pl.Expr:
    """The set of a query's words, stop words left out (and with `stem` a plural s dropped), sorted: rewordings
    meet here. Slips are looked for without the stemming (which would cut "subproces" to "subproce")."""
    word = pl.element()
    kept = word.str.replace(r"^(\w{2,})ies$", "${1}y").str.replace(r"^(\w{2,}[^sui\d])s$", "${1}") if stem else word
    words = norm.str.split(" ").list.eval(kept.filter(~word.is_in(STOP_WORDS) & (word != ""))).list.unique().list.sort()
    sig = words.list.join(" ")
    return pl.when(sig == "").then(norm).otherwise(sig)


def _slip_pairs(sigs: pl.DataFrame) -> pl.DataFrame:
    """Pairs of signatures (`sid`) that differ by one slip in one word of MIN_SLIP_WORD letters or more: both
    give the same key — the other words, and the word with one letter left out (or, for the shorter of the
    two, as it is)."""
    words = (sigs.select("sid", word=pl.col("sig").str.split(" "))
             .with_columns(n=pl.col("word").list.len())
             .explode("word")
             .with_columns(length=pl.col("word").str.len_chars(),
                           at=pl.int_range(pl.len()).over("sid")))
    sig_len = sigs.select("sid", "sig")
    words = (words.join(sig_len, on="sid")
             .with_columns(start=(pl.col("length") + 1).cum_sum().over("sid") - pl.col("length") - 1)
             .filter((pl.col("length") >= MIN_SLIP_WORD - 1) & pl.col("word").str.contains(r"^\p{L}+$"))
             .with_columns(rest=pl.col("sig").str.slice(0, pl.col("start")) + "\x1f"
                           + pl.col("sig").str.slice(pl.col("start") + pl.col("length") + 1)))
    whole = words.select("sid", key=pl.col("rest") + "\x1e" + pl.col("word"))
    dropped = (words.filter(pl.col("length") >= MIN_SLIP_WORD)
               .with_columns(i=pl.int_ranges(0, pl.col("length"))).explode("i")
               .select("sid", key=pl.col("rest") + "\x1e" + pl.col("word").str.slice(0, pl.col("i"))
                       + pl.col("word").str.slice(pl.col("i") + 1)))
    keys = pl.concat([whole, dropped]).unique()
    shared = keys.group_by("key").agg(pl.col("sid")).filter(pl.col("sid").list.len() > 1)
    return shared.select(a=pl.col("sid").list.first(), b=pl.col("sid").list.slice(1)).explode("b")


def _components(n: int, pairs: list[tuple[int, int]]) -> list[int]:
    """Union-find: each of n items -> the smallest item of its group."""
    parent = list(range(n))

    def root(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in pairs:
        ra, rb = root(a), root(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    return [root(x) for x in range(n)]


def _ids(keys: list[str], taken: set[str]) -> list[str]:
    """q + 8 hex digits of the key's sha256; 12, then 16, … where two keys (or an id already taken) would clash."""
    digests = [hashlib.sha256(k.encode()).hexdigest() for k in keys]
    width = {i: 8 for i in range(len(keys))}
    while True:
        seen: dict[str, list[int]] = {}
        for i, d in enumerate(digests):
            seen.setdefault("q" + d[: width[i]], []).append(i)
        clash = [i for qid, group in seen.items() if len(group) > 1 or qid in taken for i in group]
        if not clash:
            return ["q" + d[: width[i]] for i, d in enumerate(digests)]
        for i in clash:
            width[i] += 4


def fold(path: Path, df: pl.DataFrame, info: dict, taken_ids: set[str] = frozenset()) -> QueryLog:
    """Exact duplicates, near-duplicates and follow-ups folded (see the module's docstring)."""
    rows = df.with_columns(pl.col("text").fill_null(""))
    blank = rows.filter(pl.col("text").str.strip_chars() == "").height
    rows = rows.filter(pl.col("text").str.strip_chars() != "")
    if not rows.height:
        raise InputError(path, "no query in the log (every line or cell is blank); expected one query a line")
    # folded once per distinct spelling, not per line (0.45 s -> 0.05 s on a 100,000-line log of 10,000 spellings)
    norm = _norm(pl.col("text"))
    spellings = rows.select(pl.col("text").unique()).with_columns(
        norm=pl.when(norm == "").then(pl.col("text").str.strip_chars()).otherwise(norm))
    spellings = spellings.with_columns(
        leans=pl.col("norm").str.contains(_FOLLOW_OPENERS) | pl.col("norm").str.contains(_FOLLOW_WORDS))
    rows = rows.join(spellings, on="text", how="left", maintain_order="left")
    if info.get("conversation_column"):
        # the query before, in the same conversation: one stable sort by conversation (a shift `over` it was
        # 0.2 s a column on 100,000 lines)
        rows = rows.sort("conv", maintain_order=True, nulls_last=True)
        same = pl.col("conv").is_not_null() & (pl.col("conv") == pl.col("conv").shift(1))
        follow = same & pl.col("leans")
        rows = (rows.with_columns(context=pl.when(follow).then(pl.col("text").shift(1)),
                                  context_norm=pl.when(follow).then(pl.col("norm").shift(1)))
                .sort("first"))
    else:
        rows = rows.with_columns(context=pl.lit(None, pl.String), context_norm=pl.lit(None, pl.String))
    rows = rows.with_columns(key=pl.when(pl.col("context_norm").is_not_null())
                             .then(pl.col("context_norm") + "\n" + pl.col("norm")).otherwise(pl.col("norm")))
    exact = (rows.group_by("key", maintain_order=True)
             .agg(pl.col("text").first(), pl.col("first").first(), pl.len().alias("count"),
                  pl.col("failed").any(), pl.col("context").first(), pl.col("norm").first())
             .with_row_index("eid"))
    # near-duplicates: among queries that stand on their own (a follow-up folds only exactly)
    alone = exact.filter(~pl.col("key").str.contains("\n"))
    alone = alone.with_columns(stem=_signature(pl.col("norm"), True), sig=_signature(pl.col("norm"), False))
    sigs = alone.select("sig").unique(maintain_order=True).with_row_index("sid")
    alone = alone.join(sigs, on="sig", how="left").with_row_index("node")
    # one node a standing-alone query; linked when their stemmed word sets are equal or their words differ by a slip
    same = alone.group_by("stem").agg(a=pl.col("node").first(), b=pl.col("node").slice(1)).explode("b").drop_nulls("b")
    first_of = alone.group_by("sid").agg(pl.col("node").first())
    slips = (_slip_pairs(sigs).join(first_of, left_on="a", right_on="sid").rename({"node": "na"})
             .join(first_of, left_on="b", right_on="sid").rename({"node": "nb"}))
    pairs = list(zip(same["a"].to_list(), same["b"].to_list())) + list(zip(slips["na"].to_list(), slips["nb"].to_list()))
    root = _components(alone.height, pairs)
    group_of = dict(zip(alone["eid"].to_list(), root))
    exact = exact.with_columns(group=pl.col("eid").replace_strict(group_of, default=None, return_dtype=pl.Int64))
    exact = exact.with_columns(group=pl.coalesce("group", -1 - pl.col("eid")))  # a follow-up: a group of its own
    # the group's text: its most frequent spelling, the earliest on a tie
    exact = exact.sort(["group", "count", "first"], descending=[False, True, False])
    groups = (exact.group_by("group", maintain_order=True)
              .agg(pl.col("key").first(), pl.col("text").first(), pl.col("count").sum().alias("total"),
                   pl.col("first").min(), pl.col("failed").any(), pl.col("context").first(),
                   pl.col("text").slice(1).alias("variants"), pl.col("count").slice(1).alias("variant_counts"))
              .sort("first"))
    ids = _ids(groups["key"].to_list(), set(taken_ids))
    queries = [LogQuery(qid, text, total, first, list(zip(v, vc)), failed, context, key)
               for qid, (key, text, total, first, failed, context, v, vc) in zip(ids, groups.select(
                   "key", "text", "total", "first", "failed", "context", "variants", "variant_counts").iter_rows())]
    near = sum(1 for q in queries if q.variants)
    return QueryLog(path, info["fmt"], info["column"], rows.height, blank, info["failed_column"],
                    info["conversation_column"], queries, rows.height - exact.height, near)


# ------------------------------------------------------------------------------------------------ sampling


def band(count: int) -> int:
    """A query's frequency band: 0 for 1, 1 for 2-3, 2 for 4-7, … (powers of two)."""
    return int(math.log2(count)) if count >= 1 else 0


def sample(queries: list[LogQuery], n: int, seed: int) -> tuple[list[LogQuery], dict[int, tuple[int, int]]]:
    """N queries, every failed one kept, the rest shared evenly across frequency bands and drawn with the seed
    (module docstring). Returns them in the log's order and, per band, (taken, there)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    failed = [q for q in queries if q.failed]
    rest = [q for q in queries if not q.failed]
    bands: dict[int, list[LogQuery]] = {}
    for q in rest:
        bands.setdefault(band(q.count), []).append(q)
    slots = max(0, n - len(failed))
    share = {b: 0 for b in bands}
    open_bands = sorted(bands, key=lambda b: (len(bands[b]), b))
    while slots and open_bands:  # even shares; a band that runs out gives its rest to the others
        each, extra = divmod(slots, len(open_bands))
        given = 0
        for i, b in enumerate(sorted(open_bands, key=lambda b: -b)):  # the rarer bands get a remainder first
            want = each + (1 if i >= len(open_bands) - extra else 0)
            take = min(want, len(bands[b]) - share[b])
            share[b] += take
            given += take
        slots -= given
        open_bands = [b for b in open_bands if share[b] < len(bands[b])]
        if not given:
            break
    chosen = {id(q) for q in failed}
    for b, members in bands.items():
        if share[b]:
            for i in rng.choice(len(members), size=share[b], replace=False):
                chosen.add(id(members[int(i)]))
    kept_failed: dict[int, int] = {}
    for q in failed:
        kept_failed[band(q.count)] = kept_failed.get(band(q.count), 0) + 1
    counts = {b: (share.get(b, 0) + kept_failed.get(b, 0), len(bands.get(b, [])) + kept_failed.get(b, 0))
              for b in sorted(set(bands) | set(kept_failed))}
    return [q for q in queries if id(q) in chosen], counts


# ------------------------------------------------------------------------------------------------ writing


def entry_of(q: LogQuery, source: str) -> tuple[list[tuple[str, object]], list[str]]:
    """The keys of its own a query from a log carries (count, source, variants, context), and its tags."""
    extra: list[tuple[str, object]] = [("count", q.count), ("source", source)]
    if q.variants:
        extra.append(("variants", dict(q.variants)))
    if q.context is not None:
        extra.append(("context", q.context))
    tags = (["follow-up"] if q.context is not None else []) + (["failed"] if q.failed else [])
    return extra, tags


def render(queries: list[LogQuery], source: str, note: str, corpus: tuple[str, str] | None = None) -> str:
    """A fresh label file: a comment saying where it came from, then every query as a block entry."""
    from ragdiff.core.labels.edits import SpanEdits, yaml_id
    from ragdiff.core.labels.yaml_edits import block_entry, entry_fields

    ed = SpanEdits("", "yaml", None)
    head = ["# ragdiff label file started by `ragdiff labels init` from " + _one_line(f"{source}: {note}"),
            "# every query is unjudged: ragdiff judge (or review) fills gold, evidence and not_relevant.",
            "# count: its lines in the log; variants: the other spellings folded into it, with their lines."]
    if corpus is not None:
        head.append(f"corpus: {{path: {yaml_id(corpus[0])}, sha256: {corpus[1]}}}")
    head.append("queries:")
    body, quoted = [], []
    for q in queries:
        extra, tags = entry_of(q, source)
        fields = entry_fields(ed, q.id, q.text, q.failed, tags, extra)
        body.append(block_entry("  - ", fields, "\n"))
        written = dict(fields)
        quoted.extend((written[k], v) for k, v in (("text", q.text), ("context", q.context))
                      if v is not None and written[k][:1] in "'\"")
        quoted.extend((yaml_id(t, '"'), t) for t, _ in q.variants)
    _check_quoted(quoted)
    return "\n".join(head + body) + "\n"


def _check_quoted(pairs: list[tuple[str, str]]) -> None:
    """Every quoted text must read back as itself (a plain one is written only where the writer's own rule
    says YAML reads it as the same string). Read in one go, as one YAML list: ValueError on the first that does
    not (nothing is written then)."""
    import yaml

    if not pairs:
        return
    loader = getattr(yaml, "CBaseLoader", yaml.BaseLoader)
    back = yaml.load("[" + ", ".join(w for w, _ in pairs) + "]", Loader=loader)
    for (written, want), got in zip(pairs, back):
        if got != want:
            raise ValueError(f"the query {want!r} would not read back as written; nothing was written")
    if len(back) != len(pairs):
        raise ValueError("the queries would not read back as written; nothing was written")


def _one_line(text: str) -> str:
    return " ".join(text.split())


# ------------------------------------------------------------------------------------------------ reporting


def folded_keys(q: LogQuery) -> set[str]:
    """The folded texts a query stands for: its own and its variants'."""
    return known_keys([q.text, *(t for t, _ in q.variants)])


def known_keys(texts: list[str]) -> set[str]:
    """The folded texts of these queries (what `labels add --from` skips)."""
    return set(fold_texts(texts))


def fold_texts(texts: list[str]) -> list[str]:
    """Each text folded for comparison (case, white space, punctuation), in order."""
    return pl.DataFrame({"t": texts}, schema={"t": pl.String}).select(_norm(pl.col("t")))["t"].to_list()


def make_ids(keys: list[str], taken: set[str]) -> list[str]:
    """The ids of queries with these folded texts, as `labels init` gives them (module docstring)."""
    return _ids(keys, set(taken))


def _n(n: int, word: str, plural: str | None = None) -> str:
    return f"{n:,} {word if n == 1 else (plural or word + 's')}"


def summary(log: QueryLog) -> str:
    what = {"csv": "CSV", "tsv": "TSV", "jsonl": "JSONL", "text": "text"}[log.fmt]
    where = f"{what}, column {log.column!r}" if log.column is not None else what
    parts = [f"{log.path} ({where}): {_n(log.lines, 'query line')}"
             + (f" (and {_n(log.blank, 'blank line')} skipped)" if log.blank else ""),
             f"{_n(log.distinct, 'query', 'queries')} after folding {_n(log.exact_folded, 'exact duplicate')}"
             f" and {_n(log.near_groups, 'near-duplicate group')}"]
    if log.distinct == 1:
        parts.append("every line is the same query")
    failed = sum(q.failed for q in log.queries)
    if log.failed_column is not None:
        parts.append(f"{_n(failed, 'failed query', 'failed queries')} (column {log.failed_column!r}), always kept")
    if log.conversation_column is not None:
        follow = sum(q.context is not None for q in log.queries)
        parts.append(f"{_n(follow, 'follow-up')} with its context (column {log.conversation_column!r})")
    return "; ".join(parts)


def sample_sentence(n: int, seed: int, chosen: list[LogQuery], bands: dict[int, tuple[int, int]]) -> str:
    spread = ", ".join(f"{_band_name(b)}: {took} of {there}" for b, (took, there) in bands.items())
    extra = f" (the failed ones alone are {len(chosen)})" if len(chosen) > n else ""
    return f"sampled {len(chosen)} with seed {seed}{extra}, by lines in the log: {spread}"


def _band_name(b: int) -> str:
    return "1 line" if b == 0 else f"{2 ** b}-{2 ** (b + 1) - 1} lines"


def group_lines(log: QueryLog, limit: int = 20) -> list[str]:
    """The near-duplicate groups, in words: the spelling kept, then the variants folded into it."""
    groups = [q for q in log.queries if q.variants]
    if not groups:
        return []
    out = [f"near-duplicate groups ({len(groups)}; each written with its variants):"]
    for q in groups[:limit]:
        variants = ", ".join(f"{t!r} ({c})" for t, c in q.variants[:3])
        if len(q.variants) > 3:
            variants += f" and {len(q.variants) - 3} more"
        out.append(f"  {q.id} {q.text!r} ({q.count - sum(c for _, c in q.variants)}) <- {variants}")
    if len(groups) > limit:
        out.append(f"  ... {len(groups) - limit} more (variants: in the file)")
    return out
