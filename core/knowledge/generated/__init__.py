"""Knowledge tables generated from the user's clones ("living knowledge").

The hand-written JSON in core/knowledge/ goes stale the day a product publishes a release. At the end
of `python -m bot index` (and so after `sync`) each extractor here reads one table from a clone (the
compatibility matrix, the env var list, the supported models and features) and `write.write_generated`
stores it under DATA_DIR/knowledge/<table>.json, stamped with the commit it was read from. Answers read
those files through `tables.load`; the shipped JSON is the fallback without clones, and
`python -m core.knowledge.generated check` says whether that fallback still matches the clone.

Tables hold names, versions, statuses and links only: no sentence of a clone is copied.
"""
