"""The service behind the web app and the CLI, in named parts, each with its own lock.

- `leases`: who runs a turn on a conversation (`TurnLease`), renewed on a timer (`LeaseKeeper`).
- `models`: the chat model and the embedder, built once and shared (`Models`).
- `remembering`: memory, and the remembering that runs after an answer (`Remembering`).
- `following`: a running turn's events, here or in another process (`follow_turn`).

`app.core.AskDB` puts them together. Nothing here knows HTTP.
"""
