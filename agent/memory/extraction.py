"""Extract memory candidates from what the user said in a turn.

With a real model (anything but the offline planner) the model proposes candidates as
JSON (`agent/prompts/memory_extraction.md`). Otherwise, or when the model fails, a
statement rules in English and Chinese do: any clause that does not ask anything and in which
users speak of themselves, their team or organisation, their data or words, or tell askdb how to
answer, becomes a candidate in its own words; a few explicit forms ("call me…", "our fiscal year
starts in April", "I only care about…", "我只关心2020年以后的数据") also fill a slot (`key`) so
a newer statement replaces an older one. Only the user's own words are read, never the answers.
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from pydantic import ValidationError

from agent.models.llm import ChatModel, ModelError
from agent.memory.user_memory import MemoryCandidate
from storage.text import has_cjk, is_cjk_char

log = logging.getLogger(__name__)

_PROMPTS = Path(__file__).resolve().parent.parent / "prompts"
_templates = Environment(loader=FileSystemLoader(_PROMPTS), undefined=StrictUndefined, autoescape=False,
                         trim_blocks=True, lstrip_blocks=True)

# Clauses: sentences (each keeps its closing mark, so a question is known by it), and a comma that
# starts a question ("I only care about 2020, how many...").
_CLAUSE = re.compile(r"(?<=[.!?;。！？；\n])|[,，]\s*(?=(?:how|what|which|who|when|where|show|list|give|tell|can|"
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


# A statement, as opposed to a question or a request for data, phrased any way (issue 22): a clause
# that does not ask (no question mark, no interrogative or data-request opening, no Chinese question
# word) and in which the users speak of themselves, their team or organisation, or tell askdb how to
# answer. The rules above only add a slot (`key`) and a value to the statements they recognise.
_ASKS_EN = re.compile(
    r"^(?:(?:ok|okay|so|and|also|now|then|please|hey)\W+)*(?:how|what(?!\s+(?:i|we)\s+mean)|what's|which|who|whom|"
    r"whose|when(?!\s+(?:i|we)\b)|where|why|"
    r"is|are|was|were|do|does|did|can|could|would|will|should|shall|may|has|have|had|show|list|give|find|count|"
    r"get|plot|chart|graph|draw|compare|tell|display|fetch|calculate|compute|rank|break|return|select|query|sum|"
    r"look up|search|remind|help|explain|describe|summari[sz]e|sort|filter|group|export|download|check|verify|"
    r"plot|visuali[sz]e|estimate|predict|split|divide|separate|narrow|restrict|limit|redo|repeat|"
    r"(?:only|just)\s+(?:the|those|these))\b", re.I)  # "Only the reusable ones": rows
_WANTS_DATA = re.compile(r"\bi(?:'d| would)?\s+(?:want|like|need|wish)\s+to\s+(?:see|know|find|get|check|look|learn)\b"
                         r"|我想(?:知道|看看?|查|了解)", re.I)
_ASKS_ZH = re.compile(r"[吗呢嘛]\s*[。.!！]?$|多少|哪|什么|几[个次年月天]|是否|怎么|如何|为什么|有没有|"
                      r"^(?:请)?(?:列出|显示|给我|查询|查一下|找出|告诉我|计算|比较|画|统计一下|提醒我|帮我|解释|描述|总结|排序|导出)")
_SELF_EN = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|myself|we|we're|we've|we'd|we'll|our|ours|us)\b", re.I)
_DIRECTIVE_EN = re.compile(r"^(?:please|always|never|from now on|keep|use|answer|reply|respond|round|avoid|don't|"
                           r"do not|leave out|exclude|include|report|write)\b|\bplease\b", re.I)
_SELF_ZH = re.compile(r"我|咱们|本公司|我司")
#: Words pointing at the answer before ("Split them by launch vehicle, please.", 把它们按火箭分开): a request about
#: this conversation's rows, not something durable to remember, unless the users speak of themselves too.
_BACK_EN = re.compile(r"\b(?:them|those|these|that list|the above)\b", re.I)
_BACK_ZH = re.compile(r"它们|这些|那些|上面|刚才")
_DIRECTIVE_ZH = re.compile(r"^(?:请|以后|今后|总是|始终|一律|不要|别|务必)|请")
#: A request to change this answer's rows ("Leave out the American sites."), not a standing rule, unless it says it
#: stands ("Always leave out …", "From now on exclude …").
_THIS_ANSWER_EN = re.compile(r"^(?:please\s+)?(?:leave out|exclude|include|drop|remove|skip|add)\s+the\b", re.I)
_STANDING_EN = re.compile(r"\b(?:always|from now on|never|in future|in the future|by default|every time|each time)\b",
                          re.I)
_TASK = re.compile(r"\b(?:working on|preparing|putting together|writing|building|drafting)\b|正在|在写|在做|准备", re.I)
_GROUP = re.compile(r"\b(?:we|we're|we've|we'd|we'll|our|ours|us)\b|我们|咱们|公司|团队|我司|本公司", re.I)


def is_question(clause: str) -> bool:
    """Whether a clause asks something (or asks for data) rather than states something."""
    clause = clause.strip()
    return (clause.endswith(("?", "？")) or bool(_ASKS_EN.search(clause)) or bool(_WANTS_DATA.search(clause))
            or bool(_ASKS_ZH.search(clause)))


def _statement(clause: str) -> MemoryCandidate | None:
    """A statement about the user, their organisation or data, or how to answer; None for anything else."""
    zh = has_cjk(clause)
    directive = bool((_DIRECTIVE_ZH if zh else _DIRECTIVE_EN).search(clause))
    speaks_of_self = bool((_SELF_ZH if zh else _SELF_EN).search(clause))
    if not directive and not speaks_of_self:
        return None
    if not speaks_of_self and (_BACK_ZH if zh else _BACK_EN).search(clause):
        return None
    if not zh and _THIS_ANSWER_EN.search(clause) and not _STANDING_EN.search(clause):
        return None  # "Leave out the American sites.": of the answer before
    if len(clause) < (4 if zh else 12):
        return None
    if _TASK.search(clause):
        kind, key = "TASK", "current_task"
    elif _GROUP.search(clause) and not directive:
        kind, key = "FACT", None
    else:
        kind, key = "PROFILE", next((k for p, k in _TOPIC_KEYS if p.search(clause)), None)
    return MemoryCandidate(type=kind, text=_sentence(clause), importance=0.6, key=key, value=clause[:300],
                           tags=["offline"])


def clauses(text: str) -> list[str]:
    """The clauses of a message (sentences, and a comma that starts a question)."""
    text = re.sub(r"[,，]\s*(please)\b", r" \1", text or "", flags=re.I)  # "Answers in Chinese, please."
    return [c for c in (c.strip(" \t\n,，:：") for c in _CLAUSE.split(text)) if len(c.rstrip(".!;。！；")) >= 2]


def extract_offline(text: str) -> list[MemoryCandidate]:
    """Candidates from the statements in `text`, one per clause at most; questions give none."""
    found: list[MemoryCandidate] = []
    for clause in clauses(text):
        if len(clause) < 4 or is_question(clause):
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
        else:
            statement = _statement(clause)
            if statement is not None:
                found.append(statement)
    return found


def only_statements(text: str) -> bool:
    """Whether every clause of `text` is a statement for memory (nothing is asked): such a message
    is answered by acknowledging what was remembered, not by querying the database."""
    parts = clauses(text)
    return bool(parts) and not any(is_question(c) for c in parts) and len(extract_offline(text)) == len(parts)


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
    if clause and clause[-1] not in ".!。！" and not is_cjk_char(clause[-1]):
        clause += "."
    return clause[0].upper() + clause[1:] if clause[:1].islower() else clause
