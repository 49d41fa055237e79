"""A retriever for `ragdiff run` tests: answers each query on stdin with that query's line from a JSONL run
(default sample_runs/dense.jsonl), in the order asked."""

import json
import sys
from pathlib import Path

source = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "sample_runs" / "dense.jsonl"
answers = {}
for line in source.read_text(encoding="utf-8").splitlines():
    if line.strip():
        record = json.loads(line)
        answers[record["query_id"]] = line
for line in sys.stdin:
    query = json.loads(line)
    if query["query_id"] in answers:
        print(answers[query["query_id"]], flush=True)
