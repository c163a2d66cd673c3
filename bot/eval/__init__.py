"""`python -m bot eval`: run a question set through the conversation core and measure the answers.

One idea per module: `dataset` (reading and validating the JSONL), `runner` (each question through
`Conversation.handle`), `links` and `citations` (what a link points at, and whether it resolves in
the local clones), `retrieval` (recall@k of the knowledge index), `judge` (model-graded facts),
`metrics` (pure aggregation), `report` (report.json, report.md, the printed table), `progress`.
"""
