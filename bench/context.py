"""Context benchmark: what each model call costs, what the store costs, what is remembered.

One conversation of up to 1,000 generator turns goes through the same memory steps
as `agent.loop.run_turn` (summary refresh, `build_context` at each model call,
archival at the end of the turn, saved in a real store), with the extractive
summariser: the model is scripted, so no call is made. Measured at 25 to 1,000 turns:
- tokens per model call: sent, the whole history, and a fixed last-6-messages window;
- state_data bytes, database bytes, median save and load (as the `store` benchmark);
- planted facts: a fact stated at turn k, asked about at k+n (n up to 500): the share
  of them present in the assembled context (summary, result cards, recent messages);
- the same with memory on (recall by keywords, user memory from the offline rules), at
  windows of 4k, 8k, 32k and 128k, with the extractive summariser and with one that
  returns junk: the share present and through which tier (issue 22).
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agent.context import build_context, system_prompt, turn_note
from agent.models.llm import ChatModel, ModelReply
from agent.memory.archival import archive_if_due
from agent.memory.config import MemoryConfig
from agent.memory.hooks import Memory, after_turn, before_turn
from agent.memory.recall_config import RecallConfig
from agent.memory.summary import refresh_summary
from agent.memory.tokens import counter_for
from agent.state import AgentState, Answer, AnswerData, FunctionCall, Message, MessageToolCall, SQLRecord, Step
from agent.tools.registry import tool_schemas, tools_for_turn
from bench.generator import turn_messages
from storage.base import open_store

SIZES = [25, 50, 100, 250, 500, 1000]
REPEATS = 31  # medians of many: the machine is shared, single timings of ~1 ms are noisy
CONFIG = MemoryConfig(model="gpt-4o-mini")  # defaults: 16,000-token cap on a 128k window
DATABASE = "aerospace.db"
GAPS = [1, 2, 5, 10, 25, 50, 100, 250, 500]
PREFERENCES = [
    ("Before we go on: our fiscal year starts in April.", "fiscal year starts in April",
     "Remind me, when does the fiscal year begin for us?"),
    ("Note that we count only successful launches as launches.", "count only successful launches",
     "Which launches should the counts include?"),
    ("From now on, report payload mass in tonnes, not kilograms.", "payload mass in tonnes",
     "What unit should masses be in?"),
    ("We treat Kourou as a European site, whatever the country column says.", "Kourou as a European site",
     "How do we classify the Guiana site?"),
    ("Please always round percentages to one decimal place.", "round percentages to one decimal place",
     "How should percentages be shown?"),
    ("Our team calls the Long March family 'CZ' in reports.", "Long March family 'CZ'",
     "What do we call that Chinese rocket family?"),
]
OPERATORS = ["Arianespace", "Roscosmos", "ISRO", "JAXA", "Rocket Lab", "CASC"]
WINDOWS = [4_096, 8_192, 32_768, 131_072]
# What a weak summariser writes: as long as it may be, and nothing in it bears on any question.
JUNK = " ".join(f"The conversation went on with several more questions and answers, part {n}." for n in range(120))


class JunkSummariser:
    """A summariser that always returns useless text (any small model does, now and then)."""

    label = "junk summariser"

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], *,
                 max_tokens: int | None = None, on_text: Any = None, readable: Any = None) -> ModelReply:
        return ModelReply(content=JUNK)


def _db_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))


def _fact_turn(n: int, fact_index: int) -> tuple[list[Message], str, str]:
    """Turn `n` carrying planted fact `fact_index`: its messages, the key to look for, the probe question."""
    if fact_index % 2 == 0:
        statement, key, probe = PREFERENCES[fact_index // 2 % len(PREFERENCES)]
        messages = turn_messages(n)
        messages[0] = Message(role="user", content=f"{statement} How many launches per year since 2015?")
        return messages, key, probe
    operator = OPERATORS[fact_index // 2 % len(OPERATORS)]
    value = 310_000 + 7_919 * fact_index  # six digits: no generator row holds such a number
    sql = f"SELECT count(*) AS n FROM payloads WHERE operator = '{operator}'"
    call = MessageToolCall(id=f"call_{n}_fact", function=FunctionCall(name="run_sql", arguments=json.dumps({"sql": sql})))
    result = {"ok": True, "columns": ["n"], "rows": [[value]], "row_count": 1, "truncated": False, "result_id": n}
    return [Message(role="user", content=f"How many payloads has {operator} launched in total?"),
            Message(role="assistant", tool_calls=[call]),
            Message(role="tool", tool_call_id=call.id, name="run_sql", content=json.dumps(result)),
            Message(role="assistant", content=f"{operator} has launched {value} payloads.")], str(value), \
        f"What was the total number of payloads for {operator} that we found earlier?"


class Conversation:
    """One conversation run through the loop's memory steps on a real store.

    Args:
        location: a SQLite file or a ``postgresql://`` URL (`storage.base.open_store`).
    """

    def __init__(self, location: Path | str, config: MemoryConfig = CONFIG, summariser: ChatModel | None = None):
        self.config, self.summariser = config, summariser
        self.store = open_store(location, AgentState)
        self.archive = self.store.archive(Message)
        self.state = AgentState()
        self.thread = self.store.create(user_id="bench", state=self.state).thread_id
        self.version = 1
        self.tools = tool_schemas(tools_for_turn(memory=True))  # as a turn with memory on offers them
        self.save_ms: list[float] = []

    def close(self) -> None:
        self.store.close()

    def context(self, state: AgentState | None = None):
        stats = self.archive.stats(self.thread)
        return build_context(state or self.state, self.config, database_name=DATABASE, tools=self.tools,
                             archived_messages=stats.messages, archived_tokens=stats.tokens)

    def turn(self, n: int, messages: list[Message], *, measure: bool = False) -> list[dict[str, Any]]:
        """Play one turn: question, summary refresh, one context per model call, save or archive."""
        state, calls = self.state, []
        state.question = messages[0].content
        state.messages.append(messages[0])
        refresh_summary(state, self.config, summariser=self.summariser, database_name=DATABASE)
        for message in messages[1:]:
            if measure and message.role == "assistant":  # the model is called before each assistant message
                calls.append(self.measure_call())
            state.messages.append(message)
            for call in message.tool_calls or []:
                index = state.steps[-1].step_index + 1 if state.steps else 0
                state.steps.append(Step(step_index=index, turn_index=n, action=call.function.name,
                                        args=json.loads(call.function.arguments), observation="(see messages)"))
                if call.function.name == "run_sql":
                    state.sql_history.append(SQLRecord(sql=json.loads(call.function.arguments)["sql"], ok=True,
                                                       row_count=20, columns=["year", "count"]))
        # The answer as the loop sets it (what an episode keeps of the turn).
        sql = next((json.loads(c.function.arguments)["sql"] for m in reversed(messages) for c in m.tool_calls or []
                    if c.function.name == "run_sql"), None)
        state.answer = Answer(ok=True, data=AnswerData(text=messages[-1].content or "", sql=sql))
        started = time.perf_counter()
        moved = archive_if_due(state, self.config, archive=self.archive, thread_id=self.thread, user_id="bench",
                               expected_version=self.version, stats=self.archive.stats(self.thread),
                               summariser=self.summariser)
        if moved is not None:
            self.state, self.version = moved
        else:
            self.version = self.store.save(self.thread, user_id="bench", state=state, expected_version=self.version)
        self.save_ms.append((time.perf_counter() - started) * 1000)
        return calls

    def measure_call(self) -> dict[str, int]:
        context = self.context()
        counter = counter_for(self.config.model)
        system = {"role": "system", "content": system_prompt(database_name=DATABASE)}
        window = [system] + [m.to_api() for m in self.state.messages[-6:]]
        return {"sent": context.report.tokens_sent, "full": context.report.history_tokens,
                "last6": counter.messages(window) + counter.tools(self.tools)}

    def save_load_ms(self, repeats: int = REPEATS) -> tuple[float, float]:
        """Median ms to save the state as it stands and to load it back, over `repeats` of each."""
        saves, loads = [], []
        for _ in range(repeats):
            started = time.perf_counter()
            self.version = self.store.save(self.thread, user_id="bench", state=self.state,
                                           expected_version=self.version)
            saves.append(time.perf_counter() - started)
            started = time.perf_counter()
            self.store.load(self.thread, user_id="bench")
            loads.append(time.perf_counter() - started)
        return round(statistics.median(saves) * 1000, 2), round(statistics.median(loads) * 1000, 2)

    def turn_save_ms_p95(self) -> float:
        """p95 of the end-of-turn saves so far (archival included when it was due)."""
        return round(sorted(self.save_ms)[int(len(self.save_ms) * 0.95)], 2)


def play(conv: Conversation, sizes: list[int], *, measure: bool = True) -> Iterator[tuple[int, list[dict[str, int]]]]:
    """Play generator turns up to the largest size; after the turn that reaches each size, yield
    (turns played, that turn's model calls measured: empty unless `measure`)."""
    for n in range(max(sizes)):
        if n + 1 in sizes:
            yield n + 1, conv.turn(n, turn_messages(n), measure=measure)
        else:
            conv.turn(n, turn_messages(n))


def measure_sizes() -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "store.db"
        conv = Conversation(path)
        try:
            return [_checkpoint(conv, n, path, calls) for n, calls in play(conv, SIZES)]
        finally:
            conv.close()


def _checkpoint(conv: Conversation, n: int, path: Path, calls: list[dict[str, int]]) -> dict[str, Any]:
    save_ms, load_ms = conv.save_load_ms()
    conv.store.db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    sent, full, last6 = (round(statistics.mean(c[k] for c in calls)) for k in ("sent", "full", "last6"))
    stats = conv.archive.stats(conv.thread)
    return {"turns": n, "messages": stats.messages + len(conv.state.messages), "hot_messages": len(conv.state.messages),
            "tokens_sent": sent, "tokens_full_history": full, "tokens_last6": last6,
            "sent_share_of_full": round(sent / full, 4), "state_data_bytes": len(conv.state.model_dump_json().encode()),
            "database_bytes": _db_bytes(path), "save_ms_median": save_ms, "load_ms_median": load_ms,
            "turn_save_ms_p95": conv.turn_save_ms_p95()}


def _scalar_filler(n: int) -> list[Message]:
    """A filler turn whose answer is one number (for the dense variant): it competes with the facts."""
    messages, _, _ = _fact_turn(n, 1)
    value = 10_000 + n  # five digits: never a planted key
    return [messages[0].model_copy(update={"content": f"Turn {n}: how many payloads flew in {1990 + n % 30}?"}),
            messages[1], messages[2].model_copy(update={"content": messages[2].content.replace(
                str(310_000 + 7_919), str(value))}), Message(role="assistant", content=f"{value} payloads.")]


def measure_facts(*, dense: bool = False) -> dict[str, Any]:
    """Plant 12 facts at turns 10..120 and ask about each at k+n (dense: every third filler turn
    also ends in a single number, as a busy analyst's would)."""
    plants = {10 + 10 * i: i for i in range(12)}
    probes: dict[int, list[tuple[int, int]]] = {}
    for k, i in plants.items():
        for gap in GAPS:
            probes.setdefault(k + gap, []).append((i, gap))
    found: dict[int, list[dict[str, Any]]] = {gap: [] for gap in GAPS}
    facts: dict[int, tuple[str, str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        conv = Conversation(Path(tmp) / "facts.db")
        try:
            for n in range(max(probes) + 1):
                for i, gap in probes.get(n, []):
                    key, probe = facts[i]
                    asked = conv.state.model_copy(update={"messages": conv.state.messages + [
                        Message(role="user", content=probe)]})
                    refresh_summary(asked, conv.config, summariser=None)  # as the loop does before the call
                    found[gap].append({"fact": i, "kind": "preference" if i % 2 == 0 else "result",
                                       "via": _where(conv.context(asked).messages, key)})
                if n in plants:
                    messages, key, probe = _fact_turn(n, plants[n])
                    facts[plants[n]] = (key, probe)
                else:
                    messages = _scalar_filler(n) if dense and n % 3 == 0 else turn_messages(n)
                conv.turn(n, messages)
        finally:
            conv.close()
    return {"facts": len(plants), "planted_at": sorted(plants), "gaps": [
        {"n": gap, "present": sum(1 for f in rows if f["via"]), "of": len(rows),
         "share": round(sum(1 for f in rows if f["via"]) / len(rows), 3),
         "via": {v: sum(1 for f in rows if f["via"] == v) for v in ("recent", "condensed", "summary") if
                 any(f["via"] == v for f in rows)},
         "missing": [f"{f['kind']} #{f['fact']}" for f in rows if not f["via"]]} for gap, rows in found.items()]}


def measure_windows(summariser: ChatModel | None) -> dict[str, Any]:
    """Planted facts with memory on, at each of WINDOWS: the same conversation and probes as
    `measure_facts`, each finished turn indexed as an episode and its statements remembered
    (`after_turn`, keyword recall, offline rules), each probe recalled for (`before_turn`)."""
    plants = {10 + 10 * i: i for i in range(12)}
    probes: dict[int, list[tuple[int, int]]] = {}
    for k, i in plants.items():
        for gap in GAPS:
            probes.setdefault(k + gap, []).append((i, gap))
    found: dict[tuple[int, int], list[str | None]] = {(w, g): [] for w in WINDOWS for g in GAPS}
    sent_at: dict[int, list[int]] = {w: [] for w in WINDOWS}
    facts: dict[int, tuple[str, str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        conv = Conversation(Path(tmp) / "windows.db", summariser=summariser)
        memory = Memory.open(conv.store, RecallConfig(embedder="none", search="keyword"), embedder=None)
        try:
            for n in range(max(probes) + 1):
                for i, gap in probes.get(n, []):
                    key, probe = facts[i]
                    question = Message(role="user", content=probe)
                    asked = conv.state.model_copy(update={"question": probe, "messages": conv.state.messages + [question]})
                    refresh_summary(asked, conv.config, summariser=summariser)  # as the loop does before the call
                    before = before_turn(memory, state=asked, thread_id=conv.thread, user_id="bench", question=probe,
                                         turn_index=n)
                    question.note = turn_note(asked, user_memory=before.user_memory) or None  # as the loop does
                    stats = conv.archive.stats(conv.thread)
                    for window in WINDOWS:
                        config = conv.config.model_copy(update={"context_window": window})
                        context = build_context(asked, config, database_name=DATABASE, tools=conv.tools,
                                                archived_messages=stats.messages, archived_tokens=stats.tokens,
                                                recalled=before.recalled or None)
                        found[window, gap].append(_tier_of(context.messages, key, recalled=before.recalled,
                                                           user_memory=before.user_memory))
                        sent_at[window].append(context.report.tokens_sent)
                if n in plants:
                    messages, key, probe = _fact_turn(n, plants[n])
                    facts[plants[n]] = (key, probe)
                else:
                    messages = turn_messages(n)
                conv.turn(n, messages)
                after_turn(memory, state=conv.state, thread_id=conv.thread, user_id="bench", turn_index=n)
        finally:
            conv.close()
    tiers = ("recall", "user memory", "summary", "condensed", "recent")
    return {"summariser": summariser.label if summariser else "extractive", "windows": [
        {"window": w, "tokens_sent_max": max(sent_at[w]), "gaps": [
            {"n": g, "present": sum(1 for v in found[w, g] if v), "of": len(found[w, g]),
             "share": round(sum(1 for v in found[w, g] if v) / len(found[w, g]), 3),
             "via": {t: found[w, g].count(t) for t in tiers if t in found[w, g]}} for g in GAPS]}
        for w in WINDOWS]}


def _tier_of(messages: list[dict[str, Any]], key: str, *, recalled: str, user_memory: str) -> str | None:
    """Through which tier `key` reached the request: what recall found (in the system message), the
    user's memories (in the question's turn note), the summary, a result card, or a full message."""
    system, asked = messages[0]["content"], str(messages[-1].get("content") or "")
    lines = [line for line in recalled.splitlines() if key in line]
    if any(line in system for line in lines):
        return "recall"
    if key in user_memory and user_memory.strip() in asked:  # the question's turn note
        return "user memory"
    return _where(messages, key)


def _where(messages: list[dict[str, Any]], key: str) -> str | None:
    """Which part of the context holds `key`: the system message (summary), a card, or a full message."""
    if key in messages[0]["content"]:
        return "summary"
    for message in messages[1:]:
        if key in json.dumps(message, ensure_ascii=False):
            content = str(message.get("content") or "")
            return "condensed" if message["role"] == "tool" and " · " in content else "recent"
    return None


def run() -> dict:
    return {"shape": "generator turns of 6 messages (question, 2 tool calls with ~1.5 KB and ~800 B results, "
                     "~400 B answer)",
            "config": {"model": CONFIG.model, "context_budget": CONFIG.context_budget,
                       "window": 128_000, "full_recent_count": CONFIG.full_recent_count,
                       "max_messages_per_thread": CONFIG.max_messages_per_thread,
                       "summariser": "extractive (scripted model: no summariser calls)"},
            "repeats": REPEATS, "results": measure_sizes(), "planted_facts": measure_facts(),
            "planted_facts_dense": measure_facts(dense=True),
            "planted_facts_by_window": [measure_windows(None), measure_windows(JunkSummariser())]}


def markdown(figures: dict) -> str:
    config = figures["config"]
    lines = [f"Shape: {figures['shape']}. Budget: min({config['window']:,}-token window of {config['model']}, "
             f"{config['context_budget']:,} cap); archival past {config['max_messages_per_thread']} messages; "
             f"summariser: {config['summariser']}. Tokens are the mean of the turn's model calls; save and load are "
             f"medians of {figures['repeats']}.", "",
             "| turns | messages (hot) | tokens sent | full history | last 6 messages | sent / full "
             "| state_data bytes | database bytes | save ms | load ms |", "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in figures["results"]:
        lines.append(f"| {r['turns']} | {r['messages']} ({r['hot_messages']}) | {r['tokens_sent']:,} "
                     f"| {r['tokens_full_history']:,} | {r['tokens_last6']:,} | {r['sent_share_of_full']:.1%} "
                     f"| {r['state_data_bytes']:,} | {r['database_bytes']:,} | {r['save_ms_median']} "
                     f"| {r['load_ms_median']} |")
    facts, dense = figures["planted_facts"], figures["planted_facts_dense"]
    lines += ["", f"Planted facts: {facts['facts']} facts (stated preferences and six-digit query results, "
              f"alternating) at turns {facts['planted_at'][0]}–{facts['planted_at'][-1]}, each asked about n turns "
              "later; present = the fact is in the context of that call (first found in: the summary in tier 1, a "
              "result card, a recent message). Dense: every third filler turn also ends in a single number, so "
              "the summary's scalar results compete (no recall in this run).", "",
              "| n | present | share | first found in | dense: present | dense: missing |",
              "|---:|---:|---:|---|---:|---|"]
    for g, d in zip(facts["gaps"], dense["gaps"]):
        where = ", ".join(f"{k} {v}" for k, v in g["via"].items())
        lines.append(f"| {g['n']} | {g['present']}/{g['of']} | {g['share']:.0%} | {where} "
                     f"| {d['present']}/{d['of']} ({d['share']:.0%}) | {', '.join(d['missing']) or '-'} |")
    lines += ["", "Planted facts with memory on (recall by keywords over the conversation's finished turns, user "
              "memory from the offline rules), the same facts and probes at each window, with the extractive "
              "summariser and with one that always returns junk; via = the tier the fact reached the request "
              "through (recall and user memory ride in the system message).", "",
              "| summariser | window | tokens sent (max) | " + " | ".join(f"n={g}" for g in GAPS) + " | via (all gaps) |",
              "|---|---:|---:|" + "---:|" * len(GAPS) + "---|"]
    for run in figures.get("planted_facts_by_window", []):
        for w in run["windows"]:
            via: dict[str, int] = {}
            for g in w["gaps"]:
                for k, v in g["via"].items():
                    via[k] = via.get(k, 0) + v
            lines.append(f"| {run['summariser']} | {w['window']:,} | {w['tokens_sent_max']:,} | "
                         + " | ".join(f"{g['share']:.0%}" for g in w["gaps"]) + " | "
                         + ", ".join(f"{k} {v}" for k, v in via.items()) + " |")
    return "\n".join(lines)
