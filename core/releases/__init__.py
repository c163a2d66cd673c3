"""Reading at the user's release (issue 23 items 3 and 4).

- `tags`: the release tags a clone holds and the one to read for a user's version.
- `fetch`: what `sync` fetches so those tags exist in a shallow clone.
- `pinning`: the releases one answer reads at, for the retriever and the research tools.
- `index`: a small knowledge index per release tag, built on first use from units shared by blob.
- `changes`: what changed between the user's release and the newest one (fixes, features,
  renamed or removed env vars and config keys).
"""
