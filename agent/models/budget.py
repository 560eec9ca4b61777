"""How many tokens a model call may use: the window the model really has, in the model's own tokens.

The window is the server's when it reports one (`OpenAIChatModel.context_window`: llama.cpp,
vLLM, Ollama), else MEMORY_CONTEXT_WINDOW, else OpenAI's table for OpenAI's models and
`CONSERVATIVE_WINDOW` for a self-hosted one (never a guess from the model's name: issue 16 met
"qwen2.5" read as 32,768 tokens against a 2,048-token server). A server that answers "too
long" teaches a smaller window, kept by the `ModelBudget` the service owns.

Counts are ours (tiktoken's o200k for unknown models), which ran 23% under Qwen's own count
(issue 16), beyond the budget's 10% margin. Every reply's `usage.prompt_tokens` against what we
counted for the same request gives the model's ratio; the window is divided by it, so the
budget is in the model's tokens.
"""

from __future__ import annotations

import threading

from agent.memory.config import MemoryConfig
from agent.memory.tokens import context_window_for
from agent.models.window import CONSERVATIVE_WINDOW

MAX_RATIO = 4.0  # beyond this the reported usage is not about the same prompt
REPLY_SHARE = 4  # a reply may take at most a quarter of a small window (2,048 tokens: 512 for the reply)
MIN_REPLY = 256  # tokens: room for one tool call with its SQL, however small the window


class ModelBudget:
    """What askdb learnt of its models' windows and token counts, per model label, for as long as its
    owner keeps it: the service's `Models` (one per AskDB, shared by a harness's AskDBs), so that a
    test, building its own, starts from nothing learnt."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ratios: dict[str, float] = {}  # model label -> server tokens / our tokens
        self._learnt_windows: dict[str, int] = {}  # model label -> the window a "too long" error taught

    def window_for(self, model: object, config: MemoryConfig) -> int:
        """The model's window in its own tokens, before calibration; 0 lets the memory settings decide."""
        label = getattr(model, "label", "")
        with self._lock:
            learnt = self._learnt_windows.get(label)
        reported = model.context_window() if hasattr(model, "context_window") else None
        window = min(w for w in (learnt, reported) if w) if (learnt or reported) else 0
        if not window and not config.context_window and getattr(model, "hosted_by_openai", True) is False:
            window = CONSERVATIVE_WINDOW
        return window or config.context_window

    def config_for(self, model: object, config: MemoryConfig) -> MemoryConfig:
        """The memory settings for the next call: the model's window, counted in our tokens."""
        window = self.window_for(model, config)
        with self._lock:
            ratio = self._ratios.get(getattr(model, "label", ""), 1.0)
        update: dict[str, int] = {}
        if window:
            update["context_window"] = max(1, int(window / ratio))
        if ratio > 1.0:
            update["context_budget"] = max(1, int(config.context_budget / ratio))
        reply = reply_room(config.output_reserve,
                           update.get("context_window") or context_window_for(config.model, config.context_window))
        if reply != config.output_reserve:
            update["output_reserve"] = reply
        return config.model_copy(update=update) if update else config

    def calibrate(self, model: object, *, counted: int, reported: int) -> None:
        """Learn the model's token ratio from a reply's `usage.prompt_tokens` against our count of that request."""
        if counted <= 0 or reported <= 0:
            return
        ratio = min(MAX_RATIO, max(1.0, reported / counted))  # our count running over is harmless
        with self._lock:
            self._ratios[getattr(model, "label", "")] = ratio

    def learn_window(self, model: object, window: int) -> None:
        """Remember a smaller window for this model (the server refused a longer request)."""
        label = getattr(model, "label", "")
        with self._lock:
            self._learnt_windows[label] = min(window, self._learnt_windows.get(label, window))


def reply_room(configured: int, window: int) -> int:
    """The tokens kept for the model's reply: ASKDB_MAX_OUTPUT_TOKENS, but at most a quarter of the window,
    so that a 2,048-token server still leaves room for the conversation (issue 22); the same number is
    sent as the call's `max_tokens`."""
    return min(configured, max(MIN_REPLY, window // REPLY_SHARE))
