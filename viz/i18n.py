"""viz's languages: which one the player, ``viz.summary`` and ``viz.compare`` speak, and their words in it.

The language is the one given to :func:`set_language` (``"zh"``, ``"en"``), else ``MINIGRAD_LANG``, else the
kernel's locale (the first of ``LANGUAGE``, ``LC_ALL``, ``LC_MESSAGES``, ``LANG`` that is set, as gettext
looks them up; ``C`` is English), else English. :func:`environment_language` is that rule without the
override; the course's checks (``notebooks/minigrad_course/i18n.py``) use it too, so the two never disagree.

viz's words are a gettext catalog, ``viz/locale/zh.po`` (what translators' tools open), read here with the
standard library alone. A message with values is written as its f-string (``Step {k} / {n}``, python-brace
format) so that the translator sees the whole sentence; a finished text is translated by finding the template
it was made from. Node names (``MulBackward0``), code and PyTorch's error texts are values, never messages:
they stay as PyTorch prints them. An entry flagged ``fuzzy`` (its English changed) counts as untranslated.
The page's own words (buttons, legends, the step counter) are translated in the page from the same catalog,
sent as data (viz/i18n.js), so an exported page keeps the language it was exported in.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

LANGUAGES = ("en", "zh")
LOCALE = Path(__file__).resolve().parent / "locale"
_ENV = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")
_CHOSEN: list[str] = []  # [language] once set_language was called


def normalise(value: str) -> str | None:
    """``zh_CN.UTF-8`` -> ``zh``; ``C``, ``POSIX``, empty or an unsupported language -> None."""
    code = re.split(r"[_.@-]", value.strip().lower(), maxsplit=1)[0]
    return code if code in LANGUAGES else None


def environment_language(environ: Any = None) -> str:
    """``"zh"`` or ``"en"``: MINIGRAD_LANG, else the locale, else English (the rule viz and the course share)."""
    env = os.environ if environ is None else environ
    chosen = normalise(env.get("MINIGRAD_LANG", ""))
    if chosen:
        return chosen
    value = next((env[name] for name in _ENV if env.get(name)), "")  # the first one set, as gettext
    for part in value.split(":"):  # LANGUAGE may list several, best first
        if part.split(".")[0] in ("C", "POSIX"):
            break
        found = normalise(part)
        if found:
            return found
    return "en"


def set_language(lang: str | None) -> str:
    """Make viz speak ``lang`` (``"zh"``, ``"en"``; None: follow MINIGRAD_LANG and the locale again).

    Returns the language now in force. Players made before keep theirs."""
    if lang is None:
        _CHOSEN.clear()
        return language()
    found = normalise(lang)
    if found is None:
        raise ValueError(f"viz.set_language: {lang!r} is not one of {', '.join(LANGUAGES)}")
    _CHOSEN[:] = [found]
    return found


def language() -> str:
    """The language viz speaks now (see the module's docstring)."""
    return _CHOSEN[0] if _CHOSEN else environment_language()


# -- the catalog ---------------------------------------------------------------------------------------------


def _unquote(text: str) -> str:
    body = text.strip()
    if not (body.startswith('"') and body.endswith('"')):
        raise ValueError(f"a .po string is quoted: {text!r}")
    return re.sub(r'\\(.)', lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), body[1:-1])


def read_po(path: Path) -> list[tuple[str, str, bool]]:
    """(msgid, msgstr, fuzzy) of each entry of a ``.po`` file, the header and obsolete ``#~`` ones left out."""
    entries: list[list] = []
    fuzzy, target = False, None
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#,"):
            fuzzy = "fuzzy" in line
        elif line.startswith("#") or not line.strip():
            target = None if not line.strip() else target
        elif line.startswith("msgid "):
            entries.append([_unquote(line[6:]), "", fuzzy])
            fuzzy, target = False, 0
        elif line.startswith("msgstr "):
            entries[-1][1], target = _unquote(line[7:]), 1
        elif line.startswith('"') and entries and target is not None:
            entries[-1][target] += _unquote(line)
        else:
            raise ValueError(f"{path}: cannot read the line {line!r}")
    return [(i, s, f) for i, s, f in entries if i]


_FIELD = re.compile(r"\{\{|\}\}|\{([^{}]*)\}")
# A value's text has balanced brackets, nested two deep at most (as the course's checks read theirs): in
# "... to AccumulateGrad (x) (its values)?" the value is "AccumulateGrad (x)", not "AccumulateGrad (x".
_FLAT = r"[^()\[\]]"
_NEST1 = rf"\((?:{_FLAT})*\)|\[(?:{_FLAT})*\]"
_NEST2 = rf"\((?:{_FLAT}|{_NEST1})*\)|\[(?:{_FLAT}|{_NEST1})*\]"
_VALUE = rf"((?:{_FLAT}|{_NEST2})*?)"


