"""benchmarks/README.md: each script's section, rewritten on each run."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parent / "README.md"


def write_section(script: str, body: str) -> None:
    """Replace (or add, before the notes, which stay last) the section `## <script>`."""
    text = README.read_text() if README.exists() else "# Benchmarks\n"
    header = f"## {script}"
    section = f"{header}\n\n{body.strip()}\n"
    if header in text:
        text = re.sub(rf"{re.escape(header)}\n.*?(?=\n## |\Z)", lambda _m: section, text,
                      flags=re.S)
    elif "\n## Notes" in text:
        text = text.replace("\n## Notes", "\n" + section + "\n## Notes", 1)
    else:
        text = text.rstrip("\n") + "\n\n" + section
    README.write_text(text)
