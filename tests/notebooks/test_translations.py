"""The Chinese course (issue 32): catalogs complete and current, translations that keep the code, the glossary's
terms used as fixed, and the stored Chinese lessons built from the same code cells as the English ones.

The lessons' prose lives in gettext catalogs (notebooks/locale/zh/*.po, notebooks/i18n.py); a changed English
paragraph keeps its old translation flagged fuzzy, and a fuzzy or empty message fails here until translated.
"""

from __future__ import annotations

import configparser
import contextlib
import importlib.util
import io
import re
import sys
import warnings
from pathlib import Path

import nbformat
import pytest

from minigrad_course.i18n import Entry, read_po, write_po

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
ZH = NOTEBOOKS / "zh"
LOCALE = NOTEBOOKS / "locale" / "zh"
GLOSSARY = ZH / "GLOSSARY.md"
SOURCES = sorted((NOTEBOOKS / "src").glob("[0-9][0-9]_*.py"))
CODE, MATH, LINK = re.compile(r"`[^`]+`"), re.compile(r"\$[^$]+\$"), re.compile(r"\]\(([^)]+)\)")


@pytest.fixture(scope="module")
def i18n():
    """notebooks/i18n.py as a module (it imports build.py from its folder)."""
    if str(NOTEBOOKS) not in sys.path:
        sys.path.insert(0, str(NOTEBOOKS))
    spec = importlib.util.spec_from_file_location("course_i18n", NOTEBOOKS / "i18n.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _catalog(stem: str) -> list[Entry]:
    return read_po(LOCALE / f"{stem}.po")[1]


# -- the catalogs -------------------------------------------------------------------------------------------


def test_every_message_of_the_course_has_a_current_translation(i18n):
    """Every paragraph of every lesson (and the build's banners) is in its catalog, translated, not fuzzy."""
    assert i18n.problems("zh") == []


def test_every_lesson_has_its_catalog():
    assert sorted(p.stem for p in LOCALE.glob("*.po")) == sorted([p.stem for p in SOURCES] + ["course"])


def test_a_changed_english_paragraph_marks_its_translation_fuzzy(i18n):
    old = [Entry("Gradients add up.", "梯度会累加。"), Entry("Hooks see gradients.", "钩子能看到梯度。")]
    merged = i18n.merge(old, [("Gradients add up.", "a:1"), ("Hooks see the gradients.", "a:2"), ("New.", "a:3")])
    assert [(e.msgstr, e.fuzzy) for e in merged] == [("梯度会累加。", False), ("钩子能看到梯度。", True), ("", False)]
    assert merged[1].previous == "Hooks see gradients."  # the translator sees what changed
    assert not merged[1].current and not merged[2].current


def test_fuzzy_survives_a_write_and_a_read(tmp_path):
    entries = [Entry("one\ntwo", "一\n二", fuzzy=True, previous="one\n2", references=["src/x.py:3"]),
               Entry('a "quoted" \\ line', "引号 \"x\" \\")]
    write_po(tmp_path / "x.po", {"Language": "zh_CN"}, entries)
    header, back = read_po(tmp_path / "x.po")
    assert header == {"Language": "zh_CN"} and back == entries


def test_the_build_uses_english_where_a_translation_is_fuzzy(i18n, tmp_path, monkeypatch):
    stem = SOURCES[1].stem
    entries = _catalog(stem)
    entries[1].fuzzy = True
    monkeypatch.setattr(i18n, "LOCALE", tmp_path)
    write_po(tmp_path / "zh" / f"{stem}.po", {}, entries)
    translate = i18n.Translator("zh", stem)
    assert translate(entries[1].msgid) == entries[1].msgid and translate.missing == [entries[1].msgid]
    assert translate(entries[2].msgid) == entries[2].msgstr


@pytest.mark.parametrize("stem", [p.stem for p in SOURCES] + ["course"])
def test_translations_keep_the_code_formulas_and_links(stem):
    """Inline code, formulas and link targets are copied, not translated (spaces inside code may reflow)."""

    def spans(text):
        norm = " ".join
        return ({norm(m.split()) for m in CODE.findall(text)}, {norm(m.split()) for m in MATH.findall(text)},
                set(LINK.findall(text)))

    for entry in _catalog(stem):
        assert spans(entry.msgstr) == spans(entry.msgid), entry.msgid[:80]


# -- the glossary ---------------------------------------------------------------------------------------------


def _glossary() -> list[tuple[list[str], str]]:
    rows = []
    for line in GLOSSARY.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) == 3 and cells[0] not in ("英文", "---"):
            rows.append(([form.strip() for form in cells[0].split(" / ")], cells[1]))
    return rows


