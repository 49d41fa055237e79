"""A run's order is trec_eval's: by query, score descending, ties by chunk id in descending byte order; rank is
the position inside the query. core/io/run_order.py gets there with numpy sorts of u64 keys and a second sort of the
tied rows only; these tests hold it to a plain sort, on runs where most scores tie."""

from __future__ import annotations

import random

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragdiff.core.errors import InputError
from ragdiff.core.io.runs import RUN_SCHEMA, load_run, ordered_frame
from tests.counts import count

# ids whose byte order differs from their numeric or case order, a prefix of another, non-ASCII
QUERIES = ["q1", "q10", "q2", "Q1", "q", "é", "e", "z", "q1 x", "10"]
CHUNKS = ["a", "b", "c", "aa", "ab", "B", "c#0", "c#1", "d10", "d9", "é", "ä", "doc-1", "doc_1", "z"]
# few distinct scores, so most rows tie; -0.0 ties with 0.0; the smallest subnormal; signs mixed
SCORES = [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, -2.5, 5e-324, -5e-324, 1e300, -1e300, 3.25]


def expected_order(rows: list[tuple[str, str, float, int]]) -> list[tuple[str, str, int, int]]:
    """(query, chunk, rank, line) by a plain Python sort: chunk id descending first, then (query, -score) —
    Python's sort is stable, so the chunk order survives inside equal (query, score)."""
    by_chunk = sorted(rows, key=lambda r: r[1].encode(), reverse=True)
    ordered = sorted(by_chunk, key=lambda r: (r[0].encode(), -r[2]))
    out, rank, previous = [], 0, None
    for query, chunk, _, line in ordered:
        rank = rank + 1 if query == previous else 1
        previous = query
        out.append((query, chunk, rank, line))
    return out


@st.composite
def runs(draw):
    rows = []
    for query in draw(st.lists(st.sampled_from(QUERIES), min_size=1, max_size=6, unique=True)):
        for chunk in draw(st.lists(st.sampled_from(CHUNKS), min_size=1, max_size=len(CHUNKS), unique=True)):
            rows.append([query, chunk, draw(st.sampled_from(SCORES))])
    order = draw(st.permutations(range(len(rows))))
    return [(*rows[i], line) for line, i in enumerate(order, start=1)]


def frame_of(rows) -> pl.DataFrame:
    return pl.DataFrame([(q, c, s, 0, line) for q, c, s, line in rows], schema=RUN_SCHEMA, orient="row")


def got_order(frame: pl.DataFrame) -> list[tuple[str, str, int, int]]:
    return list(frame.select("query_id", "chunk_id", "rank", "line").iter_rows())