class Catalog:
    """The current translations of one catalog: exact messages, and templates with ``{values}``."""

    def __init__(self, path: Path) -> None:
        self.rules = RulePhrases(path.with_name(f"rules.{path.name}"))
        self.exact: dict[str, str] = {}
        self.templates: list[tuple[re.Pattern, list[str], str, int]] = []
        for msgid, msgstr, fuzzy in read_po(path) if path.exists() else []:
            if not msgstr or fuzzy:
                continue
            pattern, fields, literal, at = [], [], 0, 0
            for m in _FIELD.finditer(msgid):
                pattern.append(re.escape(msgid[at:m.start()]))
                literal += m.start() - at
                if m.group(1) is None:
                    pattern.append(re.escape(m.group()[0]))
                else:
                    fields.append(m.group(1))
                    pattern.append(_VALUE)
                at = m.end()
            pattern.append(re.escape(msgid[at:]))
            literal += len(msgid) - at
            if fields:
                self.templates.append((re.compile("".join(pattern) + r"\Z", re.DOTALL), fields, msgstr,
                                       literal))
            else:
                self.exact[msgid.replace("{{", "{").replace("}}", "}")] = msgstr.replace("{{", "{").replace("}}", "}")
        self.templates.sort(key=lambda t: -t[3])  # the most specific template first

    def translate(self, text: str) -> str:
        """``text`` in the catalog's language; unchanged when it is none of viz's messages."""
        if not text or text in self.exact:
            return self.exact.get(text, text)
        for regex, fields, msgstr, _ in self.templates:
            m = regex.match(text)
            if m:
                values = {name: self.translate(value) for name, value in zip(fields, m.groups())}
                return _fill(msgstr, values)
        return self.rules.translate(text) if _RULE_LINE.match(text) else text

    def for_page(self) -> dict:
        """The catalog as data for viz/i18n.js: exact texts, and templates as JavaScript regexes."""
        templates = []
        for regex, fields, msgstr, _ in self.templates:
            out = _fill(msgstr, {name: f"${i + 1}" for i, name in reversed(list(enumerate(fields)))})
            source = regex.pattern[:-2].replace(r"\ ", " ")  # the \Z is $ in JavaScript; JS needs no escaped space
            templates.append(["^" + source + "$", out.replace("$$", "$")])
        exact = {k: v for k, v in self.exact.items() if k not in _DRAWN}
        return {"exact": exact, "templates": templates}


# The lone words of drawings and viz.summary ("hidden", "leaf", "output"): translated in Python (viz/dot.py,
# viz/summary.py) and never sent to the page, which translates every text it shows: a learner's tensor may well
# be called "hidden" or "output".
_DRAWN = frozenset({"output", "leaf", "saved", "fn", "op", "none", "hidden", "unwalked", "module", "ghost",
                    "dashed", "tangent", "legend"})


# A line that states a node's rule: "MulBackward0: grad_self = ...", or a forward rule's "result_t = ..." (and
# never an error's text: "RuntimeError: ..." stays as PyTorch prints it).
_RULE_LINE = re.compile(r"(?:(?:\w*Backward\w*|CopySlices|NotImplemented|DelayedError): |result_t = )")
_COND = r"([^,;()+]+?)(?=,|;|\)| \(| \+|$)"  # a condition inside a formula: up to the next clause


class RulePhrases:
    """The English words of minigrad's rule texts (``node.rule_text``, the forward rules), phrase by phrase.

    A rule text is a formula with a few words in it (``grad_self = grad where result > 0, else 0``); the
    formulas are code and stay as they are, so the catalog (``viz/locale/rules.zh.po``) holds the phrases, each
    replaced where it stands, the longest first. ``{cond}`` is a condition inside the formula, ``{name}`` a
    name, both kept."""

    def __init__(self, path: Path) -> None:
        self.phrases: list[tuple[re.Pattern, str, int]] = []
        for msgid, msgstr, fuzzy in read_po(path) if path.exists() else []:
            if not msgstr or fuzzy:
                continue
            parts, at = [], 0
            for m in _FIELD.finditer(msgid):
                parts.append(re.escape(msgid[at:m.start()]))
                parts.append(f"(?P<{m.group(1)}>" + (_COND[1:] if m.group(1) == "cond" else r"[\w.]+)"))
                at = m.end()
            parts.append(re.escape(msgid[at:]))
            self.phrases.append((re.compile("".join(parts)), msgstr, len(msgid)))
        self.phrases.sort(key=lambda p: -p[2])

    def translate(self, text: str) -> str:
        for pattern, msgstr, _ in self.phrases:
            text = pattern.sub(lambda m, out=msgstr: _fill(out, m.groupdict()), text)
        return re.sub(r"(?<=\S) +(?=[（，；：])", "", text)  # no space before Chinese punctuation


