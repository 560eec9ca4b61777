"""The page's own words in English and Chinese (issue 20).

The language is the `lang` cookie (set by the switch in the header) or else the browser's
Accept-Language. Templates write English and call `t("...")`; a phrase missing here stays
English, so a new page is never broken by a missing translation.
"""

from __future__ import annotations

from typing import Any

from jinja2 import pass_context
from starlette.requests import Request

LANGUAGES = ("en", "zh")
LANG_COOKIE = "askdb_lang"

ZH: dict[str, str] = {
    "Conversations": "对话", "New conversation": "新对话", "SQL": "SQL", "Examples": "示例", "Memories": "记忆",
    "offline planner (no LLM configured)": "离线规划器（未配置大模型）", "model": "模型",
    "Search titles and tags": "搜索标题和标签", "Search": "搜索", "Title": "标题", "Last activity": "最近活动",
    "Questions": "问题", "Tags": "标签", "No conversations yet.": "还没有对话。", "Ask a first question.": "提出第一个问题。",
    "No conversation matches “{q}”.": "没有与“{q}”匹配的对话。", "Show all conversations": "显示全部对话",
    "Newer": "较新", "Older": "较早", "Page {p} of {n}": "第 {p} 页，共 {n} 页", "Import a conversation": "导入对话",
    "A file from a conversation's Export link (or store export), archived turns included; it becomes a new "
    "conversation of yours.": "对话“导出”链接（或 store export）得到的文件，包括已归档的轮次；导入后成为你的一个新对话。",
    "conversation": "个对话", "conversations": "个对话",
    "Ask a question about {db}, in English or Chinese.": "用中文或英文提问关于 {db} 的问题。",
    "Question": "问题", "Ask": "提问", "Data source": "数据源", "Your uploaded tables": "你上传的表",
    "e.g. Which launch vehicles flew more than 10 times since 2015?": "例如：2015 年以来哪些运载火箭发射超过 10 次？", "thinking…": "思考中…", "working…": "进行中…", "Stop": "停止",
    "step": "步", "steps": "步", "tokens": "个词元", "question": "个问题", "questions": "个问题",
    "answered by": "回答者", "Answered by {model}": "回答者：{model}", "unknown": "未知",
    "State JSON": "状态 JSON", "Export": "导出", "Delete": "删除",
    "Delete this conversation and everything in it?": "删除这个对话及其全部内容？",
    "Rename or tag": "重命名或加标签", "Tags (comma-separated)": "标签（逗号分隔）", "Save": "保存",
    "Stopped at your request.": "已按你的要求停止。",
    "This question was interrupted before it was answered. Ask again to continue.":
        "这个问题在回答前被中断了。再问一次即可继续。",
    "Edit and re-run": "编辑并重新运行", "Run": "运行", "Copy SQL": "复制 SQL", "Copied": "已复制",
    "Open in the SQL page": "在 SQL 页面打开",
    "{n} rows": "{n} 行", "1 row": "1 行", "Download CSV": "下载 CSV", "Download JSON": "下载 JSON",
    "Download PNG": "下载 PNG", "{y} by {x}": "按{x}的{y}", "Bars": "柱状图", "Line": "折线图", "Table only": "仅表格",
    "Filter rows shown": "筛选显示的行", "Rows {a}–{b} · page {p} of {n}": "第 {a}–{b} 行 · 第 {p} 页，共 {n} 页", "Previous": "上一页", "Next": "下一页",
    "truncated: the query returned more rows than the limit ({n}); add filters or LIMIT":
        "已截断：查询返回的行数超过上限（{n}）；请加筛选条件或 LIMIT",
    "Tables": "数据表", "Filter tables and columns": "筛选表和列", "rows": "行",
    "Try one of these": "试试这些问题", "Click a column to add its name to your question.": "点击列名即可把它加入问题。",
    "Right": "正确", "Wrong": "错误", "Note (optional)": "备注（可选）", "verified examples": "已验证示例",
    "Context": "上下文", "Details for developers": "开发者详情",
    # Who answered, a stopped turn, and corrections (issue 38).
    "offline planner": "离线规划器", "analyst": "分析师", "Stopped: {model} did not answer": "已停止：{model}没有作答",
    "Your edit of the SQL for “{q}”": "你为“{q}”编辑的 SQL",
    # How far an answer answers its question, said first (issue 38).
    "Answered": "已回答", "Partly answered:": "部分回答：", "Not answered": "未回答",
    "askdb is not sure the result below answers the whole question.": "askdb 不确定下面的结果回答了整个问题。",
    "Result of the query above, which answers only part of the question.": "上面查询的结果，它只回答了问题的一部分。",
    "The query above found no rows; it answers only part of the question.":
        "上面的查询没有找到数据；它只回答了问题的一部分。",
    "Reply from {model}": "回复来自：{model}",
    "Right: keep this question and its SQL as a verified example": "正确：把这个问题和它的 SQL 保存为已验证示例",
    "Wrong: record it, with your note and the right SQL if you give it":
        "错误：记录下来，连同你的备注，以及你给出的正确 SQL",
    "Wrong? Give the right SQL (optional)": "回答错了？给出正确的 SQL（可选）", "The right SQL": "正确的 SQL",
    "With 👎 Wrong, this SQL becomes the verified example of “{q}”: askdb uses it the next time the question is "
    "asked.": "点 👎 错误 后，这条 SQL 会成为“{q}”的已验证示例：下次再问这个问题时 askdb 会使用它。",
    "You marked this answer right": "你把这个回答标记为正确", "You marked this answer wrong": "你把这个回答标记为错误",
    "Thanks: “{q}” and its SQL are now a verified example.": "谢谢：“{q}”和它的 SQL 现在是已验证示例。",
    "Thanks: recorded as wrong, and your SQL is now the verified example of “{q}”.":
        "谢谢：已记录为错误，你的 SQL 现在是“{q}”的已验证示例。",
    "Thanks: recorded. Another user's verified example already answers “{q}”; your change is used once its "
    "author or an operator confirms it.": "谢谢，已记录。“{q}”已有其他用户的已验证示例；你的修改要等其作者或管理员确认后才会使用。",
    "Thanks: recorded as wrong.": "谢谢：已记录为错误。",
    "One read-only query on {db}, through the same guard and limits as the agent ({s} s, {rows} rows).":
        "在 {db} 上运行一条只读查询，与智能体使用相同的检查和限制（{s} 秒，{rows} 行）。",
    "Formatted": "格式化", "Back to your conversations": "返回对话列表", "Cancel": "取消",
    "Remove this verified example?": "删除这个已验证示例？",
    # Examples, memories, the state, delete, error and sign-in pages.
    "Verified examples": "已验证示例", "Verified examples of {db}": "{db} 的已验证示例", "Export (JSON)": "导出（JSON）",
    "A thumbs up on an answer keeps its question and SQL here. Before each question the {k} closest go to the "
    "model as worked examples, and the offline planner reuses a verified query when the same question comes "
    "again. Examples are shared by everyone who asks about this database; only an example's author or an "
    "operator may change or remove it, and a change by anyone else is used only once confirmed.":
        "对回答点赞后，它的问题和 SQL 会保存在这里。每次提问前，最接近的 {k} 个会作为示例交给模型；同样的问题"
        "再次出现时，离线规划器会直接复用已验证的查询。示例由所有询问这个数据库的人共享；只有示例的提交者或管理员"
        "可以修改或删除它，他人的修改在确认后才会被使用。",
    "changed by {who}; not used until confirmed": "已由 {who} 修改；确认前不会使用", "Confirm": "确认",
    "Search questions and SQL": "搜索问题和 SQL", "1 example": "1 个示例", "{n} examples": "{n} 个示例",
    "matching “{q}”": "匹配“{q}”", "Note": "备注", "Remove": "删除", "by {who}": "由 {who} 提交",
    "No verified examples yet. Give a thumbs up to a right answer on a conversation page.":
        "还没有已验证示例。在对话页面为正确的回答点赞即可。",
    "page {p} of {n}": "第 {p} 页，共 {n} 页", "Import": "导入", "An exported file": "导出的文件",
    "Each query is checked against this database first; one that names unknown columns or is not read-only is "
    "skipped.": "每条查询都会先在这个数据库上检查；引用未知列或不是只读的查询会被跳过。",
    "Your verdicts": "你的评价", "When": "时间", "None yet. Only you see your verdicts and notes.":
        "还没有。你的评价和备注只有你自己能看到。",
    "What askdb remembers about you": "askdb 记住的关于你的事",
    "askdb keeps what you state about yourself (how to call you, preferences, facts about your data) and reads "
    "the most relevant before each question. It also keeps {n} earlier turns to recall by meaning. Edit or "
    "delete anything here.": "askdb 会记住你说过的关于自己的事（怎么称呼你、偏好、关于你的数据的事实），每次提问前"
                             "读取最相关的几条。它还保存了 {n} 轮早先的问答，可按意思回忆。这里的任何内容都可以修改或删除。",
    "Remembered ({n})": "已记住（{n}）", "Memory": "记忆", "Kind": "类型", "Importance": "重要性", "Since": "起始",
    "Nothing yet. Say things like “call me Ada” or “our fiscal year starts in April”.":
        "还没有。可以说“叫我 Ada”或“我们的财年从四月开始”。",
    "Replaced ({n})": "已被取代（{n}）", "Valid": "有效期",
    "Memories that a later statement contradicted. They are no longer used.": "被后来的陈述推翻的记忆，已不再使用。",
    "Erase everything": "全部清除", "Erase": "清除",
    "Type ERASE to delete all your memories and the {n} remembered turns":
        "输入 ERASE 以删除你的全部记忆和已记住的 {n} 轮问答",
    "Your conversations stay; delete them from their own pages.": "你的对话会保留；请在各自的页面删除。",
    "(untitled)": "（无标题）", "Back to the conversation": "返回对话", "Version {v}": "版本 {v}",
    "the document kept in": "保存于", "Delete “{title}”?": "删除“{title}”？",
    "This deletes the conversation, its steps and its stored results. It cannot be undone.":
        "这会删除对话、它的步骤和保存的结果，且无法撤销。",
    "not found": "未找到", "sign in": "请登录", "Sign in with a token": "用令牌登录", "Sign in": "登录", "Token": "令牌",
    # Your data (app/data_pages.py), and why a file is refused (agent/sources/upload_files.py, uploads.py,
    # pending_uploads.py: each message template once).
    "Your data": "我的数据", "Add data": "添加数据", "File": "文件", "Upload and preview": "上传并预览",
    "Files you add become tables that only you can see and ask about: CSV, TSV, Parquet or Excel (.xlsx, first "
    "sheet), UTF-8 or GBK text, at most {mb} MB.":
        "你添加的文件会成为只有你能看到和提问的数据表：CSV、TSV、Parquet 或 Excel（.xlsx，第一个工作表），"
        "文本为 UTF-8 或 GBK 编码，最大 {mb} MB。",
    "Waiting for your confirmation": "等待你确认", "Your tables": "我的数据表", "Table": "表", "Rows": "行数",
    "Columns": "列", "Rename": "重命名", "New name": "新名称", "Replace": "替换",
    "Delete the table {name}? It cannot be undone.": "删除数据表 {name}？此操作无法撤销。",
    "No tables yet. Add a file above.": "还没有数据表。请在上方添加文件。",
    "Table {name} is ready.": "数据表 {name} 已就绪。", "Table renamed to {name}.": "数据表已重命名为 {name}。",
    "Table {name} deleted.": "数据表 {name} 已删除。", "Upload cancelled; nothing was loaded.": "已取消上传，未载入任何数据。",
    "Your damaged tables were set aside; add your files again.": "已将损坏的数据表移到一旁；请重新添加文件。",
    "Set my tables aside and start again": "将我的数据表移到一旁并重新开始",
    "your tables would take {size:,} bytes; your quota is {limit:,} (ASKDB_UPLOAD_QUOTA_MB): remove a table first":
        "你的数据表将占用 {size:,} 字节，超过配额 {limit:,}（ASKDB_UPLOAD_QUOTA_MB）：请先删除一个数据表",
    "your tables cannot be read ({reason}); set them aside to start again":
        "无法读取你的数据表（{reason}）；请将它们移到一旁后重新开始",
    "{file}, line {line}: longer than {limit:,} characters": "{file} 第 {line} 行：超过 {limit:,} 个字符",
    "{file}, line {line}: a field longer than {limit:,} characters": "{file} 第 {line} 行：有字段超过 {limit:,} 个字符",
    "{file} has {count:,} columns; at most {limit:,}": "{file} 有 {count:,} 列；最多 {limit:,} 列",
    "{file} has a part that unzips to {size:,} bytes; at most {limit:,}: save the sheet as CSV":
        "{file} 有一部分解压后有 {size:,} 字节，最多 {limit:,}：请将工作表另存为 CSV",
    "{file} unzips to {size:,} bytes; at most {limit:,}: save the sheet as CSV":
        "{file} 解压后有 {size:,} 字节，最多 {limit:,}：请将工作表另存为 CSV",
    "{file}, row {row}: a cell longer than {limit:,} characters": "{file} 第 {row} 行：有单元格超过 {limit:,} 个字符",
    "{file}: the sheet holds more than {limit:,} bytes of text; save it as CSV":
        "{file}：工作表的文本超过 {limit:,} 字节；请另存为 CSV",
    "Ask about these tables": "就这些数据表提问",
    "Check “{file}” before it becomes a table": "在“{file}”成为数据表之前检查一下", "Encoding": "编码",
    "Header": "表头", "The first line holds the column names.": "第一行是列名。",
    "The first line is data; the columns are numbered.": "第一行是数据；列按序号命名。",
    "Read it as data instead": "改为当作数据读取", "Read it as column names instead": "改为当作列名读取",
    "The first {n} of {total} rows.": "共 {total} 行中的前 {n} 行。", "Table name": "表名",
    "Replace the table of this name if there is one": "如已有同名数据表则替换", "Create the table": "创建数据表",
    "An upload not confirmed within {m} minutes is removed.": "上传后 {m} 分钟内未确认将被删除。",
    "{file}: not a CSV, TSV, Parquet or Excel (.xlsx) file": "{file}：不是 CSV、TSV、Parquet 或 Excel（.xlsx）文件",
    "{file} has {size} bytes; the limit is {limit} (ASKDB_MAX_UPLOAD_BYTES)":
        "{file} 有 {size} 字节，上限为 {limit}（ASKDB_MAX_UPLOAD_BYTES）",
    "{file} has more than {limit} bytes (ASKDB_MAX_UPLOAD_BYTES)": "{file} 超过 {limit} 字节（ASKDB_MAX_UPLOAD_BYTES）",
    "the file is larger than the limit of {limit} bytes (ASKDB_MAX_UPLOAD_BYTES)":
        "文件超过 {limit} 字节的上限（ASKDB_MAX_UPLOAD_BYTES）",
    "{file}: {reason}": "{file}：{reason}", "{file}: the text is neither UTF-8 nor GBK": "{file}：文本既不是 UTF-8 也不是 GBK 编码",
    "{file} is empty": "{file} 是空文件",
    "{file}, line {line}: {found} fields where the first line has {expected}":
        "{file} 第 {line} 行：有 {found} 个字段，而第一行有 {expected} 个",
    "{file}: not a readable Excel workbook ({kind})": "{file}：不是可读取的 Excel 工作簿（{kind}）",
    "{file}: the first sheet is empty": "{file}：第一个工作表是空的",
    "the table needs a name with a letter or digit in it": "表名中需要至少有一个字母、汉字或数字",
    "a table named {name} exists; choose another name or replace it": "已有名为 {name} 的数据表；请换一个名称或替换它",
    "a table named {name} exists; choose another name": "已有名为 {name} 的数据表；请换一个名称",
    "no table named {name}": "没有名为 {name} 的数据表",
    "this upload is no longer waiting (it was confirmed, cancelled or expired); upload the file again":
        "这次上传已不在等待中（已确认、已取消或已过期）；请重新上传文件",
    "choose a file to upload": "请选择要上传的文件",
    "send the file from the page's form (multipart/form-data)": "请通过页面上的表单上传文件（multipart/form-data）",
    "the upload could not be read: {reason}": "无法读取上传的内容：{reason}",
}


