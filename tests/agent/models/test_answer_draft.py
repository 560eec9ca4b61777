"""The answer's text streams as a draft while the model writes it (issue 20): from a native `answer`
call's JSON arguments, from text ReAct's `Action Input`, or from plain content; a tool call is
never shown as an answer, and a restarted stream says so."""

from __future__ import annotations

import json

import pytest

from agent.models.answer_draft import AnswerDraft, json_text_argument
from agent.models.openai_model import OpenAIChatModel
from agent.tools.registry import tool_schemas
from bench.scripted_llm import cut_stream, text, tool_call

ANSWER = "Falcon 9 flew 572 times — “the most”, 最多; a \\ backslash and 😀."
QUESTION = [{"role": "system", "content": "You are askdb."}, {"role": "user", "content": "Which flew most?"}]


class Drafts:
    def __init__(self) -> None:
        self.pieces: list[str] = []
        self.restarts = 0

    def __call__(self, text: str, *, restart: bool = False) -> None:
        if restart:
            self.restarts += 1
            self.pieces.clear()
        self.pieces.append(text)

    @property
    def text(self) -> str:
        return "".join(self.pieces)


def _model(llm, **kwargs) -> OpenAIChatModel:
    return OpenAIChatModel(base_url=llm.base_url, api_key=None, model="m", stream=True, max_retries=1, **kwargs)


def test_a_native_answer_call_streams_its_text(scripted_llm):
    scripted_llm.enqueue(tool_call("answer", {"text": ANSWER, "sql": "SELECT 1"}))
    drafts = Drafts()
    reply = _model(scripted_llm).complete(QUESTION, tool_schemas(), on_text=drafts)
    assert reply.tool_calls[0].name == "answer"
    assert drafts.text == ANSWER and len([p for p in drafts.pieces if p]) > 3  # in pieces, as they came


def test_text_react_streams_the_answer_action_only(scripted_llm):
    written = "Thought: I know it.\nAction: answer\nAction Input: " + json.dumps({"text": ANSWER}, ensure_ascii=False)
    scripted_llm.enqueue(text(written))
    drafts = Drafts()
    _model(scripted_llm, tool_mode="text").complete(QUESTION, tool_schemas(), on_text=drafts)
    assert drafts.text == ANSWER


def test_plain_content_streams_but_a_call_written_as_text_does_not(scripted_llm):
    scripted_llm.enqueue(text("Six sites are in China."), text('{"name": "list_tables", "arguments": {}}'))
    drafts = Drafts()
    model = _model(scripted_llm, tool_mode="native")
    model.complete(QUESTION, tool_schemas(), on_text=drafts)
    assert drafts.text == "Six sites are in China."
    drafts = Drafts()
    assert model.complete(QUESTION, tool_schemas(), on_text=drafts).tool_calls[0].name == "list_tables"
    assert drafts.text == ""


def test_a_stream_cut_and_retried_restarts_the_draft(scripted_llm):
    scripted_llm.enqueue(cut_stream(tool_call("answer", {"text": ANSWER}), after_chunks=6),
                         tool_call("answer", {"text": ANSWER}))
    drafts = Drafts()
    _model(scripted_llm).complete(QUESTION, tool_schemas(), on_text=drafts)
    assert drafts.restarts == 2 and drafts.text == ANSWER


ARGUMENTS = json.dumps({"sql": "SELECT 1", "text": ANSWER})  # \uXXXX escapes, a surrogate pair among them


@pytest.mark.parametrize("cut", range(len(ARGUMENTS) + 1))
def test_any_prefix_of_the_arguments_reads_as_a_prefix_of_the_text(cut):
    assert ANSWER.startswith(json_text_argument(ARGUMENTS[:cut]))
    assert json_text_argument(ARGUMENTS) == ANSWER


def test_the_draft_sends_only_what_is_new():
    sent: list[str] = []
    draft = AnswerDraft(lambda t, restart=False: sent.append(t), text_tools=False)
    for piece in ("Six ", "sites", "."):
        draft.add_content(piece)
    assert sent == ["", "Six ", "sites", "."]
