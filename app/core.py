"""AskDB: the one core object the web app and the CLI both build from Settings."""

from __future__ import annotations

from agent.state import AgentState
from app.settings import Settings
from storage.conversations import ConversationStore, connect


class AskDB:
    """Holds the store and the settings; hands out the analytics database and the model."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.store: ConversationStore[AgentState] = ConversationStore(connect(settings.store), AgentState)

    def close(self) -> None:
        self.store.conn.close()