def _english_hits(text: str, terms) -> set[str]:
    """The glossary's Chinese terms whose English stands in ``text`` outside code (longer terms first, so that
    "vector-Jacobian product" is not also a "Jacobian")."""
    prose = CODE.sub(" ", text)
    hits = set()
    for forms, zh in sorted(terms, key=lambda t: -max(map(len, t[0]))):
        pattern = re.compile(r"(?<![\w-])(" + "|".join(re.escape(f) for f in sorted(forms, key=len, reverse=True))
                             + r")(?![\w-])", re.IGNORECASE)
        if pattern.search(prose):
            hits.add(zh)
            prose = pattern.sub(" ", prose)
    return hits


def _masked(text: str, zh: str, terms) -> str:
    """``text`` with every longer Chinese term that contains ``zh`` blanked out (叶子节点 is not a use of 节点)."""
    for _, other in terms:
        if other != zh and zh in other:
            text = text.replace(other, "\0" * len(other))
    return text


def test_the_glossary_has_the_terms_the_issue_names():
    terms = {zh for _, zh in _glossary()}
    assert {"计算图", "叶子节点", "梯度累加", "钩子", "反向传播", "雅可比矩阵"} <= terms
    assert len(terms) == len(_glossary()) >= 20


@pytest.mark.parametrize("stem", [p.stem for p in SOURCES])
def test_each_glossary_term_is_used_as_fixed(stem):
    terms = _glossary()
    wrong = []
    for entry in _catalog(stem):
        for zh in _english_hits(entry.msgid, terms):
            if zh not in entry.msgstr:
                wrong.append(f"{zh!r} missing from the translation of {entry.msgid[:70]!r}")
    assert wrong == []


def test_viz_uses_the_glossarys_terms():
    """The player's words (viz/locale/zh.po) use the glossary's terms as the lessons do: the same 梯度, 节点,
    叶子节点, 钩子 in the panel as in the prose beside it. Code (`...`) and values ({name}) are not prose."""
    from viz import i18n as viz_i18n

    terms = _glossary()
    wrong = []
    for msgid, msgstr, _ in viz_i18n.read_po(viz_i18n.LOCALE / "zh.po"):
        for zh in _english_hits(re.sub(r"\{[^{}]*\}|\w*_\w*|\.grad\b", " ", msgid), terms):
            if zh not in msgstr:
                wrong.append(f"{zh!r} missing from the translation of {msgid[:70]!r}")
    assert wrong == []


LESSON_TITLE = re.compile(r"\[[^\]]*\]\(\d\d_\w+\.ipynb\)")  # a link to a lesson shows that lesson's title


def _running_text(stem: str) -> str:
    """A lesson's translated prose in order, without headings, lesson titles in links, or emphasis marks."""
    lines = [line for entry in _catalog(stem) for line in entry.msgstr.splitlines() if not line.startswith("#")]
    return LESSON_TITLE.sub("[]", "\n".join(lines)).replace("*", "")


def first_use_problems(stem: str, terms) -> list[str]:
    """Glossary terms whose first use in the lesson is not followed by the English term in brackets (a compound
    such as 原地操作（in-place operation） counts: up to two characters may come between)."""
    body = _running_text(stem)
    wrong = []
    for forms, zh in terms:
        text = _masked(body, zh, terms)
        at = text.find(zh)
        if at < 0:
            continue
        after = text[at + len(zh):at + len(zh) + 80].lower()
        english = "|".join(re.escape(form.lower()) for form in sorted(forms, key=len, reverse=True))
        if not re.match(r"[\u4e00-\u9fff]{0,2}（(" + english + r")(?![\w-])", after):
            wrong.append(f"{zh}: {body[max(0, at - 20):at + 30]!r}")
    return wrong


@pytest.mark.parametrize("stem", [p.stem for p in SOURCES])
def test_the_english_term_stands_beside_its_first_use(stem):
    """In each lesson's running text (headings and lesson titles aside), a glossary term's first use is followed
    by its English term in brackets: 计算图（computation graph）."""
    assert first_use_problems(stem, _glossary()) == []


