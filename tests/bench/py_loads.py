"""The reference of the bench's journal_cpu section (tests/bench/run.sh): Python
merely parsing every line of one or more results.jsonl files with json.loads,
the least any Python reader of a journal does. Prints nothing.

Usage: /usr/bin/python3 py_loads.py FILE...  (the bench runs the system's
Python, a build with optimisations)
"""
import json
import sys

for path in sys.argv[1:]:
    with open(path, "rb") as f:
        for line in f:
            json.loads(line)
