"""The function transforms, one module each, read top to bottom.

Each is imported from its own module (``mlxref.core`` imports the public ones):
the package itself imports nothing, so the ops and the array can read the
tracing state in tape.py and evaluate through eval.py while the transforms
themselves, which build on the ops, are not loaded yet.
"""
