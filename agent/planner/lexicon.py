"""Generic bilingual vocabulary of the offline planner, kept as plain data.

Only question words, aggregates, comparisons, time words and common nouns live
here, never a table or column name of a particular database: the planner reads
those from the schema, and a database's own words (what its users call its
tables, in English and Chinese) from its vocabulary file (`agent.vocabulary.domain`),
added by `Lexicon.of`. A noun listed here (country, aircraft) helps only when some
database happens to use that word in a table or column name.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

from agent.vocabulary.domain import DomainVocabulary
from agent.vocabulary.numbers import MEASURE_WORDS_ZH
from agent.vocabulary.ranking import HIGHEST, LEAST, LOWEST, MAXIMUM, MINIMUM, MOST, TOP, ZH_HOW_VALUE, ZH_SUPERLATIVES
from storage.text import has_cjk, singular

#: English phrases (lower case, as written) -> keyword code. Longest phrase wins.
KEYWORDS: dict[str, str] = {
    # counting
    "how many": "count", "number of": "count", "count of": "count", "count": "count", "counts": "count",
    "total number of": "count", "the number of": "count",
    # aggregates of a numeric column; a word of a total after its measure ("the payload mass in total",
    # 质量一共) is sum_post: the SUM of that measure, and nothing more beside a count ("how many in total")
    "average": "avg", "mean": "avg", "avg": "avg",
    "total": "sum", "sum": "sum", "sum of": "sum", "combined": "sum", "sum total": "sum",
    # "How much payload mass went to TLI?": the mass of all of them, summed (a number of rows is "how many")
    "how much": "sum",
    "in total": "sum_post", "altogether": "sum_post", "all together": "sum_post",
    "added together": "sum_post", "added up": "sum_post", "put together": "sum_post",
    **dict.fromkeys(MAXIMUM, "max"), **dict.fromkeys(MINIMUM, "min"),
    # superlatives: a ranking (which X has the highest Y) or an aggregate (what is the highest Y)
    **dict.fromkeys(HIGHEST + MOST, "most"), **dict.fromkeys(LOWEST + LEAST, "least"), **dict.fromkeys(TOP, "top"),
    # grouping
    "each": "group", "per": "group", "every": "group", "for each": "group", "for every": "group",
    "by": "by", "grouped by": "group",
    # comparisons before a number ("more than 10") and after it ("10 or more")
    "more than": "gt", "greater than": "gt", "larger than": "gt", "higher than": "gt",
    "bigger than": "gt", "over": "gt", "above": "gt", "exceeding": "gt",
    "at least": "ge", "no less than": "ge", "no fewer than": "ge", "or more": "ge_post",
    "less than": "lt", "fewer than": "lt", "lower than": "lt", "smaller than": "lt",
    "below": "lt", "under": "lt",
    "at most": "le", "no more than": "le", "or less": "le_post", "or fewer": "le_post",
    "between": "between",
    # a comparative split from its "than" ("a greater weight than 10")
    "greater": "gt", "higher": "gt", "larger": "gt", "bigger": "gt", "more": "gt",
    "less": "lt", "fewer": "lt", "lower": "lt", "smaller": "lt",
    # time relations, before a year ("since 2015") or after it (Chinese "2015年以来")
    "in": "in", "during": "in", "since": "since", "from": "from", "starting": "since",
    "since the start of": "since", "since the beginning of": "since", "from the start of": "since",
    "from the beginning of": "since", "before the start of": "before", "before the beginning of": "before",
    "after": "after", "post": "after", "later than": "after", "before": "before", "prior to": "before",
    "earlier than": "before", "until": "until", "through": "until", "to": "to",
    # shape of the answer
    "distinct": "distinct", "different": "distinct", "unique": "distinct", "separate": "distinct",
    "times": "times",
    "not": "not", "except": "not", "excluding": "not", "leave out": "not", "exclude": "not", "other than": "not", "without": "not",
    "never": "not", "no": "not", "no longer": "not", "not anymore": "not", "outside": "not", "outside of": "not",
    "don": "not", "doesn": "not", "didn": "not", "haven": "not", "hasn": "not", "hadn": "not", "aren": "not",
    "isn": "not", "wasn": "not", "weren": "not",
    "both": "both", "neither": "both",
    "ordered by": "order", "sorted by": "order", "order by": "order", "sort by": "order",
    "in order of": "order", "order of": "order", "ranked by": "order", "in descending order of": "order_desc",
    "in ascending order of": "order_asc",
    "descending": "desc", "decreasing": "desc", "desc": "desc",
    "in descending order": "desc", "descending order": "desc", "in ascending order": "asc", "ascending order": "asc",
    "ascending": "asc", "increasing": "asc", "asc": "asc", "alphabetical": "asc",
    "which": "which", "who": "which", "list": "list", "show": "list", "what are": "list",
    "most common": "most_common", "most popular": "most_common", "most frequent": "most_common",
    "most often": "most_common", "most frequently": "most_common",
    # "Which orbit did most of them go to?", "What were most of them for?": the value most of the rows have
    "most of them": "most_common", "most of those": "most_common", "most of these": "most_common",
    **{f"the {big} number of {them}": "most_common" for big in ("largest", "greatest", "highest", "biggest")
       for them in ("them", "those", "these")},
    # "Which orbits did payloads mainly go to?": every value of it, with how many rows have it, the most first
    "mainly": "mainly", "mostly": "mainly", "primarily": "mainly", "chiefly": "mainly",
    # time buckets ("per month", "by quarter", "monthly"); "year" stays a column-like marker
    "month": "unit_month", "months": "unit_month", "monthly": "unit_month",
    "quarter": "unit_quarter", "quarters": "unit_quarter", "quarterly": "unit_quarter",
    "half year": "unit_half", "half years": "unit_half", "half-year": "unit_half", "semester": "unit_half",
    # "in each half of 2022": the halves of the year, "half" alone after a word of grouping (not "half of the launches")
    "each half": "unit_half", "every half": "unit_half", "per half": "unit_half", "by half": "unit_half",
    "decade": "unit_decade", "decades": "unit_decade", "yearly": "unit_year", "annually": "unit_year",
    "annual": "unit_year",
    # periods relative to today ("last year", "the past 5 years")
    "last year": "rel_last_year", "previous year": "rel_last_year", "this year": "rel_this_year",
    "year before last": "rel_year_before_last", "past": "rel_past", "last": "rel_past",
    "previous": "rel_past", "recent": "rel_past",
    # shares and rates: a condition counted against all rows ("what share of launches failed")
    "share of": "share", "share": "share", "percentage of": "share", "percentage": "share",
    "percent of": "share", "proportion of": "share", "proportion": "share", "fraction of": "share",
    "rate": "rate", "ratio": "rate",
    # a comparison of the values listed ("Compare the launches of China and Russia"): one row each
    "compare": "compare", "comparing": "compare", "compared": "compare", "versus": "compare", "vs": "compare",
    # a change between two periods ("By what percent did launches change from 2024 to 2025?", 同比增长): each period's
    # figure, the difference and the change in percent (`RoleResolver._change_asked`)
    "change": "change", "changed": "change", "grow": "change", "grew": "change", "grown": "change",
    "growth": "change", "increase": "change", "increased": "change", "decrease": "change", "decreased": "change",
    "rise": "change", "rose": "change", "drop": "change", "dropped": "change", "decline": "change",
    "declined": "change", "percent change": "change", "percentage change": "change",
    "year-over-year": "change", "year over year": "change", "year-on-year": "change", "year on year": "change",
    "yoy": "change",
}

#: Comparative adjectives used with "than": word -> (comparison, hint words for the column).
COMPARATIVES: dict[str, tuple[str, tuple[str, ...]]] = {
    "older": ("gt", ("age",)), "younger": ("lt", ("age",)),
    "heavier": ("gt", ("weight", "mass")), "lighter": ("lt", ("weight", "mass")),
    "taller": ("gt", ("height",)), "shorter": ("lt", ("height", "length")),
    "longer": ("gt", ("length", "range")), "farther": ("gt", ("range", "distance")),
    "further": ("gt", ("range", "distance")), "faster": ("gt", ("speed",)), "slower": ("lt", ("speed",)),
    "more expensive": ("gt", ("price", "cost")), "cheaper": ("lt", ("price", "cost")),
}

#: Chinese comparatives after 比 and a named row (比猎鹰9号还大): character -> (comparison, hint words for the column).
ZH_COMPARATIVES: dict[str, tuple[str, tuple[str, ...]]] = {
    "大": ("gt", ()), "高": ("gt", ()), "多": ("gt", ()), "强": ("gt", ()), "小": ("lt", ()), "低": ("lt", ()),
    "少": ("lt", ()), "快": ("gt", ("speed",)), "慢": ("lt", ("speed",)), "重": ("gt", ("weight", "mass")),
    "轻": ("lt", ("weight", "mass")), "远": ("gt", ("range", "distance")), "长": ("gt", ("length", "range")),
    "短": ("lt", ("length", "range")), "贵": ("gt", ("price", "cost")), "便宜": ("lt", ("price", "cost")),
}

#: Generic English synonyms: a question word -> other words a schema may use for it. A database's own
#: words ("rocket" for its vehicles) are its vocabulary file's (`agent.vocabulary.domain`).
SYNONYMS: dict[str, tuple[str, ...]] = {
    "company": ("manufacturer", "maker"), "maker": ("manufacturer",),
    "manufacturer": ("maker", "company"), "nation": ("country",), "plane": ("aircraft",), "airplane": ("aircraft",),
    "fly": ("flight",), "flew": ("flight",), "flown": ("flight",),
    "launched": ("launch",), "weight": ("mass",), "mass": ("weight",),
    "type": ("kind", "category"), "kind": ("type", "category"), "category": ("type", "kind"),
    "price": ("cost",), "cost": ("price",), "person": ("people",), "people": ("person",),
    "place": ("site", "location"), "location": ("site",),
    "result": ("outcome",), "outcome": ("result",), "failed": ("failure",), "fail": ("failure",), "failure": ("failed",),
    "successful": ("success",), "succeeded": ("success",), "succeed": ("success",), "founded": ("found",),
    "weigh": ("weight", "mass"), "weighs": ("weight", "mass"), "weighed": ("weight", "mass"),
    "weighing": ("weight", "mass"),
}

#: Verbs opening a question that asks for rows in an order ("Rank manufacturers by …", "Sort the sites by …").
ORDER_VERBS: frozenset[str] = frozenset({"rank", "sort", "order"})

#: Chinese ways of asking when (filler in `ZH_WORDS`, named when the answer shows no date: `accounting`).
WHEN_WORDS_ZH: tuple[str, ...] = ("什么时候", "哪一天", "哪几天", "哪天", "何时")

#: Chinese words -> English words (which then go through KEYWORDS and SYNONYMS).
#: Segmentation is longest match first; characters not listed are skipped, and so are
#: words mapped to "" (listed only so that a shorter word inside them is not read).
ZH_WORDS: dict[str, str] = {
    "是多少": "", "为多少": "", "是什么": "", "分别是": "",
    # 这几款里哪款航程最长？, 这五个发射场…: "these few", "these five", pointing back (`references.THOSE_ZH`), not 几
    # "how many" nor the number 5
    **{f"{this}{few}{counter}": "" for this in "这那" for few in ("几", *"两二三四五六七八九十")
       for counter in "款个种家次颗架座枚台位"},
    # filler: the Chinese stop list (`FILLER_WORDS_ZH`): adverbs of time that add no condition (目前, not
    # 目 and 前 "top"), measure words (多少颗卫星), verbs of making that name no column of their own
    "来自": "", "目前": "", "现在": "", "当前": "", "如今": "", "仍然": "", "依然": "", "仍": "", "还": "", "一直": "", "迄今为止": "", "至今为止": "", "到目前为止": "", "截至目前": "", "截止目前": "", "截至今天": "", "截至现在": "",
    "飞了": "", "飞过": "", "例如": "", "比如": "", "诸如": "", "自己的": "", "自己": "", "类": "", "再": "",
    "曾经": "", "总体": "", "生产": "", "制造": "", "造的": "", "造了": "", "拥有": "",
    # verbs of carrying out (太原卫星发射中心执行了哪些发射任务: the site's launches are those it carried out)
    "执行": "", "进行": "", "实施": "", "开展": "", "完成": "", "承担": "",
    # words of a negation's rows that add no condition (没有任何发射记录: no launch at all; 没有制造商记录: no maker)
    "任何": "", "记录": "",
    # verbs of carrying (每次发射搭载几个载荷: the payloads of each launch, as the join says)
    "搭载": "", "携带": "", "运载": "", "送了": "", "送入": "", "送上": "", "送上去": "", "送上天": "", "用于": "", "用来": "", "用作": "", "送上了": "", "送往": "",
    # verbs of being fitted with (装有4台发动机的飞机: the count column says it)
    "装有": "", "装了": "", "装备": "", "配备": "", "配有": "", "装在": "", "装于": "",
    # 俄罗斯境内有哪些发射场？: in Russia, as 俄罗斯 alone says
    # 是用 (它是用哪种火箭发射的？: launched with which rocket): the join between them, as "used" between two
    # things; not 使用 (仍在使用: still in use, a condition)
    "是用": "", "分别用": "",
    "境内": "", "所属": "", "所在": "", "间": "",
    # 那一年的发射成功率是多少？ after the busiest year: that year, the previous answer's (not 一, one)
    "那一年": "", "这一年": "",
    # conjunctions between the parts of a question (运营过载荷，但从来没有运营过军用载荷: the negation says it)
    "但": "", "但是": "", "却": "", "而且": "", "并且": "",
    # 由哪个国家运营: operated by which country, as the join says
    "由": "", "那边": "", "这边": "", "那里": "",  # 西昌那边呢？: at Xichang
    # asking: 请帮我查一下, 告诉我, 看看, 能不能列一下 (the question says what to show)
    "一下": "", "帮我": "", "告诉我": "", "告诉": "", "看看": "", "看一看": "", "能不能": "", "能否": "",
    "请问": "", "请": "", "查": "", "列": "list",
    # 什么时候, 何时: when, which the date shown says (最后一次发射是什么时候？ shows the latest launch's date)
    **dict.fromkeys(WHEN_WORDS_ZH, ""), "从来": "",  # 从来没有: never, as 没有 says
    # 分别, 具体: each and which, as the grouping says; 发生 (2019年发生了多少次失败): the rows happened
    "分别": "", "具体": "", "发生": "", "历次": "",
    # 按用途分呢？, 按火箭拆分一下 (split by, as 按 says); 占多少比例 (make up: the share says it)
    "分": "", "拆分": "", "细分": "", "占": "",
    # 不是完全成功的 (not a full success: the negation says it); 发往 (sent to: the orbit or place named after)
    "完全": "", "发往": "", "进入": "", "去往": "", "去了": "", "送进": "", "送出": "", "送上": "", "去": "", "处于": "",
    # 它们用的是哪些火箭？: the rockets they used, as the join says
    "用的": "", "用了": "", "用过": "", "使用过": "",
    # 罗尔斯·罗伊斯供应的发动机部件: supplied by, as the supplier join says (生产, 制造 likewise)
    "供应": "", "提供": "",
    # 只看中国制造商的呢？: "only", as the follow-up reader reads it
    "只看": "only", "仅看": "only", "只算": "only", "只统计": "only",
    # 换成韩国呢？: the new value instead of the old, as the follow-up reader reads it
    "换成": "instead", "改成": "instead", "换为": "instead", "改为": "instead",
    # verbs of tallying: what is tallied is named by 数量, 总和, 平均 (按国家统计发射场数量)
    "统计": "", "统计一下": "", "汇总": "", "合起来": "",
    # 最早投入使用的发射场: the first to open, as the superlative on the date says (投入使用 is the opening, not a use)
    "投入使用": "", "投入运营": "",
    # 东方航天港自启用以来，每年…: since it opened, which every launch from it is; no condition
    "自启用以来": "", "启用以来": "", "自投入使用以来": "", "投入使用以来": "", "自建成以来": "", "建成以来": "",
    # 其中属于欧洲的有哪些？: in Europe, as 欧洲 alone says (the condition or the join names the relation)
    "属于": "",
    # 上天 (went up: were launched), as the rows' launch says; 搭…上天 (rode … up), the rocket named says it
    "上天": "", "搭": "",
    # 它们当中: among them, as 它们 says
    "当中": "",
    # 结果怎么样？, 成功率怎么样？: how it is, which the column shown says
    "怎么样": "", "怎样": "",
    # 是怎么分布的？, 分布情况: how the rows fall into the groups 各 names, which the grouping says
    "怎么": "", "分布": "", "情况": "",
    # 从美国本土发射的: from the country itself, as 美国 alone says
    "本土": "",
    # 航电系统, 动力系统: the parts' kind with its generic word (航电 says it)
    "系统": "",
    # 千帆极轨星座: the named family, a constellation; 星座 says what it is, no condition
    "星座": "",
    # 其中 (of them), read from the text by the follow-up and second-count readers; a word, so 其中星链 is not 中星
    "其中": "",
    # 3月到6月之间, 3月到8月期间 (the range says it)
    "之间": "", "期间": "",
    # 占全部发射的百分之几, 列出全部发射场: all of them, which no condition says
    "全部": "",
    **dict.fromkeys(MEASURE_WORDS_ZH, ""),
    # question words and aggregates
    "多少": "how many", "几": "how many", "数量": "number of", "个数": "number of", "次数": "number of",
    "平均": "average", "均值": "average", "总": "total", "总计": "total", "合计": "total",
    "总和": "total", "总共": "in total", "一共": "in total", "共计": "in total",
    "加起来": "in total", "加在一起": "in total", "加总": "in total",
    **ZH_SUPERLATIVES,
    **ZH_HOW_VALUE,
    "每个": "each", "每次": "each", "每一个": "each", "每一": "each", "每": "each", "各个": "each", "各自": "each",
    "各": "each", "各国": "each country", "每国": "each country",
    "按照": "by", "按": "by",
    "超过": "more than", "大于": "more than", "多于": "more than", "高于": "more than", "不止": "more than",
    "以上": "or more", "至少": "at least", "不少于": "at least", "不低于": "at least",
    "少于": "less than", "小于": "less than", "低于": "less than", "不到": "less than",
    "以下": "or less", "不超过": "at most", "不多于": "at most", "介于": "between",
    # time relations ("2015年以来"); "前" is "top" before a number and "before" after a year
    "以来": "since", "至今": "since", "迄今": "since", "起": "since", "之后": "since", "以后": "since", "后": "since",
    "之前": "before", "以前": "before", "前": "top", "从": "from", "自": "from", "到": "to", "至": "to",
    "年": "year", "年份": "year", "在": "in",
    # shape of the answer
    "列出": "list", "列举": "list", "显示": "show", "给出": "list", "查询": "list",
    "哪些": "which", "哪几": "which", "哪几次": "which", "哪几个": "which", "哪个": "which", "哪家": "which",
    "哪一个": "which", "哪一款": "which", "哪一种": "which", "哪一家": "which", "哪一位": "which", "哪一次": "which",
    "哪款": "which", "哪种": "which", "哪": "which", "谁": "who", "什么": "which",
    "主要": "mainly", "主要集中在": "mainly", "集中在": "mainly",  # 主要是哪些用途: as "mainly"
    # 两国各自的成功率: the two named before (中国和美国), as their values say
    "两国": "", "两家": "", "两者": "", "二者": "", "双方": "",
    # 在数据中, 数据库里: in the data, where every answer is from
    "在数据中": "", "数据中": "", "数据里": "", "数据库中": "", "数据库里": "", "库里": "",
    "是不是": "", "是否": "",  # 是不是都成功了？: asks yes or no, no "not"
    # 因为那次发射本身失败了: the cause said is the condition itself (the launch's failure), read by its own words
    "因为": "", "由于": "", "本身": "",
    "不同": "distinct", "不是": "not", "非": "not", "除了": "except", "没有": "without", "从未": "never",
    "没": "not", "未能": "not",  # 有几次没成功？: the launches that did not succeed
    # 一次都没有发射, 一次也没发射过: not once, as 从未 (else 一 is read as the number one)
    "一次都没有": "never", "一次也没有": "never", "一次都没": "never", "一次也没": "never",
    "同时": "both", "次": "times",
    "降序": "descending", "从高到低": "descending", "升序": "ascending", "从低到高": "ascending",
    "从多到少": "descending", "从大到小": "descending", "从少到多": "ascending", "从小到大": "ascending",
    "排列": "", "总部": "", "总部位于": "",
    "排序": "sorted by", "排名": "", "排个名": "", "排一下": "", "排个序": "",
    # 数量排第一: ranks first, the most (else 一 is read as the number one)
    "排第一": "most", "排名第一": "most", "排在第一": "most", "位居第一": "most", "位列第一": "most",
    "送入太空": "", "太空": "",  # 送入太空的载荷: the payloads launched (space is where every launch goes)
    # generic nouns (a database's own, 运载火箭 or 首飞, are in its vocabulary file)
    "国家": "country", "地区": "region", "区域": "region", "城市": "city", "公司": "company",
    "制造商": "manufacturer", "厂商": "manufacturer", "生产商": "manufacturer", "供应商": "supplier",
    "飞机": "aircraft", "飞行器": "aircraft",
    "中心": "center", "基地": "base", "地点": "location", "类型": "type", "种类": "kind", "类别": "category",
    "名称": "name", "名字": "name", "型号": "model", "机型": "model",
    "质量": "mass", "重量": "weight", "高度": "height", "速度": "speed",
    "成本": "cost", "价格": "price", "零件": "part",
    "用途": "purpose", "目的": "purpose", "状态": "status", "角色": "role",
    "任务": "mission", "日期": "date", "结果": "outcome",
    "多高": "height", "纬度": "latitude", "经度": "longitude", "北纬": "latitude", "东经": "longitude", "最大速度": "max speed", "最高速度": "max speed", "备注": "note",
    "代码": "code", "单价": "unit cost", "单位成本": "unit cost",
    "失败": "failure", "成功": "success", "人口": "population", "语言": "language",
    "面积": "area", "年龄": "age", "员工": "employee", "产品": "product",
    "成立": "founded", "成立时间": "founded", "成立年份": "founded", "运营": "operator",
    "运营商": "operator", "城": "city",
    # time buckets and relative periods
    "月": "month", "每月": "per month", "月份": "month", "季度": "quarter", "每季度": "per quarter",
    "半年": "half year", "年代": "decade", "去年": "last year", "今年": "this year", "前年": "year before last",
    "过去": "past", "近": "past", "最近几": "past",
    # shares and rates
    "对比": "compare", "比较": "compare", "相比": "compare", "相较": "compare",
    "变化": "change", "增长": "growth", "增加": "increase", "减少": "decrease", "下降": "decline", "增幅": "growth",
    "降幅": "decline", "涨幅": "growth", "同比": "change", "同比增长": "growth",
    "比例": "share", "占比": "share", "占多少": "share", "占几成": "share",
    "占多少比例": "share", "占多大比例": "share", "占多少百分比": "share", "百分比": "share", "百分之几": "share", "百分之多少": "share", "比率": "rate",
    "率": "rate",
}



@dataclass(frozen=True)
class Lexicon:
    """The words a question is read by: the generic `SYNONYMS` and `ZH_WORDS`, with one source's own
    words added (`DomainVocabulary`); a source's Chinese word takes the place of a generic one."""

    synonyms: Mapping[str, tuple[str, ...]]
    zh_words: Mapping[str, str]

    @classmethod
    def of(cls, domain: DomainVocabulary | None = None) -> Lexicon:
        """The generic lexicon with `domain`'s words added; the generic one alone for None."""
        if not domain:
            return GENERIC
        synonyms = dict(SYNONYMS)
        for word, others in domain.synonyms.items():
            known = synonyms.get(word, ())
            synonyms[word] = known + tuple(o for o in others if o not in known)
        return cls(synonyms, {**ZH_WORDS, **domain.chinese})

    @cached_property
    def zh_longest(self) -> int:
        """The length of the longest Chinese word, where segmentation starts (longest match first)."""
        return max(len(k) for k in self.zh_words)

    @cached_property
    def chinese_names(self) -> dict[str, str]:
        """The English words the Chinese words stand for -> the first Chinese word for each."""
        names: dict[str, str] = {}
        for zh, english in self.zh_words.items():
            if english and not has_cjk(english):
                names.setdefault(english, zh)
        return names

    @cached_property
    def phrases(self) -> re.Pattern[str] | None:
        """The synonyms' keys of more than one word ("sun-synchronous", "low earth orbit"), longest first: a
        question's phrase the token-by-token reading would split, read as its synonym's word instead (None: none)."""
        keys = sorted((k for k in self.synonyms if re.search(r"[\s-]", k)), key=len, reverse=True)
        return re.compile(r"\b(?:" + "|".join(map(re.escape, keys)) + r")\b", re.I) if keys else None

    def synonyms_of(self, word: str) -> tuple[str, ...]:
        """Other words a schema may use for `word` (a lower-case English word) or its singular."""
        return (*self.synonyms.get(word, ()), *self.synonyms.get(singular(word), ()))


