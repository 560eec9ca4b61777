"""The tools a turn offers the model: one typed function each, its schema made from its arguments.

- `base`: what every tool is made of (its context, its outcome, its schema);
- `registry`: the database tools, the tools a turn offers and how a call is parsed and run;
- `lookup_words`: what `find_values` shows for a word that names a ranking or a computation.

The memory tool lives with memory (`agent.memory.recall_tool`) and builds on `base`.
"""
