"""`ragdiff report`: one self-contained HTML page that parses, references nothing outside itself, and shows
text from files as data."""

import html
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from ragdiff.cli.main import main
from ragdiff.core import vocab
from test_diff import case

SAMPLE = Path(__file__).resolve().parent.parent / "sample_runs"
VOID = {"meta", "br", "hr", "img", "input", "link", "area", "base", "col", "embed", "source", "track", "wbr"}
SVG_LEAVES = {"rect", "line", "polyline", "circle", "path"}  # written with a closing tag or self-closed


class Page(HTMLParser):
    """Collects tags, attributes and text; checks every element is closed in order."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.errors, self.tags, self.attrs, self.text = [], [], [], [], []
        self.raw = {"style": [], "script": []}
        self.current = None
        self.articles: list[dict] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs += [(tag, k, v) for k, v in attrs]
        a = dict(attrs)
        if tag == "article":
            self.articles.append({"id": a.get("id"), "text": [], "sides": 0})
        if tag == "div" and a.get("class") == "side" and self.articles:
            self.articles[-1]["sides"] += 1
        if tag in self.raw:
            self.current = tag
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs += [(tag, k, v) for k, v in attrs]

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1] if self.stack else 'nothing'}")
            return
        self.stack.pop()
        self.current = None

    def handle_data(self, data):
        if self.current:
            self.raw[self.current].append(data)
        else:
            self.text.append(data)
            if self.articles:
                self.articles[-1]["text"].append(data)


def parse(text: str) -> Page:
    page = Page()
    page.feed(text)
    page.close()
    return page


def report(tmp_path, capsys, *runs, corpus=True, extra=()):
    out = tmp_path / "diff.html"
    files = [SAMPLE / f"{r}.jsonl" for r in runs]
    argv = ["report", *map(str, files), "--gold", str(SAMPLE / "gold.yaml"), "-o", str(out), *extra]
    if corpus:
        argv += ["--corpus", str(SAMPLE / "corpus.jsonl")]
    code = main(argv)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return out.read_text(encoding="utf-8"), captured


def json_doc(capsys, *runs):
    files = [str(SAMPLE / f"{r}.jsonl") for r in runs]
    assert main(["diff", *files, "--gold", str(SAMPLE / "gold.yaml"), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def assert_self_contained(text: str, page: Page) -> None:
    for tag, name, value in page.attrs:
        if name in ("href", "src", "action", "srcset", "poster", "data", "xlink:href", "formaction"):
            assert value is not None and value.startswith("#"), (tag, name, value)
        assert not (value or "").lower().startswith(("http:", "https:", "//", "javascript:")), (tag, name, value)
    assert not {"link", "img", "iframe", "object", "embed", "base", "source"} & set(page.tags)
    for kind in ("style", "script"):
        body = "".join(page.raw[kind]).lower()
        assert "url(" not in body and "@import" not in body and "http" not in body and "fetch(" not in body


def test_report_parses_and_references_no_external_url(tmp_path, capsys):
    text, captured = report(tmp_path, capsys, "bm25", "dense")
    page = parse(text)
    assert not page.errors and not page.stack, (page.errors, page.stack)
    assert text.startswith("<!DOCTYPE html>")
    assert_self_contained(text, page)
    assert page.tags.count("script") == 1 and page.tags.count("style") == 1
    assert "wrote" in captured.out


def test_report_shows_every_flipped_query_side_by_side(tmp_path, capsys):
    text, _ = report(tmp_path, capsys, "bm25", "dense")
    doc = json_doc(capsys, "bm25", "dense")
    page = parse(text)
    flipped = doc["flips"]["hit_to_miss"] + doc["flips"]["miss_to_hit"]
    assert len(page.articles) == len(flipped)
    for article, qid in zip(page.articles, flipped):
        assert article["sides"] == 2
        assert qid in "".join(article["text"])
    # the metric table: one row per metric in the document, the verdict words beside it
    for name, m in doc["metrics"].items():
        assert re.search(rf'<td class="id">{re.escape(name)}</td>.*?{re.escape(m["verdict_words"])}</td>', text)
    for m in doc["metrics"].values():  # the smallest detectable change, a click away
        assert f"<li>{html.escape(m['noise'])}</li>" in text
    # which k: one line per run, as an inline SVG
    assert page.tags.count("svg") >= 1 and page.tags.count("polyline") == 2


def test_report_marks_labels_with_the_vocabulary_and_holds_chunk_text(tmp_path, capsys):
    from ragdiff.core.io.corpus import Corpus
    from ragdiff.core.labels.gold import load_gold

    text, _ = report(tmp_path, capsys, "bm25", "dense")
    gold = load_gold(SAMPLE / "gold.yaml")
    labels = {(q, c): (level, grade) for q, c, grade, level in
              gold.judgments.select("query_id", "chunk_id", "grade", "level").iter_rows()}
    corpus = Corpus(SAMPLE / "corpus.jsonl")
    row = re.compile(r'<span class="rank">([^<]*)</span><span class="glyph" title="([^"]*)">([^<]*)</span>'
                     r'<span class="id">([^<]*)</span>.*?<div class="chunk">(.*?)</div>', re.S)
    seen_kinds = set()
    for article in re.findall(r'<article class="query".*?</article>', text, re.S):
        qid = html.unescape(re.search(r'<span class="id">([^<]*)</span>', article).group(1))
        rows = row.findall(article)
        assert rows
        for rank, word, glyph, chunk, body in rows:
            chunk = html.unescape(chunk)
            level, grade = labels.get((qid, chunk), (None, None))
            assert html.unescape(glyph) == vocab.glyph(level, grade), (qid, chunk)
            assert html.unescape(word) == vocab.word(level, grade), (qid, chunk)
            seen_kinds.add(vocab.kind_of(level).name)
            # the chunk's text is there, a click away, escaped
            want = corpus.get(chunk).text[:200]
            assert want.replace("\r\n", "\n") in html.unescape(body) or not want.strip(), (qid, chunk)
    assert {"gold", "not_relevant"} <= seen_kinds
    assert text.count("<details>") >= 11 * 5 * 2


def test_report_without_a_corpus_says_so(tmp_path, capsys):
    # the sample gold file names its corpus beside it; a copy elsewhere without it has no text to show
    gold = tmp_path / "gold.yaml"
    gold.write_text((SAMPLE / "gold.yaml").read_text())
    out = tmp_path / "r.html"
    code = main(["report", str(SAMPLE / "bm25.jsonl"), str(SAMPLE / "dense.jsonl"), "--gold", str(gold),
                 "-o", str(out)])
    captured = capsys.readouterr()
    assert code == 0
    assert "no corpus" in captured.out
    assert "(no text: no corpus given)" in out.read_text()


def test_report_escapes_text_from_files(tmp_path, capsys):
    nasty = '<script>alert("q")</script><img src=x onerror=alert(1)>'
    a, b, gold = case(tmp_path, 4, lambda i: 1, lambda i: None, texts={"q01": nasty})
    corpus = tmp_path / "corpus.jsonl"
    lines = [{"id": f"g{i}", "title": "<b>t</b>", "text": f"</details></li><script>alert({i})</script> & more"}
             for i in range(1, 5)]
    lines += [{"id": f"x{i}-{r}", "text": "<style>body{background:url(http://evil)}</style>"}
              for i in range(1, 5) for r in range(1, 11)]
    corpus.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    out = tmp_path / "r.html"
    code = main(["report", str(a), str(b), "--gold", str(gold), "--corpus", str(corpus), "-o", str(out)])
    capsys.readouterr()
    assert code == 0
    text = out.read_text()
    page = parse(text)
    assert not page.errors and not page.stack
    assert page.tags.count("script") == 1 and page.tags.count("style") == 1 and "img" not in page.tags
    assert_self_contained(text, page)
    data = "".join(page.text)
    assert nasty in data
    assert "</details></li><script>alert(1)</script> & more" in data
    assert "<b>t</b>" in data


def test_report_takes_several_runs(tmp_path, capsys):
    text, _ = report(tmp_path, capsys, "bm25", "dense", "rrf")
    doc = json_doc(capsys, "bm25", "dense", "rrf")
    page = parse(text)
    assert not page.errors
    assert page.tags.count("polyline") == 3
    assert "Holm-adjusted across 2 runs × 7 metrics" in text
    flipped = sum(len(r["flips"]["hit_to_miss"]) + len(r["flips"]["miss_to_hit"]) for r in doc["runs"])
    assert len(page.articles) == flipped
    assert "rrf vs baseline bm25" in text and "dense vs baseline bm25" in text


def test_report_to_a_missing_folder_is_bad_input(tmp_path, capsys):
    code = main(["report", str(SAMPLE / "bm25.jsonl"), str(SAMPLE / "dense.jsonl"), "--gold",
                 str(SAMPLE / "gold.yaml"), "-o", str(tmp_path / "nowhere" / "r.html")])
    err = capsys.readouterr().err
    assert code == 2 and "nowhere" in err and "does not exist" in err
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("which", ["gold", "run", "corpus"])
def test_report_never_writes_over_one_of_its_inputs(tmp_path, capsys, which):
    import shutil

    for name in ("gold.yaml", "bm25.jsonl", "dense.jsonl", "corpus.jsonl"):
        shutil.copy(SAMPLE / name, tmp_path / name)
    target = tmp_path / {"gold": "gold.yaml", "run": "dense.jsonl", "corpus": "corpus.jsonl"}[which]
    before = target.read_bytes()
    code = main(["report", str(tmp_path / "bm25.jsonl"), str(tmp_path / "dense.jsonl"), "--gold",
                 str(tmp_path / "gold.yaml"), "--corpus", str(tmp_path / "corpus.jsonl"), "-o", str(target)])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and "input" in err
    assert target.read_bytes() == before
