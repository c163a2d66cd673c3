"""The offline-answer knowledge: JSON files beside this package, and the code that reads them.

- schema.py: the models every file validates into (and the JSON Schema editors use);
- loader.py: reads and validates the files once per directory;
- base.py: the assembled KnowledgeBase, its lookups and source links;
- product_facts.py: which product facts a question's text names.

See docs/knowledge.md for the files themselves.
"""
