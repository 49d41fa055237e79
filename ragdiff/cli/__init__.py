"""The command line: `ragdiff eval | diff | history | review | demo`. Each command is one module here."""
