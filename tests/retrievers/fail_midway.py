"""A retriever that answers three queries, then fails (exit 1) on the fourth."""

import json
import sys

for number, line in enumerate(sys.stdin, start=1):
    query = json.loads(line)
    if number == 4:
        print(f"index not found while answering {query['query_id']}", file=sys.stderr)
        sys.exit(1)
    print(json.dumps({"query_id": query["query_id"], "results": ["json#0", "csv#0"]}), flush=True)
