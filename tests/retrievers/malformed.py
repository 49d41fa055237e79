"""A retriever whose fifth answer is not JSON (a stray debug print)."""

import json
import sys

for number, line in enumerate(sys.stdin, start=1):
    query = json.loads(line)
    if number == 5:
        print(f"DEBUG embedding {query['query']!r}")
        continue
    print(json.dumps({"query_id": query["query_id"], "results": ["json#0", "csv#0"]}), flush=True)
