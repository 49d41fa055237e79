"""Byte-compile the ragdiff source trees a bench is about to time, as an installed ragdiff is: pip compiles a
package when it installs it, and a first run writes `__pycache__/` beside an editable install. This machine sets
PYTHONDONTWRITEBYTECODE, so until then every timed run compiled ragdiff's modules from source (measured on the
1M pair: `diff --depth 1000` 0.93 s without bytecode, 0.89 s with; `--help` 60-70 ms against 45-50 ms), a cost no
user pays twice. The libraries it is compared with (pytrec_eval, polars, numpy) were byte-compiled by pip already.
"""

from __future__ import annotations

import compileall
from pathlib import Path


def compile_trees(*roots: Path) -> None:
    """Write the bytecode of each tree's ragdiff package (PYTHONDONTWRITEBYTECODE stops Python writing it, not
    reading it). Say so, and stop if a module does not compile: a bench of a broken tree measures nothing."""
    for root in roots:
        package = Path(root).resolve() / "ragdiff"
        if not compileall.compile_dir(package, quiet=1):
            raise SystemExit(f"bench: {package} does not byte-compile")
        print(f"bytecode written for {package} (as an installed ragdiff has it)", flush=True)
