"""The words askdb reads questions by, kept once for the offline planner and the trust checks.

Numbers written as words or Chinese numerals (`numbers`), the words by which a question points back
at an earlier answer (`references`), the words that ask for a ranking (`ranking`), and the words
of schema names that say what a column holds (`names`). Plain data and
small functions over it: this package imports nothing of the agent, so the planner and the checks
both read it and never each other's copy.
"""
