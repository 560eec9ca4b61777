"""The JSON API's request and response models: the contract at the HTTP boundary."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from agent.state import DEFAULT_SOURCE, Answer, Message, Step
from storage.conversations import Conversation


class ConversationPublic(BaseModel):
    thread_id: str
    title: str
    created_at: str
    updated_at: str
    tags: list[str]
    message_count: int
    version: int
    source: str = Field(DEFAULT_SOURCE, description="The data source the conversation asks (`default`, a name "
                                                    "from ASKDB_SOURCES, or `uploads`).")

    @classmethod
    def of(cls, conversation: Conversation) -> ConversationPublic:
        data = conversation.model_dump()
        return cls.model_validate({**data, "source": data["source"] or DEFAULT_SOURCE})


class ConversationList(BaseModel):
    data: list[ConversationPublic]
    count: int


class ConversationCreate(BaseModel):
    title: str = Field("", max_length=200)
    tags: list[str] = Field(default_factory=list, max_length=20)
    source: str | None = Field(None, max_length=64, description="The data source to bind it to: `default`, a "
                                                                 "name from ASKDB_SOURCES, or `uploads`; omit for "
                                                                 "the default.")


class ConversationUpdate(BaseModel):
    title: str | None = Field(None, max_length=200)
    tags: list[str] | None = Field(None, max_length=20)


class ChatRequest(BaseModel):
    question: str = Field(description="The question, in any language.")
    thread_id: str | None = Field(None, description="Continue this conversation; omit to start a new one.")
    source: str | None = Field(None, max_length=64, description="A new conversation's data source (`default`, a "
                                                                 "name from ASKDB_SOURCES, or `uploads`); omit for "
                                                                 "the default. A follow-up keeps its "
                                                                 "conversation's: naming another is a 422.")


class ChatReply(BaseModel):
    thread_id: str
    answer: Answer | None = Field(description="The answer: `ok`, and `confidence`, how far it answers the "
                                              "question: `answered`, `partly_answered` (a query's result, "
                                              "`data.caveat` saying what it leaves out) or `not_answered`.")
    steps: list[Step]
    error: str | None = None


class HistoryPage(BaseModel):
    thread_id: str
    data: list[Message]
    count: int


class StepList(BaseModel):
    data: list[dict[str, Any]]
    count: int