#: The Chinese stop list: words read as nothing (是多少, 目前, 颗), never named as a word left out.
FILLER_WORDS_ZH: frozenset[str] = frozenset(word for word, english in ZH_WORDS.items() if not english)
#: The English stop list: words that, left unused, never raise a caveat, for they name no condition,
#: measure or grouping: adverbs of time and degree ("still", "currently", "so far") and verbs of making
#: and operating that the schema's keys already say ("operates", "made"), and of taking part ("hosted",
#: "involved": the launches a site hosted are its launches). Only words the planner read as
#: no name: a word it took for a table, column or value and did not use is still named (issue 38). Not
#: "built": Spider dev's "not built by 'Ford Motor Company'" was answered wrong with only it named.
FILLER_WORDS: frozenset[str] = frozenset("""
still currently presently now ever so far already actually really anymore nowadays overall
even though although
make makes made making produce produces produced producing operate operates operated operating
own owns owned run runs
host hosts hosted hosting involve involves involved involving feature features featured
break breaks broke broken breakdown down split splits database
send sends sent sending go goes went gone going carry carries carried carrying counting headed heading
lift lifts lifted lifting exactly specifically precisely respectively
receive receives received receiving get gets got fully completely entirely
suffer suffers suffered suffering whole put puts putting placed listed end ends ended ending way outright
provide provides provided providing alone rack racks racked racking notch notches notched notching
log logs logged logging chalk chalks chalked chalking clock clocks clocked clocking posted
achieve achieves achieved achieving manage manages managed managing attract attracts attracted attracting
handle handles handled handling conduct conducts conducted conducting perform performs performed performing
execute executes executed executing field fields fielded fielding loft lofts lofted lofting deploy deploys deployed
deploying turn turns turned turning add adds added adding somewhere recorded fitted mounted
belong belongs belonged belonging account accounts accounted marked behind space distributed spread
reach reaches reached reaching based located headquartered
""".split())

