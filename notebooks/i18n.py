"""The lessons in other languages, from the same sources: prose in gettext catalogs, code cells unchanged.

    python notebooks/i18n.py             # extract the prose of notebooks/src/ into notebooks/locale/zh/*.po
    python notebooks/i18n.py --check     # exit 1 when a catalog is out of date or a message lacks a translation

One catalog per lesson (``notebooks/locale/zh/NN_name.po``) plus ``course.po`` for the build's own text
(the banner under each title, the cell that sets the checks' language). A message is one paragraph of a
Markdown cell (text between blank lines, or a title, a table, a list item block), the unit translators
and Sphinx's gettext builder use: a changed sentence makes only its paragraph stale.

Extraction merges as gettext's ``msgmerge`` does: a paragraph whose English is unchanged keeps its
translation; one whose English changed keeps the old translation flagged ``fuzzy``, with the English it was
made for (``#| msgid``), so the translator sees the difference; a new paragraph has an empty translation. A
fuzzy or empty message counts as untranslated: the build uses the English paragraph there, and the course's
tests (``tests/notebooks/test_translations.py``) fail until it is translated. ``make notebooks`` runs the
extraction, then builds both languages (``build.py`` and ``build.py --lang zh``).
"""

from __future__ import annotations

import argparse
import ast
import difflib
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import build  # noqa: E402
from minigrad_course.i18n import Entry, read_po, translations, write_po  # noqa: E402

LOCALE = HERE / "locale"
TRANSLATED = ("zh",)  # the languages the course is built in besides English
LANGUAGE_NAMES = {"zh": "zh_CN"}
SIMILAR = 0.5  # difflib ratio above which a changed paragraph keeps its old translation, flagged fuzzy


def paragraphs(text: str) -> list[str]:
    """A Markdown text split at blank lines (the messages of one cell); a fenced code block is one paragraph."""
    out, block, fenced = [], [], False
    for line in text.split("\n"):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        if line.strip() or fenced:
            block.append(line)
        elif block:
            out.append("\n".join(block))
            block = []
    if block:
        out.append("\n".join(block))
    return out


def copied(paragraph: str) -> bool:
    """A paragraph that is only code (a fenced block) or only a displayed formula: copied, not translated."""
    text = paragraph.strip()
    return (text.startswith("```") and text.endswith("```")) or (text.startswith("$$") and text.endswith("$$"))


def lesson_messages(path: Path) -> list[tuple[str, str]]:
    """(paragraph, reference) for every Markdown paragraph of a source to translate, in order, each once."""
    name = f"src/{path.name}"
    seen: dict[str, str] = {}
    for cell in build.parse(path.read_text(encoding="utf-8"), name):
        if cell.kind != "markdown":
            continue
        for version in ("learner", "solution"):
            for para in paragraphs("\n".join(build.render_lines(cell, version, name))):
                if not copied(para):
                    seen.setdefault(para, f"{name}:{cell.line_no}")
    return list(seen.items())


def course_messages() -> list[tuple[str, str]]:
    """The build's own text: the banners (with their ``{fields}``) and the language cell's comment."""
    return [(text, "build.py") for text in build.BUILD_TEXTS]


CHECKS = HERE / "minigrad_course" / "__init__.py"
REASON = re.compile(r"^[a-z0-9-]+$")  # a check's stable name for a mistake ("saved-input"): never shown translated


def checker_messages(path: Path = CHECKS) -> list[tuple[str, str]]:
    """(template, reference) for every message and hint the checks can print: each string and f-string of the
    module with words in it, as written (``{expression}`` for a value, literal braces doubled), except docstrings,
    the regular expressions of the ``errors=`` tables (``(pattern, reason, hint)``) and strings code compares."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        first = body[0] if isinstance(body, list) and body else None
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
            skip.add(id(first.value))  # a docstring
        if isinstance(node, ast.Tuple) and len(node.elts) == 3 and isinstance(node.elts[1], ast.Constant) \
                and isinstance(node.elts[1].value, str) and REASON.match(node.elts[1].value):
            skip.add(id(node.elts[0]))  # the regular expression of an (pattern, reason, hint) entry
        if isinstance(node, ast.Compare):
            skip.update(id(n) for n in [node.left, *node.comparators])
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                isinstance(node.func.value, ast.Name) and node.func.value.id == "re" and node.args:
            skip.add(id(node.args[0]))
        if isinstance(node, ast.JoinedStr):
            skip.update(id(n) for n in ast.walk(node) if n is not node)  # its pieces and format specs
    found: dict[str, tuple[int, str]] = {}
    for top in tree.body:  # the reference names the function (or constant) a message is in: stable across edits
        where = getattr(top, "name", None) or next((t.id for t in getattr(top, "targets", []) if
                                                    isinstance(t, ast.Name)), "module")
        for node in ast.walk(top):
            if id(node) in skip:
                continue
            template = _template(node)
            prose = _FIELDLESS.sub("", template or "")
            spaced = " " in (prose if prose != template else prose.strip())  # "a {name}" is words; "ok" a name
            if re.search(r"[A-Za-z]", prose) and spaced:  # words, not a name or a reason
                found.setdefault(template, (node.lineno, f"minigrad_course/__init__.py:{where}"))
    return [(template, ref) for template, (_, ref) in sorted(found.items(), key=lambda item: item[1][0])]


_FIELDLESS = re.compile(r"\{[^{}]*\}")


def _template(node: ast.AST) -> str | None:
    """A string constant or f-string as a brace-format template; None for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.replace("{", "{{").replace("}", "}}")
    if isinstance(node, ast.JoinedStr):
        out = []
        for part in node.values:
            if isinstance(part, ast.Constant):
                out.append(part.value.replace("{", "{{").replace("}", "}}"))
            else:
                out.append("{" + ast.unparse(part.value) + "}")
        return "".join(out)
    return None


