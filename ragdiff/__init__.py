"""ragdiff: did retrieval get better? Exact metrics, paired significance and a review screen."""

import os

__version__ = "0.1.0"

# polars' allocator (jemalloc) keeps freed pages for 10 s by default, so loading a second big run stacks on
# the first one's leftovers. Handing them back after 200 ms keeps `ragdiff diff` on two million-line runs
# near 330 MiB instead of 410 MiB, at no measurable cost in time (bench/RESULTS.md). It must be set before
# polars loads; a value the user set wins.
os.environ.setdefault("_RJEM_MALLOC_CONF", "dirty_decay_ms:200,muzzy_decay_ms:0")
