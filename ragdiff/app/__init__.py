"""The review screen: two runs side by side, gold highlighted, flipped queries first.

`model` and `corpus` and `text` are Textual-free (testable alone); `app` and `widgets/` render them.
Nothing here is imported by `ragdiff eval`: the CLI imports the app only inside `review`/`demo`.
"""
