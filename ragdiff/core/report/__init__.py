"""Reports: each command's findings as one document, and the renderers that read only the document.

Documents: `eval_doc.EvalReport` (`ragdiff eval`), `diff_doc.DiffReport` (`ragdiff diff` and `ragdiff report`),
`history_doc.HistoryReport` (`ragdiff history`). Renderers: `text_eval`, `text_diff`, `text_history` (the
terminal), `as_json` (--json), `trec_eval` (trec_eval's layout), `markdown` (a pull-request comment),
`html_page` (one self-contained page); `cells` holds the phrases and cells the diff's renderers share, `notes`
what every command says about drafts.
A new output format is one renderer module reading the documents. Numbers are shown by `ragdiff.core.fmt`.
"""
