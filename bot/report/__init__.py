"""The admin report: what the team asks and what fails, read from the answer log.

`log.py` writes one record per delivered reply (the worker), `data.py` reads the records into the
report's numbers, and both `python -m bot report` (`command.py`) and `bot web`'s `/admin`
(`page.py`) show what `data.py` computed, so the two never disagree.
"""
