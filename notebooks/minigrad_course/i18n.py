"""The course's languages: which one the learner reads, and gettext ``.po`` catalogs read and written.

The language is ``MINIGRAD_LANG`` (``zh``, ``zh_CN``, ``en``), else the locale's (the first of ``LANGUAGE``,
``LC_ALL``, ``LC_MESSAGES``, ``LANG`` that is set, as Python's gettext looks them up; ``C`` is English), else
English. The Chinese lessons
(``notebooks/zh/``) set ``MINIGRAD_LANG=zh`` in their first code cell.

The catalogs are plain gettext ``.po`` files (what translators' tools open: Poedit, Weblate, Lokalize),
read here with the standard library alone so that the checks need no extra dependency: the lessons'
prose in ``notebooks/locale/zh/`` (``notebooks/i18n.py`` extracts and merges them) and the checks'
messages in ``minigrad_course/locale/zh.po``. An entry flagged ``fuzzy`` (its English changed since it
was translated) counts as untranslated: the English text is used until a translator confirms it.
"""

from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path

from viz.i18n import LANGUAGES, environment_language


def language() -> str:
    """``"zh"`` or ``"en"``: MINIGRAD_LANG, else the locale, else English (viz's rule: viz.i18n)."""
    return environment_language()


@dataclasses.dataclass
class Entry:
    """One message of a catalog."""

    msgid: str
    msgstr: str = ""
    fuzzy: bool = False
    previous: str | None = None  # "#| msgid": the English this (fuzzy) translation was made for
    references: list[str] = dataclasses.field(default_factory=list)  # "#: src/03_backward.py:12"
    comments: list[str] = dataclasses.field(default_factory=list)  # "#." notes for the translator

    @property
    def current(self) -> bool:
        """Translated for today's English (not empty, not fuzzy)."""
        return bool(self.msgstr) and not self.fuzzy


def _unquote(text: str) -> str:
    body = text.strip()
    if not (body.startswith('"') and body.endswith('"')):
        raise ValueError(f"a .po string is quoted: {text!r}")
    body = body[1:-1]
    return re.sub(r'\\(.)', lambda m: {"n": "\n", "t": "\t", '"': '"', "\\": "\\"}.get(m.group(1), m.group(1)), body)


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\t", "\\t").replace("\n", "\\n") + '"'


def _field(keyword: str, text: str) -> list[str]:
    """``msgid "..."`` lines: one quoted line per line of text (the form msgmerge writes)."""
    lines = text.splitlines(keepends=True)
    if len(lines) <= 1:
        return [f"{keyword} {_quote(text)}"]
    return [f'{keyword} ""'] + [_quote(line) for line in lines]


def read_po(path: Path) -> tuple[dict[str, str], list[Entry]]:
    """The header's fields and the entries of a ``.po`` file (obsolete ``#~`` entries are left out)."""
    entries: list[Entry] = []
    current: Entry | None = None
    target = None
    pending: dict = {"references": [], "comments": [], "fuzzy": False, "previous": None}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#~") or not line.strip():
            target = None if not line.strip() else target
            continue
        if line.startswith("#:"):
            pending["references"] += line[2:].split()
        elif line.startswith("#."):
            pending["comments"].append(line[2:].strip())
        elif line.startswith("#,"):
            pending["fuzzy"] = "fuzzy" in line
        elif line.startswith("#| msgid"):
            pending["previous"] = _unquote(line[len("#| msgid"):])
        elif line.startswith("#| "):
            pending["previous"] = (pending["previous"] or "") + _unquote(line[3:])
        elif line.startswith("#"):
            continue
        elif line.startswith("msgid "):
            current = Entry(_unquote(line[6:]), **pending)
            entries.append(current)
            pending = {"references": [], "comments": [], "fuzzy": False, "previous": None}
            target = "msgid"
        elif line.startswith("msgstr "):
            current.msgstr, target = _unquote(line[7:]), "msgstr"
        elif line.startswith('"') and current is not None and target:
            setattr(current, target, getattr(current, target) + _unquote(line))
        else:
            raise ValueError(f"{path}: cannot read the line {line!r}")
    header: dict[str, str] = {}
    if entries and entries[0].msgid == "":
        for line in entries.pop(0).msgstr.splitlines():
            key, _, value = line.partition(":")
            header[key.strip()] = value.strip()
    return header, entries


def write_po(path: Path, header: dict[str, str], entries: list[Entry]) -> None:
    """Write a catalog in gettext's layout (one quoted line per line of text, so a diff shows sentences)."""
    out = ['msgid ""', 'msgstr ""'] + [_quote(f"{k}: {v}\n") for k, v in header.items()]
    for entry in entries:
        out.append("")
        out += [f"#. {c}" for c in entry.comments]
        if entry.references:
            out.append("#: " + " ".join(entry.references))
        if entry.fuzzy:
            out.append("#, fuzzy")
        if entry.previous is not None:
            out += ["#| " + line for line in _field("msgid", entry.previous)]
        out += _field("msgid", entry.msgid) + _field("msgstr", entry.msgstr)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(out) + "\n", encoding="utf-8")


