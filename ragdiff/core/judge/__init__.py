"""Judging: the pool and its orders, drafts, provenance, staleness, agreement, labels from traffic."""
