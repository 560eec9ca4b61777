"""The Jinja2 environment of every page: templates/, the page's words (app/i18n.py) and the filters
that turn stored values into what a person reads. The pages, the error pages and the examples and
memories pages all render through `templates`."""

from __future__ import annotations

import json

from fastapi.templating import Jinja2Templates

from app.formatting import display_cell
from app.i18n import install
from app.settings import ROOT

templates = Jinja2Templates(directory=ROOT / "templates")


def step_arguments(args: dict) -> str:
    """A step's arguments as a person reads them: `sql: SELECT …` with text as written (no JSON
    escapes such as \\u0027 or \\n; autoescape makes it safe), empty ones left out."""
    shown = {k: v for k, v in args.items() if v is not None and v != ""}
    return " · ".join(f"{k}: {' '.join(v.split()) if isinstance(v, str) else json.dumps(v, ensure_ascii=False, default=str)}"
                      for k, v in shown.items())


templates.env.filters.update(
    pretty_json=lambda value: json.dumps(value, indent=2, ensure_ascii=False, default=str),
    step_arguments=step_arguments, cell=display_cell)
install(templates.env)
