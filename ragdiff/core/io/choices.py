"""What the command line offers before anything heavy loads: the format names each reader accepts and the
significance tests' defaults (the label levels are in core/vocab.py, which is as light).

This module imports nothing, so `ragdiff --help` and `ragdiff eval --help` can list them without loading
polars or numpy (bench/RESULTS.md, start-up). The readers and the tests import these names from here.
"""

# each run format (its reader: core/io/formats.py's RUN_READERS) and the file extensions that say it
RUN_EXTENSIONS = {
    "trec": (".trec", ".run"),
    "jsonl": (".jsonl", ".ndjson"),
    "json": (".json",),
    "csv": (".csv",),
    "tsv": (".tsv",),
    "parquet": (".parquet", ".pq"),
}
RUN_FORMATS = tuple(RUN_EXTENSIONS)
GOLD_FORMATS = ("yaml", "json", "qrels", "beir")
FUSION_METHODS = ("rrf", "combsum", "combmnz", "wsum")  # `ragdiff fuse` (core/retrieval/fusion.py)
FUSION_NORMS = ("none", "minmax", "zscore", "rank")

DEFAULT_FLIPS = 10_000  # random sign flips of the paired test, and bootstrap resamples
DEFAULT_SEED = 20_250_806

# the judging queue's orders (core/judge/pool_order.py) and the default, chosen in bench/pool_orders.py: mtf meets
# every target there and moves to another query ~4x less often than global (bench/RESULTS.md, "Pool orders")
POOL_ORDERS = ("rank", "mtf", "bandit", "bandit-stationary", "global")
DEFAULT_POOL_ORDER = "mtf"
