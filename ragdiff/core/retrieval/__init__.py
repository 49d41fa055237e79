"""Producing runs: BM25 built in, the team's own retriever as a command, rank fusion."""
