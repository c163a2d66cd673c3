"""`python -m bot sync --issues`: download GitHub and GitCode issues into DATA_DIR/issues/.

http.py talks to one API host (rate limits, retries, pacing), hosts.py knows each API's shapes,
state.py keeps the per-repository cursor, sync.py runs a repository page by page.
"""
