"""minigrad's ``hint:`` lines in Chinese (issue 32): every hint has a current translation, the catalog holds no
hint minigrad no longer gives, the language follows viz's rule, and a Chinese learner reads PyTorch's English
message, then ``提示：…`` (the course's checks' label)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import minigrad
from minigrad import _hint
from viz.i18n import environment_language

SOURCES = sorted(Path(minigrad.__file__).resolve().parent.rglob("*.py"))


def _hints_in_code() -> list[str]:
    """The template of every ``hint(...)`` call in minigrad (implicitly joined literals read whole)."""
    found = []
    for path in SOURCES:
        text = path.read_text(encoding="utf-8")
        if "hint(" not in text:  # parse only the files that may call it (parsing all of minigrad takes seconds)
            continue
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "hint":
                assert node.args and isinstance(node.args[0], ast.Constant), f"{path}: hint() takes a literal"
                found.append(node.args[0].value)
    return found


def test_every_hint_has_a_current_translation_and_none_is_stale():
    code = _hints_in_code()
    assert len(code) >= 9
    catalog = _hint.read_po(_hint.CATALOG)
    assert sorted(set(code) - set(catalog)) == []  # untranslated, or fuzzy (its English changed)
    assert sorted(set(catalog) - set(code)) == []  # a hint minigrad no longer gives
    for msgid, msgstr in catalog.items():
        assert re.findall(r"\{\w+\}", msgid) == re.findall(r"\{\w+\}", msgstr), msgid  # values kept
        assert re.search(r"[\u4e00-\u9fff]", msgstr), msgid
        assert not msgstr.startswith(("提示", "hint")), msgid  # the label is added once, by hint()


def test_no_hint_line_bypasses_the_catalog():
    """A ``hint:`` written into an error's text directly would stay English for a Chinese learner."""
    bypass = [f"{p.name}: {line.strip()}" for p in SOURCES if p.name != "_hint.py"
              for line in p.read_text(encoding="utf-8").splitlines() if re.search(r"[\"'].*\bhint: ", line)]
    assert bypass == []


def test_a_fuzzy_entry_counts_as_untranslated(tmp_path):
    po = tmp_path / "zh.po"
    po.write_text('msgid "a"\nmsgstr "甲"\n\n#, fuzzy\nmsgid "b"\nmsgstr "乙"\n\nmsgid "c"\nmsgstr ""\n'
                  '"丙"\n\nmsgid "d"\nmsgstr ""\n', encoding="utf-8")
    assert _hint.read_po(po) == {"a": "甲", "c": "丙"}


@pytest.mark.parametrize("env", [
    {"MINIGRAD_LANG": "zh"}, {"MINIGRAD_LANG": "en", "LANG": "zh_CN.UTF-8"}, {"LANG": "zh_CN.UTF-8"},
    {"LANGUAGE": "fr:zh_TW", "LANG": "en_US.UTF-8"}, {"LC_ALL": "C.UTF-8", "LANG": "zh_CN.UTF-8"},
    {"LANG": "de_DE.UTF-8"}, {},
])
def test_minigrad_follows_the_language_rule_viz_and_the_checks_follow(env):
    assert _hint.language(env) == environment_language(env)


def _backward_twice(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError) as caught:
        y.backward()
    return str(caught.value)


@pytest.mark.parametrize("lang, label", [("zh", "提示："), ("en", "hint: ")])
def test_a_learner_reads_pytorchs_message_then_the_hint_in_their_language(monkeypatch, torch, lang, label):
    monkeypatch.setenv("MINIGRAD_LANG", lang)
    theirs, ours = _backward_twice(torch), _backward_twice(minigrad)
    first, hint_line = ours.split("\n")
    assert first == theirs  # PyTorch's own text, in English, as PyTorch prints it
    assert hint_line.startswith(label + "MulBackward0 ")  # the node name stays as PyTorch prints it
    assert ("retain_graph=True" in hint_line) and (bool(re.search(r"[\u4e00-\u9fff]", hint_line)) == (lang == "zh"))
    with pytest.raises(AssertionError, match=r"^Torch not compiled with CUDA enabled\n" + label):
        minigrad.zeros(1).cuda()


def test_a_finished_hint_line_reads_in_chinese_for_comparing_runs():
    line = "hint: AddBackward0 saved values for backward, and the earlier backward() freed them; pass " \
           "retain_graph=True to that earlier call if you need two.\n"
    assert _hint.translated_line(line, "zh").startswith("提示：AddBackward0 为反向传播保存了值")
    assert _hint.translated_line(line, "zh").endswith("。\n")
    assert _hint.translated_line(line, "en") == line
    assert _hint.translated_line("hint: something else", "zh") == "hint: something else"
