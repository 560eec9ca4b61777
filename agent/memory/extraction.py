"""Extract memory candidates from what the user said in a turn.

With a real model (anything but the offline planner) the model proposes candidates as
JSON (`agent/prompts/memory_extraction.md`). Otherwise, or when the model fails, a
few explicit-statement rules in English and Chinese do: "call me…", "I prefer…",
"our fiscal year starts in April", "I only care about…", "remember that…",
"我只关心2020年以后的数据". Only the user's own words are read, never the answers.
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from pydantic import ValidationError

from agent.llm import ChatModel, ModelError
from agent.memory.user_memory import MemoryCandidate

log = logging.getLogger(__name__)

_PROMPTS = Path(__file__).resolve().parent.parent / "prompts"
_templates = Environment(loader=FileSystemLoader(_PROMPTS), undefined=StrictUndefined, autoescape=False,
                         trim_blocks=True, lstrip_blocks=True)

# Clauses: sentences, and a comma that starts a question ("I only care about 2020, how many...").
_CLAUSE = re.compile(r"[.!?;。！？；\n]+|[,，]\s*(?=(?:how|what|which|who|when|where|show|list|give|tell|can|"
                     r"could|please|and)\b)|，", re.I)
_TOPIC_KEYS = [
    (re.compile(r"chart|graph|plot|table|csv|format|图表|表格|图", re.I), "output_format"),
    (re.compile(r"english|chinese|中文|英文|language|语言", re.I), "language"),
    (re.compile(r"metric|imperial|units?\b|kilo|pounds|miles|单位", re.I), "units"),
]
_MONTH = (r"(january|february|march|april|may|june|july|august|september|october|november|december|"
          r"jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec|[一二三四五六七八九十]+月|\d{1,2}月)")
# (pattern, type, key or None, importance); the value is the pattern's first group.
_RULES: list[tuple[re.Pattern, str, str | None, float]] = [
    (re.compile(r"\b(?:please\s+)?call me\s+([^\s,.!?;]+(?:\s+[A-Z][^\s,.!?;]*)?)", re.I), "PROFILE", "preferred_name", 0.9),
    (re.compile(r"\bmy name is\s+([^\s,.!?;]+(?:\s+[A-Z][^\s,.!?;]*)?)", re.I), "PROFILE", "preferred_name", 0.9),
    (re.compile(r"(?:请)?(?:叫我|称呼我为?|我的名字是)\s*([^\s，。！？,.!?]{1,20}?)(?:吧|就行|就好)?$"), "PROFILE",
     "preferred_name", 0.9),
    (re.compile(rf"\b(?:our|my|the company'?s?)\s+(?:fiscal|financial)\s+year\s+(?:starts|begins|start|begin)\s+"
                rf"(?:in|on)\s+{_MONTH}", re.I), "FACT", "fiscal_year_start", 0.8),
    (re.compile(rf"我们?的?(?:财年|财政年度|会计年度)(?:从|是从)?\s*{_MONTH}\s*(?:开始|起)"), "FACT", "fiscal_year_start", 0.8),
    (re.compile(r"\bi(?:'m| am)?\s*(?:only|mostly|mainly)\s+(?:care|interested|want to see|look)\s+(?:about|in|at)\s+"
                r"(.+)", re.I), "PROFILE", "focus", 0.7),
    (re.compile(r"我(?:只|主要|仅)(?:关心|关注|看|要看|需要)(.+)"), "PROFILE", "focus", 0.7),
    (re.compile(r"\bi(?:'d| would)?\s+(?:prefer|rather have|always want)\s+(.+)", re.I), "PROFILE", None, 0.7),
    (re.compile(r"我(?:更|比较)?(?:喜欢|偏好|倾向于|希望)(.+)"), "PROFILE", None, 0.7),
    (re.compile(r"\bi(?:'m| am)\s+(?:currently\s+)?working on\s+(.+)", re.I), "TASK", "current_task", 0.6),
    (re.compile(r"我(?:正在|在)(?:做|写|准备)(.+)"), "TASK", "current_task", 0.6),
    (re.compile(r"\bremember(?: that)?\s+(.+)", re.I), "FACT", None, 0.8),
    (re.compile(r"(?:请)?记住(.+)"), "FACT", None, 0.8),
]


def extract_offline(text: str) -> list[MemoryCandidate]:
    """Candidates from explicit statements in `text`, one per clause at most."""
    found: list[MemoryCandidate] = []
    for clause in _CLAUSE.split(text or ""):
        clause = clause.strip(" \t,，:：")
        if len(clause) < 4 or clause.endswith(("?", "？")):
            continue
        for pattern, kind, key, importance in _RULES:
            match = pattern.search(clause)
            if not match:
                continue
            value = match.group(1).strip(" '\"“”")
            if key is None:
                key = next((k for p, k in _TOPIC_KEYS if p.search(value)), None)
            found.append(MemoryCandidate(type=kind, text=_sentence(clause), importance=importance, key=key,
                                         value=value[:300] or None, tags=["offline"]))
            break
    return found


def extract_with_model(model: ChatModel, text: str, *, known_keys: list[str] = ()) -> list[MemoryCandidate]:
    """Candidates proposed by the chat model as JSON.

    Raises:
        ModelError: the endpoint failed.
        ValueError: the reply held no JSON object with a `memories` list.
    """
    prompt = _templates.get_template("memory_extraction.md").render(known_keys=list(known_keys))
    reply = model.complete([{"role": "system", "content": prompt}, {"role": "user", "content": text}], [])
    raw = _json_object(reply.content or "")
    if not isinstance(raw.get("memories"), list):
        raise ValueError("the reply has no `memories` list")
    candidates = []
    for entry in raw["memories"]:
        try:
            candidates.append(MemoryCandidate.model_validate(entry))
        except ValidationError as exc:
            log.info("memory candidate skipped: %s", exc.errors()[0]["msg"])
    return candidates


# Words by which people say something about themselves or their organisation. A question
# without any ("How many launches in 2020?") holds nothing durable, and asking the model
# about it would double the calls of a turn for nothing.
_PERSONAL = re.compile(r"\b(i|i'm|i've|me|my|mine|we|we're|our|ours|us|call me|prefer|please|from now on"
                       r"|always|never)\b|我|咱们|喜欢|偏好|总是|只关心|以后|请", re.I)


def extract(text: str, *, model: ChatModel | None = None, known_keys: list[str] = ()) -> list[MemoryCandidate]:
    """Candidates from the user's words: by `model` (when the words say something about the user,
    and the model is not the offline planner), falling back to the offline rules when it fails."""
    if model is not None and not _is_offline(model) and _PERSONAL.search(text or ""):
        try:
            return extract_with_model(model, text, known_keys=known_keys)
        except (ModelError, ValueError) as exc:
            log.warning("memory extraction by the model failed (%s); using the offline rules", exc)
    return extract_offline(text)


def _is_offline(model: ChatModel) -> bool:
    from agent.offline_planner import OfflinePlanner

    return isinstance(model, OfflinePlanner)


def _json_object(text: str) -> dict:
    text = re.sub(r"^```(?:json)?\s*|\s*```$", "", text.strip())
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        raise ValueError("the reply holds no JSON object")
    value = json.loads(text[start:end + 1])
    if not isinstance(value, dict):
        raise ValueError("the reply's JSON is not an object")
    return value


def _sentence(clause: str) -> str:
    clause = clause.strip()[:300]
    if clause and clause[-1] not in ".!。！" and not re.search(r"[\u4e00-\u9fff]$", clause):
        clause += "."
    return clause[0].upper() + clause[1:] if clause[:1].islower() else clause