#: Verbs that say how the rows of two things relate ("launches used Russian rockets"): read as the join
#: between them when they stand between the two (`accounting._relating_verb`), named as unused elsewhere.
RELATING_VERBS: frozenset[str] = frozenset("use uses used using".split())

#: Verbs of making, filler in most questions ("Which aircraft does Boeing make?"), and the words of a column
#: counting what was made (units built): in a count of rows of such a table they may mean that column
#: (`accounting._making_words`), so there they are named.
MAKING_VERBS: frozenset[str] = frozenset("""
make makes made making produce produces produced producing build builds built building
manufacture manufactures manufactured manufacturing
""".split())
MAKING_VERBS_ZH: tuple[str, ...] = ("生产", "制造", "建造", "造了", "造的")
MAKING_COLUMN_WORDS: frozenset[str] = frozenset({"built", "produced", "made", "manufactured", "production"})
#: The words a schema names its makers' table by: "who made them?", 分别是哪家制造的？ show that table's rows.
MAKER_WORDS: frozenset[str] = frozenset({"manufacturer", "maker", "producer", "builder", "vendor"})
#: Their Chinese words (制造商, 厂商, 公司), as the Chinese lexicon reads them.
MAKER_WORDS_ZH: frozenset[str] = frozenset(word for word, english in ZH_WORDS.items()
                                           if english in MAKER_WORDS or english == "company")