def translations(path: Path) -> dict[str, str]:
    """{English: translation} for the current entries of a catalog (fuzzy and empty ones left out)."""
    if not path.exists():
        return {}
    return {e.msgid: e.msgstr for e in read_po(path)[1] if e.current}


# -- the checks' messages ------------------------------------------------------------------------------------
#
# The checks build their messages with f-strings. Their catalog (``locale/<lang>.po``) holds each f-string as
# written, ``{expression}`` for each value it shows (python-brace-format; literal braces doubled), so that a
# translator sees the whole sentence. A finished message is translated by finding the template it was made
# from and putting its values, themselves translated when they are messages too ("a tensor"), into the
# translation. PyTorch's error texts and node names are values, and stay as PyTorch prints them.

LOCALE = Path(__file__).resolve().parent / "locale"
_FIELD = re.compile(r"\{\{|\}\}|\{([^{}]*)\}")
# A value's text has balanced brackets, nested two deep at most (a 2-D array): "train(x, lr=0.1)" is one value,
# "0.1) returned w = 1, expected (3" is not, so a template cannot match across the brackets of another value.
_FLAT = r"[^()\[\]]"
_NEST1 = rf"\((?:{_FLAT})*\)|\[(?:{_FLAT})*\]"
_NEST2 = rf"\((?:{_FLAT}|{_NEST1})*\)|\[(?:{_FLAT}|{_NEST1})*\]"
_VALUE = rf"((?:{_FLAT}|{_NEST2})*?)"


class Template:
    """One message of the checks: its English as a pattern to recognise, and its translation to fill in."""

    def __init__(self, msgid: str, msgstr: str) -> None:
        self.msgstr = msgstr
        self.fields: list[str] = []
        pattern, literal, at = [], 0, 0
        for m in _FIELD.finditer(msgid):
            text = msgid[at:m.start()]
            pattern.append(re.escape(text))
            literal += len(text)
            if m.group(1) is None:  # {{ or }}
                pattern.append(re.escape(m.group()[0]))
                literal += 1
            else:
                self.fields.append(m.group(1))
                pattern.append(_VALUE)
            at = m.end()
        pattern.append(re.escape(msgid[at:]))
        literal += len(msgid) - at
        self.regex = re.compile("".join(pattern) + r"\Z", re.DOTALL)
        self.literal = literal  # the more fixed text a template has, the more specific its match

    def render(self, values: dict[str, str]) -> str:
        return _FIELD.sub(lambda m: m.group()[0] if m.group(1) is None else values.get(m.group(1), m.group()),
                          self.msgstr)


class Catalog:
    """The current translations of one ``.po`` catalog of the checks, applied to finished messages."""

    def __init__(self, path: Path) -> None:
        self.exact: dict[str, str] = {}
        self.templates: list[Template] = []
        if path.exists():
            for entry in read_po(path)[1]:
                if not entry.current:
                    continue
                template = Template(entry.msgid, entry.msgstr)
                if template.fields:
                    self.templates.append(template)
                else:
                    self.exact[_unescape(entry.msgid)] = _unescape(entry.msgstr)
        self.templates.sort(key=lambda t: -t.literal)

    def recognises(self, text: str) -> bool:
        """Whether ``text`` is one of the checks' messages (made from a template this catalog translates)."""
        return text in self.exact or any(t.regex.match(text) for t in self.templates)

    def translate(self, text: str) -> str:
        """``text`` in the catalog's language; unchanged when it is not one of the checks' messages."""
        if not text:
            return text
        if text in self.exact:
            return self.exact[text]
        for template in self.templates:
            m = template.regex.match(text)
            if m:
                values = {}
                for name, value in zip(template.fields, m.groups()):
                    values.setdefault(name, self.translate(value))
                return template.render(values)
        return text


def _unescape(text: str) -> str:
    return text.replace("{{", "{").replace("}}", "}")


_CATALOGS: dict[str, Catalog] = {}


def translate(text: str, lang: str | None = None) -> str:
    """A check's message or hint in ``lang`` (default: :func:`language`); English stays as it is."""
    lang = lang or language()
    if lang == "en":
        return text
    if lang not in _CATALOGS:
        _CATALOGS[lang] = Catalog(LOCALE / f"{lang}.po")
    return _CATALOGS[lang].translate(text)


HINT_LABEL = {"en": "hint: ", "zh": "提示："}  # the label of a verdict's second line
