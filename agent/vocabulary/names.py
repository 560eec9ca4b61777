"""Words of schema names: by them a column's name says what it holds, whatever the database."""

from __future__ import annotations

#: Words by which a column's name says it holds its twin's values in Chinese: `name_zh`, `nameZh`,
#: `name_cn`, `chinese_name` are `name` in Chinese.
CHINESE_TAGS = frozenset({"zh", "cn", "chn", "chinese"})

#: Adjectives of nationality and place -> the name a database stores ("Indian launch sites": India). Read
#: as the value only when that name is a value of the database.
DEMONYMS: dict[str, str] = {
    "american": "united states", "british": "united kingdom",
    "chinese": "china", "russian": "russia", "soviet": "soviet union",
    "japanese": "japan", "indian": "india", "french": "france", "german": "germany", "italian": "italy",
    "spanish": "spain", "canadian": "canada", "brazilian": "brazil", "korean": "south korea",
    "south korean": "south korea", "north korean": "north korea", "israeli": "israel", "iranian": "iran",
    "european": "europe", "australian": "australia", "new zealand": "new zealand", "kazakh": "kazakhstan",
    "ukrainian": "ukraine", "turkish": "turkey", "swedish": "sweden", "dutch": "netherlands",
    "mexican": "mexico", "argentine": "argentina", "argentinian": "argentina", "egyptian": "egypt",
    "pakistani": "pakistan", "indonesian": "indonesia", "emirati": "united arab emirates",
    "swiss": "switzerland", "norwegian": "norway", "polish": "poland", "greek": "greece",
}

#: Abbreviations of country names, as written (capitals: "US" is not the word "us") -> the name a database
#: stores ("US-operated payloads": the United States). Read as the value only when that name is a value.
ABBREVIATIONS: dict[str, str] = {
    "US": "united states", "USA": "united states", "UK": "united kingdom", "UAE": "united arab emirates",
    "PRC": "china", "USSR": "soviet union", "ROK": "south korea", "EU": "europe",
}

#: One-letter codes a column stores for a word a question says ("female students": `Sex = 'F'`).
CODES: dict[str, str] = {
    **dict.fromkeys(("female", "females", "woman", "women", "girl", "girls"), "f"),
    **dict.fromkeys(("male", "males", "man", "men", "boy", "boys"), "m"),
}

#: The generic ends of Chinese names of places and firms (西昌|卫星发射中心, 成都|飞机工业集团): what comes before
#: one is the name's own part, which a person writes alone (西昌那边呢？). Longest first.
CJK_NAME_ENDS: tuple[str, ...] = tuple(sorted("""
卫星发射中心 商业航天发射场 航天发射场 发射场 发射中心 航天中心 宇宙中心 宇宙空间观测所 太空军基地 空军基地 航天港
飞行设施 飞机工业集团 工业集团 集团 研究院 有限公司 公司
卫星技术股份有限公司 技术股份有限公司 股份有限公司 技术有限公司 科技有限公司 航空航天 航天
""".split(), key=len, reverse=True))