#: Words that name a column's values as kinds ("orbit type", 轨道类型: the column said again; "each type of
#: aircraft", 各类型飞机: a column of the aircraft, not another table's `kind`).
KIND_WORDS: frozenset[str] = frozenset({"type", "types", "kind", "kinds", "category", "categories", "类型", "种类",
                                        "类别"})
#: Words for models: after a table word with no such column, the table's own rows (运载火箭型号: the launch vehicles).
MODEL_WORDS: frozenset[str] = frozenset({"model", "models", "型号", "款式", "机型"})
#: Who asks for a maker, before a verb of making (`MAKING_VERBS`, `MAKING_VERBS_ZH`).
WHO_WORDS: frozenset[str] = frozenset({"who", "谁", "哪家"})
#: Chinese verbs of a role a key names (歼-20的雷达是哪家供应的？: the radar's supplier key), in the English word the
#: key's name begins as (`RoleResolver.keyed_by`).
ROLE_VERBS_ZH: dict[str, str] = {"供应": "supplied", "提供": "supplied", "运营": "operated", "经营": "operated"}

#: Irregular past participles: "built by X" names a relation, not a grouping ("launches by country").
PARTICIPLES: frozenset[str] = frozenset("""
made built flown run held written driven sold taken given done seen known shown grown drawn led won
bought brought kept paid sent spent taught thought found begun chosen
""".split())