# -- the stored Chinese lessons -------------------------------------------------------------------------------


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_stored_chinese_notebooks_match_their_source(build, source):
    assert build.drift(source, lang="zh") == []


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_chinese_lessons_run_the_same_code_with_the_same_results(build, source):
    """Code cells equal the English ones (after the cell that sets the language), and so do their stored text
    outputs and the kinds of output (pictures included): the Chinese lessons were built and executed."""
    for rel in build.targets(source).values():
        english = nbformat.read(NOTEBOOKS / rel, as_version=4)
        chinese = nbformat.read(ZH / rel, as_version=4)
        assert chinese.metadata["minigrad_course"]["lang"] == "zh"
        code_en = [c for c in english.cells if c.cell_type == "code"]
        code_zh = [c for c in chinese.cells if c.cell_type == "code"]
        assert 'os.environ["MINIGRAD_LANG"] = "zh"' in code_zh[0].source
        assert [c.source for c in code_zh[1:]] == [c.source for c in code_en]
        for en, zh in zip(code_en, code_zh[1:]):
            if "check" in en.metadata.get("minigrad_course", {}).get("role", "") or "check_" in en.source:
                continue  # a check's verdict is in the learner's language
            assert [sorted(o.get("data", {})) for o in zh.outputs] == [sorted(o.get("data", {})) for o in en.outputs]
            if "NBVAL_IGNORE_OUTPUT" not in en.source:  # pictures, players, progress bars: not compared as text
                texts_zh, texts_en = _texts(zh), _texts(en)
                if _from_viz(texts_en):  # viz speaks the lesson's language: only its own words may differ
                    assert [_viz_lines(t) for t in texts_zh] == [_viz_lines(t, like=z) for t, z in
                                                                 zip(texts_en, texts_zh)], rel
                else:  # minigrad's hint lines are in the lesson's language; PyTorch's messages are not
                    assert texts_zh == [_hints_in_chinese(t) for t in texts_en], f"{rel}: {en.source[:60]!r}"


def _hints_in_chinese(text: str) -> str:
    from minigrad._hint import translated_line

    return "".join(translated_line(line, "zh") for line in text.splitlines(keepends=True))


def _from_viz(texts: list[str]) -> bool:
    """Whether an English output holds one of viz's messages (a line viz's catalog translates)."""
    from viz.i18n import tr

    return any(tr(part, "zh") != part for text in texts for line in text.splitlines()
               for part in (line, line.split(": ", 1)[-1]))  # a lesson may print its own label before it


