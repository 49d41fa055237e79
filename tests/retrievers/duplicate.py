"""A retriever for `ragdiff run` tests: answers every query, the third one with the same chunk twice (a run
line that reads as JSON but is not a run: the run reader refuses it)."""

import json
import sys

for number, line in enumerate(sys.stdin, start=1):
    query = json.loads(line)
    results = ["c1", "c1"] if number == 3 else ["c1"]
    print(json.dumps({"query_id": query["query_id"], "results": results}), flush=True)
