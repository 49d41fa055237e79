"""A retriever that answers two queries, then hangs."""

import json
import sys
import time

for number, line in enumerate(sys.stdin, start=1):
    query = json.loads(line)
    if number == 3:
        time.sleep(600)
    print(json.dumps({"query_id": query["query_id"], "results": ["json#0"]}), flush=True)
