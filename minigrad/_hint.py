"""minigrad's ``hint:`` lines, in the learner's language.

An error keeps PyTorch's type and PyTorch's English message (what the learner searches for); the one line
minigrad adds after it is a hint, and a Chinese-speaking learner reads it in Chinese: ``提示：…``, as the
course's checks write theirs. The language is ``MINIGRAD_LANG`` (``zh``, ``en``), else the locale (the first of
``LANGUAGE``, ``LC_ALL``, ``LC_MESSAGES``, ``LANG`` that is set, as gettext reads them; ``C`` is English), else
English: the rule of ``viz.i18n.environment_language``, written again here because minigrad imports only
NumPy (a test keeps the two equal). It is read when the error is made, so a lesson may set it after import.

The translations are a gettext catalog, ``minigrad/locale/zh.po``, read with the standard library. A hint
with values is looked up by its template (``{node} saved values ...``) and filled in after translation, so a
node name stays as PyTorch prints it.
"""

from __future__ import annotations

import os
import re
from functools import cache
from pathlib import Path

LABELS = {"en": "hint: ", "zh": "提示："}
CATALOG = Path(__file__).resolve().parent / "locale" / "zh.po"
_ENV = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")


def _normalise(value: str) -> str | None:
    code = re.split(r"[_.@-]", value.strip().lower(), maxsplit=1)[0]
    return code if code in LABELS else None


def language(environ=None) -> str:
    """``"zh"`` or ``"en"``: MINIGRAD_LANG, else the locale, else English."""
    env = os.environ if environ is None else environ
    chosen = _normalise(env.get("MINIGRAD_LANG", ""))
    if chosen:
        return chosen
    value = next((env[name] for name in _ENV if env.get(name)), "")
    for part in value.split(":"):  # LANGUAGE may list several, best first
        if part.split(".")[0] in ("C", "POSIX"):
            break
        found = _normalise(part)
        if found:
            return found
    return "en"


def read_po(path: Path) -> dict[str, str]:
    """{msgid: msgstr} of a ``.po`` file's current entries (untranslated and ``fuzzy`` ones left out)."""
    entries: dict[str, str] = {}
    msgid = msgstr = None
    fuzzy = False
    target = ""
    for line in path.read_text(encoding="utf-8").splitlines() + [""]:
        text = line.strip()
        if text.startswith("#,") and "fuzzy" in text:
            fuzzy = True
        elif text.startswith(("msgid ", "msgstr ", '"')):
            keyword, _, quoted = text.partition(" ") if not text.startswith('"') else (target, "", text)
            value = re.sub(r'\\(.)', lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), quoted[1:-1])
            target = keyword
            if keyword == "msgid":
                msgid = (msgid or "") + value
            else:
                msgstr = (msgstr or "") + value
        elif not text:
            if msgid and msgstr and not fuzzy:
                entries[msgid] = msgstr
            msgid = msgstr = None
            fuzzy, target = False, ""
    return entries


@cache
def catalog() -> dict[str, str]:
    return read_po(CATALOG) if CATALOG.exists() else {}


def hint(template: str, **values: str) -> str:
    """The hint line ``hint: <template filled with values>``, in the learner's language (English when the
    catalog has no current translation). Values (node names, code) are never translated."""
    lang = language()
    text = catalog().get(template, template) if lang == "zh" else template
    return LABELS[lang] + text.format(**values)


def translated_line(line: str, lang: str) -> str:
    """A finished English ``hint: ...`` line as a learner of ``lang`` reads it; any other line unchanged (for
    tools that compare an English run with a Chinese one: the values in a hint, node names, are kept)."""
    if lang == "en" or not line.startswith(LABELS["en"]):
        return line
    body = line[len(LABELS["en"]):].rstrip("\n")
    end = line[len(LABELS["en"]) + len(body):]
    for template, text in catalog().items():
        pattern = re.escape(template)
        for name in re.findall(r"\{(\w+)\}", template):
            pattern = pattern.replace(re.escape("{" + name + "}"), f"(?P<{name}>\\S+)", 1)
        found = re.fullmatch(pattern, body)
        if found:
            return LABELS[lang] + text.format(**found.groupdict()) + end
    return line
