"""ragdiff: did retrieval get better? Exact metrics, paired significance and a review screen."""

import os

__version__ = "0.1.0"

# polars' allocator (jemalloc) keeps freed pages for 10 s by default, so loading a second big run stacks on
# the first one's leftovers. Handing them back after 200 ms kept `ragdiff diff` on two million-line runs
# near 330 MiB instead of 410 MiB, at no measurable cost in time; after 100 ms its peak is ~6-9 MiB lower
# again (the loads' freed pages are gone before the comparison's peak), no slower on the 1M or the 10M pair;
# 50 ms was no lower (bench/run_bench.py, the 1M and 10M pairs). It must be set before polars loads; a
# value the user set wins.
#
# One arena for every thread (narenas:1): a page one thread frees is then reused by the next thread that
# allocates, instead of waiting out the decay in its own arena. `diff` evaluates its two runs in two threads and
# compares in three: with jemalloc's default (an arena per thread, up to 4 per core) the depth-1000 peak was
# 294-309 MiB, with one arena 278-290 (median of 5, bench/run_bench.py on the 1M pair), no slower.
def _allocator_settings() -> str:
    settings = "dirty_decay_ms:100,muzzy_decay_ms:0,narenas:1"
    # Under an address-space limit (`ulimit -v`), jemalloc's default of keeping the address ranges it frees
    # (retain) runs the limit out while resident memory is a third of it: `eval` of a 30M-line pair in parts
    # under 3 GiB failed in 2 of 3 tries at 860 MiB resident, and passed in 2 of 2 with retain:false (bench/
    # RESULTS.md, runs bigger than memory). Only then: without a limit retaining costs nothing and saves the unmapping.
    import resource

    if resource.getrlimit(resource.RLIMIT_AS)[0] != resource.RLIM_INFINITY:
        settings += ",retain:false"
    return settings


os.environ.setdefault("_RJEM_MALLOC_CONF", _allocator_settings())
