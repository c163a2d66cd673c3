"""The repositories' own vocabulary: which identifiers each product owns (issue 22).

Built by `python -m bot index` from the clones (INDEX_DIR/vocabulary.json) and read by the router
when a question names no product: a flag, an env var, a class, a module path, a config key, an
error message raised in the code, an image tag or a directory name that only one product has
settles the route.
"""