def _fill(msgstr: str, values: dict[str, str]) -> str:
    """A template's translation with its ``{fields}`` replaced by ``values`` (``{{`` and ``}}`` as braces)."""
    return _FIELD.sub(lambda f: f.group()[0] if f.group(1) is None else values.get(f.group(1), ""), msgstr)


@cache
def catalog(lang: str) -> Catalog:
    return Catalog(LOCALE / f"{lang}.po")


def tr(text: str, lang: str | None = None) -> str:
    """One of viz's texts in ``lang`` (default: :func:`language`); English, and unknown texts, stay as they are."""
    lang = lang or language()
    return text if lang == "en" else catalog(lang).translate(text)


def page_data(lang: str | None = None) -> dict | None:
    """What a player's page needs to speak ``lang`` (None for English: the page's own words are English)."""
    lang = lang or language()
    if lang == "en":
        return None
    return {"lang": lang, **catalog(lang).for_page()}


# -- a font for Chinese in PNG exports and GIF captions ------------------------------------------------------

CJK_FONT_HINT = ("hint: viz found no CJK font, so Chinese text may show as boxes: install one "
                 "(Debian: apt-get install fonts-noto-cjk)")
_CJK = re.compile(r"[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef]")
_CJK_FAMILY = "Noto Sans CJK SC"


def has_cjk(text: str) -> bool:
    return bool(_CJK.search(text))


@lru_cache(maxsize=1)
def cjk_font() -> str | None:
    """The file of a CJK font on this system (fontconfig's choice for Chinese), or None."""
    if shutil.which("fc-match"):
        try:
            out = subprocess.run(["fc-match", "-f", "%{file}", ":lang=zh-cn"], capture_output=True, text=True,
                                 timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            out = ""
        if out and Path(out).exists() and any(k in out.lower() for k in ("cjk", "wqy", "droid", "han", "hei", "song")):
            return out
    for folder in ("/usr/share/fonts/opentype/noto", "/usr/share/fonts/truetype/noto", "/usr/share/fonts"):
        for found in sorted(Path(folder).glob("**/*CJK*")) if Path(folder).is_dir() else []:
            return str(found)
    return None


def width(text: str) -> int:
    """Columns ``text`` takes in a terminal: a CJK character takes two (so tables stay aligned)."""
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def ljust(text: str, columns: int) -> str:
    """``text`` padded with spaces to ``columns`` terminal columns (str.ljust counts characters)."""
    return text + " " * max(columns - width(text), 0)


_HINTED: set[str] = set()


def hint_once(text: str) -> None:
    """Print one hint line to stderr, once per process (a missing font is not an error: the picture is made)."""
    if text not in _HINTED:
        _HINTED.add(text)
        sys.stderr.write(text + "\n")


def words_on_node(node: Any, lang: str) -> Any:
    """A copy of a drawn node (viz.model.VNode) with viz's own words on it in ``lang``: its caption (``leaf``,
    ``same node as …``), its notes and badges (``tensor hooks ×1``), and the title of a collapsed group (``⋯ 3
    nodes hidden``). A node's name stays as it is, even one viz gave (``output``, ``leaf``: the name column of
    viz.summary, which code reads), and so do shapes, dtypes, values and code."""
    if lang == "en":
        return node
    import dataclasses

    title = tr(node.title, lang) if node.title and node.role in ("hidden", "unwalked") else node.title
    return dataclasses.replace(node, caption=tr(node.caption, lang) if node.caption else node.caption, title=title,
                               rows=[(k, tr(t, lang) if k == "note" else t) for k, t in node.rows],
                               badges=[tr(b, lang) for b in node.badges])


def saved_label(name: str, lang: str) -> str:
    """A saved value named in words in ``lang`` ("saved self", "保存的 self"): the name is code, kept as it is (a
    custom Function's ``saved_tensors[0]`` says it already)."""
    return name if name.startswith("saved") else f"{tr('saved', lang)} {name}"