#: Words of questions that name nothing, beyond the stopwords that change no query (`storage.text`):
#: verbs of happening and being, "one" as a pronoun, a few prepositions, and the query words this
#: planner reads through its keywords and follow-up markers rather than as names (and, than, only ...).
#: Never taken for a data value or a schema name; any other query word left unused is named in the caveat.
NAMELESS_WORDS: frozenset[str] = frozenset("""
took take takes taken place happen happened happens occur occurred exist exists existed located
saw sees witnessed know see want need instead among via onto across many one ones
and or but than much when where like up only same else onward onwards
anything something anyone someone anybody somebody
""".split())
#: The lexicon of a source with no words of its own.
GENERIC = Lexicon(SYNONYMS, ZH_WORDS)

#: The words of the period grammar (`agent.planner.period_grammar`): month names, ordinals of halves and
#: quarters, and the relations that open a range ("since March 2024", 2024年3月以后).
MONTHS: dict[str, int] = {
    "january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4, "may": 5,
    "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8, "september": 9, "sept": 9, "sep": 9,
    "october": 10, "oct": 10, "november": 11, "nov": 11, "december": 12, "dec": 12,
}
ORDINALS: dict[str, int] = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4,
                            "4th": 4, "last": 4}
ZH_HALVES: dict[str, int] = {"上": 1, "前": 1, "下": 2, "后": 2}
#: A relation before a month or year (English) or after it (Chinese) -> since | after | before | until.
#: Chinese 以后/之后 include the year or month they follow (2015年以后 counts 2015, as 90后 counts
#: 1990); English "after" does not.
PERIOD_RELATIONS: dict[str, str] = {
    "since": "since", "from": "since", "starting": "since", "starting in": "since", "starting from": "since",
    "after": "after", "later than": "after", "before": "before", "prior to": "before", "earlier than": "before",
    "until": "until", "till": "until", "through": "until", "up to": "until", "by": "until",
    "以来": "since", "至今": "since", "迄今": "since", "起": "since", "开始": "since", "以后": "since", "之后": "since", "后": "since",
    "以前": "before", "之前": "before", "前": "before", "截至": "until", "截止到": "until", "截止": "until",
}
#: Periods counted from today, by their words: the unit and how many of it back from the current one
#: (0: the current year, quarter or month; 1: the one before), or "to_date" (from the start of the year).
RELATIVE_PERIODS: dict[str, tuple[str, int]] = {
    "this year": ("year", 0), "current year": ("year", 0), "last year": ("year", 1), "previous year": ("year", 1),
    "year before last": ("year", 2), "this quarter": ("quarter", 0), "current quarter": ("quarter", 0),
    "last quarter": ("quarter", 1), "previous quarter": ("quarter", 1), "this month": ("month", 0),
    "current month": ("month", 0), "last month": ("month", 1), "previous month": ("month", 1),
    "year to date": ("to_date", 0), "ytd": ("to_date", 0), "so far this year": ("to_date", 0),
    "so far this decade": ("decade_to_date", 0), "this decade": ("decade", 0), "current decade": ("decade", 0),
    "last decade": ("decade", 1), "previous decade": ("decade", 1),
    "今年以来": ("to_date", 0), "今年迄今": ("to_date", 0), "年初至今": ("to_date", 0), "本年迄今": ("to_date", 0),
    "今年": ("year", 0), "去年": ("year", 1), "前年": ("year", 2), "本季度": ("quarter", 0), "这个季度": ("quarter", 0),
    "上季度": ("quarter", 1), "上个季度": ("quarter", 1), "上一季度": ("quarter", 1), "本月": ("month", 0),
    "这个月": ("month", 0), "上个月": ("month", 1), "上月": ("month", 1),
    "这个十年": ("decade", 0), "这十年": ("decade", 0), "本十年": ("decade", 0),
    "上个十年": ("decade", 1), "上一个十年": ("decade", 1), "上一十年": ("decade", 1),
}
#: Words before a count of units back from today ("the past 5 years", "last 6 months", 近五年, 过去3个月).
ROLLING_WORDS: tuple[str, ...] = ("past", "last", "previous", "recent", "近", "过去", "最近")