def language_of(request: Request | None) -> str:
    """The page language: the switch's cookie, else the first of en/zh in Accept-Language."""
    if request is None:
        return "en"
    chosen = request.cookies.get(LANG_COOKIE)
    if chosen in LANGUAGES:
        return chosen
    for part in request.headers.get("accept-language", "").split(","):
        code = part.split(";")[0].strip().lower()[:2]
        if code in LANGUAGES:
            return code
    return "en"


def phrase(text: str, lang: str, **values: Any) -> str:
    """`text` in `lang` ("en" or "zh"), with `{name}` placeholders filled from `values` (pages and the CLI)."""
    if lang == "zh":
        text = ZH.get(text, text)
    return text.format(**values) if values else text


@pass_context
def translate(context: Any, text: str, **values: Any) -> str:
    """`text` in the page's language, with `{name}` placeholders filled from `values`."""
    return phrase(text, language_of(context.get("request")), **values)


@pass_context
def page_language(context: Any) -> str:
    return language_of(context.get("request"))


@pass_context
def format_number(context: Any, value: Any) -> str:
    """A count with thousands separators (both languages group by three in the page)."""
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


@pass_context
def format_when(context: Any, iso: str | None) -> str:
    """An ISO timestamp as a date and minute, written the page language's way (UTC)."""
    if not iso:
        return ""
    day, minute = iso[:10], iso[11:16]
    if language_of(context.get("request")) == "zh" and len(day) == 10:
        return f"{int(day[:4])}年{int(day[5:7])}月{int(day[8:10])}日 {minute}".strip()
    return f"{day} {minute}".strip()


def install(env: Any) -> None:
    """Make `t`, `lang()` and the locale filters available to every template."""
    env.globals.update(t=translate, lang=page_language)
    env.filters.update(number=format_number, when=format_when)
