"""ragdiff: did retrieval get better? Exact metrics, paired significance and a review screen."""

__version__ = "0.1.0"
