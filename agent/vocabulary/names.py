"""Words of schema names: by them a column's name says what it holds, whatever the database."""

from __future__ import annotations

#: Words by which a column's name says it holds its twin's values in Chinese: `name_zh`, `nameZh`,
#: `name_cn`, `chinese_name` are `name` in Chinese.
CHINESE_TAGS = frozenset({"zh", "cn", "chn", "chinese"})
