"""Work on a translation catalogue in chunks, with its placeholders checked.

    python scripts/translate.py todo locale/ja/LC_MESSAGES/django.po [--count 120]
        prints the next untranslated (or fuzzy) entries as JSON: [{"n", "msgid",
        "msgid_plural", "context", "where"}]
    python scripts/translate.py put locale/ja/LC_MESSAGES/django.po answers.json
        reads {"<n>": "translation"} or {"<n>": ["form 0", "form 1", ...]} for plural
        entries, checks each against its msgid (the same %(name)s / %s / {name}
        placeholders, the same HTML tags, the same leading and trailing newlines) and
        writes the ones that pass; prints the ones that do not, with the reason
    python scripts/translate.py stats locale/*/LC_MESSAGES/django.po

`n` is the entry's position in the catalogue, stable until `make messages` runs again.
The same checks run in CI (tests/unit/test_translations.py), so a catalogue that
passes here compiles and renders.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

import polib

PRINTF = re.compile(r"%(?:\([A-Za-z0-9_]+\))?[-#0 +]*\d*(?:\.\d+)?[sdifrxXeEgGc%]")
BRACES = re.compile(r"\{[A-Za-z0-9_]*(?:![rsa])?(?::[^{}]*)?\}")
TAG = re.compile(r"</?([A-Za-z][A-Za-z0-9]*)\b")


def placeholders(text: str) -> Counter[str]:
    found = Counter(PRINTF.findall(text))
    found.pop("%%", None)
    return found


def problems(msgid: str, msgstr: str, python_brace: bool = False) -> list[str]:
    """What is wrong with msgstr as a translation of msgid (empty: nothing)."""
    found = []
    if not msgstr.strip():
        return ["empty"]
    if placeholders(msgid) != placeholders(msgstr):
        # A translation may drop a bare number a language does not show (`%(n)d` in
        # a singular form of a one-form language), never add or rename one.
        extra = placeholders(msgstr) - placeholders(msgid)
        if extra or not _named_only(msgid):
            found.append(
                f"placeholders {sorted(placeholders(msgid))} became {sorted(placeholders(msgstr))}"
            )
    if python_brace and Counter(BRACES.findall(msgid)) != Counter(BRACES.findall(msgstr)):
        found.append("brace placeholders differ")
    if Counter(TAG.findall(msgid)) != Counter(TAG.findall(msgstr)):
        found.append("HTML tags differ")
    for edge, pick in (("leading", str.startswith), ("trailing", str.endswith)):
        if pick(msgid, "\n") != pick(msgstr, "\n"):
            found.append(f"{edge} newline differs")
    return found


def _named_only(msgid: str) -> bool:
    return all(p.startswith("%(") for p in placeholders(msgid))


def entry_problems(entry: polib.POEntry) -> list[str]:
    brace = "python-brace-format" in entry.flags
    if entry.msgid_plural:
        forms = [entry.msgstr_plural.get(i, "") for i in sorted(entry.msgstr_plural)]
        found = []
        for index, form in enumerate(forms):
            source = entry.msgid if index == 0 and len(forms) > 1 else entry.msgid_plural
            # A one-form language says the plural sentence for every count.
            found += [f"form {index}: {p}" for p in problems(source, form, brace)]
        return found
    return problems(entry.msgid, entry.msgstr, brace)


def untranslated(catalogue: polib.POFile) -> list[tuple[int, polib.POEntry]]:
    return [
        (n, entry)
        for n, entry in enumerate(catalogue)
        if not entry.obsolete and (not entry.translated() or "fuzzy" in entry.flags)
    ]


def todo(path: Path, count: int) -> None:
    catalogue = polib.pofile(str(path))
    chunk = untranslated(catalogue)[:count]
    plural_forms = catalogue.metadata.get("Plural-Forms", "")
    print(json.dumps({
        "plural_forms": plural_forms,
        "left": len(untranslated(catalogue)),
        "entries": [
            {
                "n": n,
                "msgid": entry.msgid,
                **({"msgid_plural": entry.msgid_plural} if entry.msgid_plural else {}),
                **({"context": entry.msgctxt} if entry.msgctxt else {}),
                "where": [f for f, _ in entry.occurrences][:3],
            }
            for n, entry in chunk
        ],
    }, ensure_ascii=False, indent=1))


def put(path: Path, answers_path: Path) -> int:
    catalogue = polib.pofile(str(path))
    answers = json.loads(answers_path.read_text(encoding="utf-8"))
    entries = list(catalogue)
    nplurals = int(re.search(r"nplurals=(\d+)", catalogue.metadata["Plural-Forms"]).group(1))
    refused = 0
    written = 0
    for key, answer in answers.items():
        entry = entries[int(key)]
        if entry.msgid_plural:
            forms = answer if isinstance(answer, list) else [answer]
            if len(forms) != nplurals:
                print(f"{key}: {nplurals} plural forms needed, got {len(forms)}")
                refused += 1
                continue
            entry.msgstr_plural = dict(enumerate(forms))
        else:
            if not isinstance(answer, str):
                print(f"{key}: one string needed (this entry has no plural)")
                refused += 1
                continue
            entry.msgstr = answer
        found = entry_problems(entry)
        if found:
            print(f"{key}: {entry.msgid!r}: {'; '.join(found)}")
            entry.msgstr = ""
            entry.msgstr_plural = {i: "" for i in range(nplurals)} if entry.msgid_plural else {}
            refused += 1
            continue
        if "fuzzy" in entry.flags:
            entry.flags.remove("fuzzy")
        written += 1
    catalogue.save(str(path))
    print(f"written {written}, refused {refused}, left {len(untranslated(catalogue))}")
    return 1 if refused else 0


def stats(paths: list[Path]) -> None:
    for path in paths:
        catalogue = polib.pofile(str(path))
        bad = sum(1 for e in catalogue.translated_entries() if entry_problems(e))
        print(f"{path}: {catalogue.percent_translated()}% translated, "
              f"{len(untranslated(catalogue))} left, {bad} with problems")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    verbs = parser.add_subparsers(dest="verb", required=True)
    todo_args = verbs.add_parser("todo")
    todo_args.add_argument("po", type=Path)
    todo_args.add_argument("--count", type=int, default=120)
    put_args = verbs.add_parser("put")
    put_args.add_argument("po", type=Path)
    put_args.add_argument("answers", type=Path)
    stats_args = verbs.add_parser("stats")
    stats_args.add_argument("po", type=Path, nargs="+")
    args = parser.parse_args(argv)
    if args.verb == "todo":
        todo(args.po, args.count)
    elif args.verb == "put":
        return put(args.po, args.answers)
    else:
        stats(args.po)
    return 0


if __name__ == "__main__":
    sys.exit(main())