# a node name or a number (a sentence's full stop after a node name is not part of it: "... is MulBackward0.")
VALUE = re.compile(r"[A-Za-z_][\w.]*\d(?:[\w.]*\w)?|AccumulateGrad|[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def _viz_lines(text: str, like: str | None = None) -> list:
    """A viz output line by line, as it compares between a Chinese and an English run: where viz translated the
    line (it has Chinese in the Chinese run, ``like``), the node names and numbers it shows, in their order; else
    the line itself, its runs of spaces as one (a table's columns are as wide as their translated headers). So
    the two compare equal exactly when they show the same nodes and values and every other line is the same."""
    lines, chinese = text.splitlines(), (like if like is not None else text).splitlines()
    if len(lines) != len(chinese):
        return lines
    return [VALUE.findall(line) if CJK.search(zh) else " ".join(line.split()) for line, zh in zip(lines, chinese)]


def _sanitizers() -> list[tuple[re.Pattern, str]]:
    """nbval's own sanitizers (.ci/nbval-sanitize.cfg): what differs from run to run (addresses, cell numbers)."""
    config = configparser.ConfigParser()
    config.read(NOTEBOOKS.parent / ".ci" / "nbval-sanitize.cfg", encoding="utf-8")
    return [(re.compile(config[s]["regex"]), config[s]["replace"]) for s in config.sections()]


def _texts(cell) -> list[str]:
    """A cell's text outputs, sanitized as nbval sanitizes them."""
    out = []
    for output in cell.outputs:
        text = "".join(output.get("text") or output.get("data", {}).get("text/plain", ""))
        for regex, replace in _sanitizers():
            text = regex.sub(replace, text)
        out.append(text)
    return out


def test_the_chinese_folder_holds_only_built_lessons(build):
    stems = {p.stem for p in SOURCES}
    assert {p.stem for p in ZH.glob("*.ipynb")} == stems
    assert {p.stem for p in (ZH / "solutions").glob("*.ipynb")} == {
        p.stem for p in SOURCES if "solution" in build.targets(p)}


# -- the checks in the learner's language -----------------------------------------------------------------------

CJK = re.compile(r"[\u4e00-\u9fff]")
# Verdicts of viz.gradcheck_graph that check 12 passes on as they are: viz's own texts, translated with viz's
# language switch (the player's part of issue 32), not by the checks' catalog.
VIZ_TEXTS = ("backward failed:",)


@pytest.mark.parametrize("env, want", [
    ({"MINIGRAD_LANG": "zh"}, "zh"),
    ({"MINIGRAD_LANG": "zh_CN.UTF-8", "LANG": "en_US.UTF-8"}, "zh"),
    ({"MINIGRAD_LANG": "en", "LANG": "zh_CN.UTF-8"}, "en"),
    ({"LANG": "zh_CN.UTF-8"}, "zh"),
    ({"LANGUAGE": "fr:zh_TW", "LANG": "en_US.UTF-8"}, "zh"),
    ({"LC_ALL": "C.UTF-8", "LANG": "zh_CN.UTF-8"}, "en"),  # the first variable set decides, as for gettext
    ({"LC_MESSAGES": "zh_CN.UTF-8", "LANG": "en_US.UTF-8"}, "zh"),
    ({"LANG": "de_DE.UTF-8"}, "en"),
    ({"MINIGRAD_LANG": "klingon"}, "en"),
    ({}, "en"),
])
def test_the_language_is_minigrad_lang_else_the_locale_else_english(monkeypatch, env, want):
    from minigrad_course import i18n

    for name in ("MINIGRAD_LANG", "LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert i18n.language() == want


def test_a_template_takes_the_values_of_the_message_it_made():
    from minigrad_course.i18n import Catalog, Template

    template = Template("for {label} you got {_fmt(arr)}, expected {_fmt(want)}",
                        "对于 {label}，你得到 {_fmt(arr)}，应为 {_fmt(want)}")
    m = template.regex.match("for f(t) = t ** 2 you got [[1, 2], [3, 4]], expected [2, 4]")
    assert m.groups() == ("f(t) = t ** 2", "[[1, 2], [3, 4]]", "[2, 4]")
    assert template.render(dict(zip(template.fields, m.groups()))) == \
        "对于 f(t) = t ** 2，你得到 [[1, 2], [3, 4]]，应为 [2, 4]"
    catalog = Catalog(Path(__file__).resolve().parents[2] / "notebooks" / "minigrad_course" / "locale" / "zh.po")
    # a value that is itself a message is translated too; one a template cannot have made is left alone
    assert catalog.translate("train(x, target, steps=1, lr=0.01) returned w = 1, expected 1.16 (w never changed)") \
        == "train(x, target, steps=1, lr=0.01) 返回 w = 1，应为 1.16（w 始终没有变化）"
    assert catalog.translate("RuntimeError: element 0 of tensors does not require grad") \
        == "RuntimeError: element 0 of tensors does not require grad"


def _run_check(answers, course, exercise_id, code):
    exercise = answers.EXERCISES[exercise_id]
    namespace = {"__name__": "__main__"}
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), \
            contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        exec(answers.PRELUDE + exercise.setup, namespace)  # noqa: S102
        exec(code, namespace)  # noqa: S102
        return getattr(course, exercise.check)(*(namespace[name] for name in exercise.args))


def test_every_verdict_of_the_known_answers_speaks_chinese(answers, course, monkeypatch):
    """Each wrong (and right) answer of tests/notebooks/answers.py, checked in English and in Chinese: the English
    message and hint are messages of the catalog and the Chinese verdict is their translation (or is composed of
    translated messages), with the hint's Chinese label."""
    from minigrad_course.i18n import LOCALE, Catalog

    catalog = Catalog(LOCALE / "zh.po")
    seen = 0
    for exercise_id, exercise in answers.EXERCISES.items():
        cases = [exercise.wrong_code(w) for w in exercise.wrong] + exercise.right[:1]
        for code in cases:
            monkeypatch.setenv("MINIGRAD_LANG", "en")
            english = _run_check(answers, course, exercise_id, code)
            monkeypatch.setenv("MINIGRAD_LANG", "zh")
            chinese = _run_check(answers, course, exercise_id, code)
            assert (chinese.passed, chinese.reason) == (english.passed, english.reason)
            for text, translated in ((english.message, chinese.message), (english.hint, chinese.hint)):
                if catalog.recognises(text):
                    assert translated == catalog.translate(text)
                elif not text.startswith(VIZ_TEXTS):  # composed of translated parts (6a's hint: "(c) " + a message)
                    assert not text or CJK.search(translated), f"{exercise_id}: not in the catalog: {text!r}"
            assert CJK.search(chinese.message + chinese.hint), str(chinese)
            if not chinese.passed:
                assert "\n  提示：" in str(chinese)
            seen += 1
    assert seen >= 70
