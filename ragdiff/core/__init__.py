"""The engine shared by the command line and the terminal app.

Nothing under ragdiff.core imports Textual (tests/test_architecture.py enforces it), so the CLI, the
app and the benchmarks all score with the same code.
"""