@settings(max_examples=count("RAGDIFF_PROPERTY_EXAMPLES"), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(runs())
def test_order_is_a_plain_sort_by_query_score_descending_chunk_descending(rows):
    ordered = ordered_frame(None, frame_of(rows), True)
    assert ordered.schema == pl.Schema(RUN_SCHEMA)
    assert got_order(ordered) == expected_order(rows)
    # the scores travel with their rows
    score_of = {line: s for _, _, s, line in rows}
    assert ordered.get_column("score").to_list() == [score_of[line] for line in ordered.get_column("line")]


@settings(max_examples=max(20, count("RAGDIFF_PROPERTY_EXAMPLES") // 4), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(runs())
def test_a_trec_file_loads_in_the_plain_sort_order(tmp_path_factory, rows):
    """The same through the file reader: the lines in the file's order, scores written as Python reads them."""
    path = tmp_path_factory.mktemp("run") / "run.trec"
    path.write_text("".join(f"{q.replace(' ', '_')} Q0 {c} 0 {s!r} tag\n" for q, c, s, _ in rows), encoding="utf-8")
    written = [(q.replace(" ", "_"), c, s, line) for q, c, s, line in rows]
    assert got_order(load_run(path).frame) == expected_order(written)


def test_a_large_run_with_many_ties_matches_polars_three_column_sort():
    """Enough rows for numpy's sorts to take their vectorised paths: 300 queries × 300 chunks, 4 distinct
    scores (so nearly every row ties), queries and chunks shuffled."""
    rng = random.Random(12)
    rows = [(f"q{q}", f"c{rng.randrange(10**6):06d}-{i}", float(rng.randrange(4)) - 1.5, 0)
            for q in range(300) for i in range(300)]
    rng.shuffle(rows)
    frame = pl.DataFrame([(*r[:3], 0, line) for line, r in enumerate(rows, 1)], schema=RUN_SCHEMA, orient="row")
    plain = frame.sort(["query_id", "score", "chunk_id"], descending=[False, True, True]).with_columns(
        rank=pl.int_range(1, pl.len() + 1, dtype=pl.UInt32).over("query_id"))
    assert ordered_frame(None, frame, True).equals(plain)


def test_no_ties_at_all_is_the_same_plain_sort():
    rng = random.Random(3)
    rows = [(f"q{rng.randrange(50)}", f"c{i}", rng.random(), i + 1) for i in range(20_000)]
    assert got_order(ordered_frame(None, frame_of(rows), True)) == expected_order(rows)


@pytest.mark.parametrize("keep_first", [False, True])
def test_a_repeated_chunk_is_found_among_many_rows(tmp_path, keep_first):
    """The repeat check hashes (query, chunk) pairs: a repeat far apart in a big file is still found, and
    --keep-first keeps the first line of it."""
    lines = [f"q{i % 97} Q0 c{i} 0 {i % 7}.5 t\n" for i in range(50_000)]
    lines.append("q3 Q0 c100 0 9.0 t\n")  # c100 is query 100 % 97 = 3's already, on line 101
    path = tmp_path / "run.trec"
    path.write_text("".join(lines))
    if keep_first:
        run = load_run(path, keep_first=True)
        assert run.frame.height == 50_000
        kept = run.frame.filter((pl.col("query_id") == "q3") & (pl.col("chunk_id") == "c100"))
        assert kept.get_column("line").to_list() == [101]
    else:
        with pytest.raises(InputError) as err:
            load_run(path)
        assert err.value.line == 50_001
        assert "'c100' appears twice for query 'q3' (lines 101 and 50001)" in str(err.value)


def test_ordering_takes_the_columns_out_of_the_frame_it_orders():
    """ordered_frame gathers a column at a time and lets the unordered one go (a million-line run is not held
    twice while it is ordered): the frame handed in is left without columns, the ordered one is whole."""
    rng = random.Random(4)
    rows = [(f"q{rng.randrange(20)}", f"c{i}", float(rng.randrange(5)), i + 1) for i in range(2_000)]
    frame = frame_of(rows).with_columns(pl.col("query_id").cast(pl.Categorical))
    ordered = ordered_frame(None, frame, True)
    assert frame.width == 0
    assert got_order(ordered) == expected_order(rows)


def test_more_queries_than_one_radix_digit_holds():
    """Past 65,536 queries the query's place takes two 16-bit digits (two stable radix passes, the low one
    first): ids chosen so that their byte order differs from the order they are first seen in."""
    rng = random.Random(8)
    queries = [f"q{n:09d}" for n in rng.sample(range(10**9), 70_000)]
    rows = [(q, f"c{j}", float(rng.randrange(3)), 0) for q in queries for j in range(2)]
    rng.shuffle(rows)
    frame = pl.DataFrame([(*r[:3], 0, line) for line, r in enumerate(rows, 1)], schema=RUN_SCHEMA, orient="row")
    plain = frame.sort(["query_id", "score", "chunk_id"], descending=[False, True, True]).with_columns(
        rank=pl.int_range(1, pl.len() + 1, dtype=pl.UInt32).over("query_id"))
    assert ordered_frame(None, frame, True).equals(plain)


def _plain_sort(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.sort(["query_id", "score", "chunk_id"], descending=[False, True, True]).with_columns(
        rank=pl.int_range(1, pl.len() + 1, dtype=pl.UInt32).over("query_id"))


@pytest.mark.parametrize("block", [1, 3, 64, 1 << 16])
def test_the_blocks_of_whole_queries_give_the_plain_sort(monkeypatch, block):
    """score_order sorts a block of whole queries at a time (run_order._SORT_BLOCK rows): blocks of one query,
    blocks cut between queries of uneven length, and a query longer than a block (alone in its own)."""
    import ragdiff.core.io.run_order as order

    monkeypatch.setattr(order, "_SORT_BLOCK", block)
    rng = random.Random(21)
    sizes = [1, 2, 5, 70, 3, 1, 130, 9] if block < 1 << 16 else [1, 70_000, 3, 1]
    rows = [(f"q{rng.randrange(10**6):06d}-{q}", f"c{rng.randrange(10**4):04d}-{i}", float(rng.randrange(6)) - 2.5, 0)
            for q, size in enumerate(sizes) for i in range(size)]
    rng.shuffle(rows)
    frame = pl.DataFrame([(*r[:3], 0, line) for line, r in enumerate(rows, 1)], schema=RUN_SCHEMA, orient="row")
    assert ordered_frame(None, frame.clone(), True).equals(_plain_sort(frame))


@pytest.mark.parametrize("block", [3, 64])
def test_more_queries_than_one_radix_digit_in_small_blocks(monkeypatch, block):
    """Past 65,536 queries (the two-digit radix grouping) with blocks of a few whole queries: 70,000 query ids
    whose byte order is not the order first seen, lists of 1 to 5 rows (a block of 3 rows holds one to three
    queries; a 5-row query is alone in its own), tied scores broken by the chunk id — the plain sort's rows."""
    import ragdiff.core.io.run_order as order

    monkeypatch.setattr(order, "_SORT_BLOCK", block)
    rng = random.Random(12)
    queries = [f"q{n:09d}" for n in rng.sample(range(10**9), 70_000)]
    rows = [(q, f"c{rng.randrange(10**5):05d}-{j}", float(rng.randrange(3)), 0)
            for q in queries for j in range(rng.choice((1, 1, 2, 3, 5)))]
    rng.shuffle(rows)
    frame = pl.DataFrame([(*r[:3], 0, line) for line, r in enumerate(rows, 1)], schema=RUN_SCHEMA, orient="row")
    assert ordered_frame(None, frame.clone(), True).equals(_plain_sort(frame))


@pytest.mark.parametrize("block", [4, 1 << 10])
def test_the_repeat_check_in_blocks_of_several_queries(tmp_path, monkeypatch, block):
    """score_order checks for repeats a block of whole queries at a time: a chunk id in two queries of one block
    is no repeat, one twice in a query that shares its block with others is, named by its two lines."""
    import ragdiff.core.io.run_order as order

    monkeypatch.setattr(order, "_SORT_BLOCK", block)
    lines = [f"q{q} Q0 c{c} 0 {c}.5 t\n" for q in range(3) for c in range(2)]  # c0 and c1 in q0, q1 and q2
    path = tmp_path / "run.trec"
    path.write_text("".join(lines))
    assert load_run(path).frame.height == 6
    path.write_text("".join(lines) + "q1 Q0 c0 0 9.0 t\n")
    with pytest.raises(InputError) as err:
        load_run(path)
    assert "'c0' appears twice for query 'q1' (lines 3 and 7)" in str(err.value)


def test_pairs_whose_hashes_collide_go_to_the_exact_check(tmp_path, monkeypatch):
    """A block's pair hashes that collide without a repeat (here: the query's number left out of the hash, so
    one chunk id in two queries collides) send the run to the exact check, which finds no repeat: the run is
    ordered as it would be without the collision."""
    import ragdiff.core.io.run_order as order

    path = tmp_path / "run.trec"
    path.write_text("".join(f"q{q} Q0 c{c} 0 {c}.5 t\n" for q in range(3) for c in range(2)))
    expected = load_run(path).frame
    checked = []
    refuse = order._refuse_repeats
    monkeypatch.setattr(order, "_PAIR_MIX", 0)
    monkeypatch.setattr(order, "_refuse_repeats", lambda *a: checked.append(1) or refuse(*a))
    assert load_run(path).frame.equals(expected)
    assert checked == [1]
