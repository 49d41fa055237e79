#!/bin/bash
# Issue 12's sitting, as run for bench/RESULTS.md: every benchmark one after another, nothing else running.
#   git archive --prefix=base/ REV | tar -x -C /tmp    # the "before" tree (start-up and the 1M sweep)
#   bench/final_sitting.sh > sitting.log 2>&1          # ~12 minutes; needs bench/data/1000x1000, 10000x1000, 30000x1000
set -u
cd "$(dirname "$0")/.."
stamp() { echo "=== $(date -u +%H:%M:%S) $(cut -d' ' -f1-3 /proc/loadavg) $*"; }
stamp start
.venv/bin/python bench/startup.py --rounds 21 --before /tmp/base
stamp 1M sweep
.venv/bin/python bench/run_bench.py --sizes 1000x1000 --repeat 5 --depths 10,100,1000 --tools ragdiff-diff,ragdiff-eval,pytrec_eval,polars-read --before /tmp/base --no-check --profile
stamp 1M agreement
.venv/bin/python bench/run_bench.py --sizes 1000x1000 --repeat 1 --depths 1000 --tools ragdiff-eval,pytrec_eval
stamp 10M sweep
.venv/bin/python bench/run_bench.py --sizes 10000x1000 --repeat 3 --depths 10,100,1000 --tools ragdiff-diff,ragdiff-eval,pytrec_eval,polars-read --no-check
for i in 1 2 3; do
  stamp review 10k round $i
  .venv/bin/python bench/bench_review.py
  stamp review 1M pair round $i
  .venv/bin/python bench/bench_review.py --pair bench/data/1000x1000
done
stamp 30M eval under 3 GiB
.venv/bin/python bench/big_eval.py --sizes 30000x1000 --limit-gib 3 --sample 300
stamp end
