"""The knowledge index: passages from the local clones (and synced issues), ranked for a question.

The clones are the source of truth; the index is a cache that can be rebuilt at any time.
"""