def catalog_path(lang: str, stem: str) -> Path:
    if stem == "checks":  # installed with the checks, which read it at run time
        return HERE / "minigrad_course" / "locale" / f"{lang}.po"
    return LOCALE / lang / f"{stem}.po"


def merge(old: list[Entry], messages: list[tuple[str, str]]) -> list[Entry]:
    """Today's messages with the old catalog's translations: unchanged English keeps its translation; a
    changed paragraph takes the translation of the most similar vanished one, flagged fuzzy (msgmerge's rule)."""
    by_id = {e.msgid: e for e in old}
    wanted = {m for m, _ in messages}
    vanished = [e for e in old if e.msgid not in wanted and e.msgstr]
    out = []
    for msgid, ref in messages:
        known = by_id.get(msgid)
        if known is not None:
            out.append(Entry(msgid, known.msgstr, known.fuzzy, known.previous if known.fuzzy else None, [ref],
                             known.comments))
            continue
        scored = [(difflib.SequenceMatcher(None, e.msgid, msgid).ratio(), i) for i, e in enumerate(vanished)]
        best = max(scored, default=(0.0, -1))
        if best[0] >= SIMILAR:
            was = vanished.pop(best[1])
            out.append(Entry(msgid, was.msgstr, True, was.previous or was.msgid, [ref], was.comments))
        else:
            out.append(Entry(msgid, "", False, None, [ref]))
    return out


def header(lang: str) -> dict[str, str]:
    return {
        "Project-Id-Version": "minigrad course",
        "Language": LANGUAGE_NAMES.get(lang, lang),
        "MIME-Version": "1.0",
        "Content-Type": "text/plain; charset=UTF-8",
        "Content-Transfer-Encoding": "8bit",
        "Plural-Forms": "nplurals=1; plural=0;",
    }


def catalogs() -> dict[str, list[tuple[str, str]]]:
    """{catalog stem: its messages}: every lesson, and ``course``."""
    out = {path.stem: lesson_messages(path) for path in build.sources()}
    out["course"] = course_messages()
    out["checks"] = checker_messages()
    return out


def update(lang: str) -> list[str]:
    """Extract and merge every catalog of ``lang``; returns what changed ("NN_name: 3 new, 1 fuzzy")."""
    report = []
    for stem, messages in catalogs().items():
        path = catalog_path(lang, stem)
        old = read_po(path)[1] if path.exists() else []
        entries = merge(old, messages)
        new = sum(not e.msgstr for e in entries)
        fuzzy = sum(e.fuzzy for e in entries)
        if [(e.msgid, e.msgstr, e.fuzzy) for e in entries] != [(e.msgid, e.msgstr, e.fuzzy) for e in old] \
                or not path.exists() or entries != old:
            write_po(path, header(lang), entries)
        if new or fuzzy:
            report.append(f"{path.relative_to(HERE)}: {new} untranslated, {fuzzy} fuzzy")
        elif not path.exists():
            write_po(path, header(lang), entries)
    return report


def problems(lang: str) -> list[str]:
    """Catalogs out of date with the sources, and messages without a current translation."""
    found = []
    for stem, messages in catalogs().items():
        path = catalog_path(lang, stem)
        if not path.exists():
            found.append(f"{path.relative_to(HERE)}: missing (run `make notebooks`)")
            continue
        entries = read_po(path)[1]
        if [e.msgid for e in entries] != [m for m, _ in messages]:
            found.append(f"{path.relative_to(HERE)}: out of date with its source (run `make notebooks`)")
        for entry in entries:
            if not entry.current:
                what = "fuzzy (its English changed)" if entry.fuzzy else "untranslated"
                found.append(f"{path.relative_to(HERE)}: {what}: {entry.msgid.splitlines()[0][:70]!r}")
    return found


class Translator:
    """Markdown of one lesson in ``lang``: each paragraph through its catalog (English where none is current)."""

    def __init__(self, lang: str, stem: str) -> None:
        self.lang = lang
        self.table = translations(catalog_path(lang, stem))
        self.table.update(translations(catalog_path(lang, "course")))
        self.missing: list[str] = []

    def __call__(self, text: str) -> str:
        out = []
        for para in paragraphs(text):
            done = para if copied(para) else self.table.get(para)
            if done is None:
                self.missing.append(para)
                done = para
            out.append(done)
        return "\n\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="report stale or untranslated messages; exit 1 if any")
    args = parser.parse_args(argv)
    status = 0
    for lang in TRANSLATED:
        if args.check:
            found = problems(lang)
            for line in found:
                print(line)
            print(f"i18n --check ({lang}): {'all current' if not found else f'{len(found)} problem(s)'}")
            status |= bool(found)
        else:
            for line in update(lang):
                print(f"i18n: {line}")
    return status


if __name__ == "__main__":
    sys.exit(main())
