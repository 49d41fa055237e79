"""Scoring: the metric table, the per-k kernels, the paired statistics and the diff of two runs."""
