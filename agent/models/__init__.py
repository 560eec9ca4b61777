"""The chat models askdb talks to, behind one small protocol (`llm.ChatModel`: messages and tools
in, one `ModelReply` out).

- `llm`: the protocol, the reply and its errors;
- `openai_model`: the OpenAI-compatible client (any `/v1/chat/completions` server);
- `tool_text` and `react_text`: tool calls a model wrote as text (JSON, tags, ReAct lines) read
  back as calls;
- `window` and `budget`: the model's context window and the tokens a turn may spend;
- `answer_draft`: the answer streamed as the model writes it.

Nothing here runs a check, a tool, the planner or a database: a model only turns messages into a
reply.
"""
