"""Words by which a question asks for one figure for each of the values it lists.

"How many payloads were built by German, French and British makers respectively?", 德国、法国和英国的制造商
分别造了多少个？: one count per country, not one over the three. The planner groups by the listed values'
column; the checks flag a query that lists them (`IN (…)`) and computes one figure.
"""

from __future__ import annotations

import re

RESPECTIVELY = re.compile(r"\brespectively\b|分别|各自", re.I)
