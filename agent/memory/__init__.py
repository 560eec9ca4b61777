"""Memory for long conversations: token counting, the tiered context, the summary cache, archival.

See docs/memory.md. Nothing here reads the environment: it is handed a `MemoryConfig`.
"""
