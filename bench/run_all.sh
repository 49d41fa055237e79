#!/bin/bash
# Every benchmark in bench/RESULTS.md, one after another; run it with nothing else on the machine.
#   make bench                                   # the bench extras (pytrec_eval, ir_measures, ranx) in .venv
#   bench/run_all.sh > bench.log 2>&1            # generates bench/data/ once (1M, 10M, 30M pairs), then times
#   BEFORE=/tmp/base bench/run_all.sh > …        # also another source tree in the same rounds, e.g. from
#                                                # `git archive --prefix=base/ REV | tar -x -C /tmp`
# Each benchmark prints its table; the log's === lines give the load average before each.
set -u
cd "$(dirname "$0")/.."
PY=.venv/bin/python
BEFORE_ARGS=()
REVIEW_TREE=()
if [ -n "${BEFORE:-}" ]; then BEFORE_ARGS=(--before "$BEFORE"); REVIEW_TREE=(--tree "$BEFORE"); fi
stamp() { echo "=== $(date -u +%H:%M:%S) $(cut -d' ' -f1-3 /proc/loadavg) $*"; }
stamp start-up
$PY bench/startup.py --rounds 21 "${BEFORE_ARGS[@]}"
stamp 1M pair, depths 10 100 1000
$PY bench/run_bench.py --sizes 1000x1000 --repeat 5 --depths 10,100,1000 --tools ragdiff-diff,ragdiff-eval,pytrec_eval,polars-read "${BEFORE_ARGS[@]}" --no-check --profile
stamp 1M agreement
$PY bench/run_bench.py --sizes 1000x1000 --repeat 1 --depths 1000 --tools ragdiff-eval,pytrec_eval
stamp 1M peers and the corpus
$PY bench/run_bench.py --sizes 1000x1000 --repeat 5 --corpus 200000
stamp 10M pair
$PY bench/run_bench.py --sizes 10000x1000 --repeat 3 --depths 10,100,1000 --tools ragdiff-diff,ragdiff-eval,pytrec_eval,polars-read --no-check
for i in 1 2 3; do
  stamp review 10k round $i
  $PY bench/bench_review.py "${REVIEW_TREE[@]}"
  stamp review 1M pair round $i
  $PY bench/bench_review.py --pair bench/data/1000x1000 "${REVIEW_TREE[@]}"
done
stamp marks
$PY bench/bench_marks.py --marks 20 --queries 10000
for i in 1 2 3; do
  stamp judging queue round $i
  $PY bench/bench_judge.py "${REVIEW_TREE[@]}"
  $PY bench/bench_judge.py --pair bench/data/1000x1000 "${REVIEW_TREE[@]}"
done
stamp label files
$PY bench/labels_bench.py --repeat 5 --marks 4 "${BEFORE_ARGS[@]}"
$PY bench/labels_formats_bench.py --queries 1000,10000,50000 --repeat 5 "${BEFORE_ARGS[@]}"
stamp 30M eval under 3 GiB
$PY bench/big_eval.py --sizes 30000x1000 --limit-gib 3 --sample 300
stamp end
