"""viz in Chinese (issue 32): the language rule, the catalog complete and current, the player's payload, the page's
own words, viz.summary and viz.compare, and Chinese text in PNG exports and GIF captions."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import viz
from viz import i18n
from viz.export import _wrap

VIZ = Path(viz.__file__).resolve().parent
CJK = re.compile(r"[\u4e00-\u9fff]")
ENV = ("MINIGRAD_LANG", "LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")


@pytest.fixture
def zh():
    """viz speaks Chinese for one test (and follows the environment again after it)."""
    viz.set_language("zh")
    yield
    viz.set_language(None)


@pytest.mark.parametrize("env, want", [
    ({"MINIGRAD_LANG": "zh"}, "zh"),
    ({"MINIGRAD_LANG": "zh_CN.UTF-8", "LANG": "en_US.UTF-8"}, "zh"),
    ({"MINIGRAD_LANG": "en", "LANG": "zh_CN.UTF-8"}, "en"),
    ({"LANG": "zh_CN.UTF-8"}, "zh"),
    ({"LANGUAGE": "fr:zh_TW", "LANG": "en_US.UTF-8"}, "zh"),
    ({"LC_ALL": "C.UTF-8", "LANG": "zh_CN.UTF-8"}, "en"),
    ({"LANG": "de_DE.UTF-8"}, "en"),
    ({}, "en"),
])
def test_set_language_else_minigrad_lang_else_the_locale_else_english(monkeypatch, env, want):
    for name in ENV:
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert viz.i18n.language() == want
    from minigrad_course import i18n as course  # the checks follow the same rule, stated once

    assert course.language() == want
    other = "en" if want == "zh" else "zh"
    try:
        assert viz.set_language(other) == other and viz.i18n.language() == other  # the call wins
        assert course.language() == want  # the checks follow the environment, not the player's switch
    finally:
        viz.set_language(None)
    assert viz.i18n.language() == want
    with pytest.raises(ValueError, match="'fr' is not one of en, zh"):
        viz.set_language("fr")


# -- the catalog ----------------------------------------------------------------------------------------------


def _entries():
    return i18n.read_po(i18n.LOCALE / "zh.po")


def test_every_message_of_viz_has_a_current_translation():
    entries = _entries()
    assert len(entries) >= 100
    assert [m for m, s, fuzzy in entries if not s or fuzzy] == []
    assert len({m for m, _, _ in entries}) == len(entries)


def _sources() -> str:
    """viz's code with its strings joined where the code breaks them over lines ("..." + "...", implicit)."""
    code = "\n".join(p.read_text(encoding="utf-8") for p in sorted(VIZ.glob("*.py")) + sorted(VIZ.glob("*.js")))
    return re.sub(r'"\s*\+?\s*\n\s*f?"', "", code)


_SEP = r"(?:\s|\{[^{}\n]*\})+"  # between two words of a message: spaces, or a value the code puts there


def _word(word: str) -> str:
    """A word of a message as the code may write it: a plural's s may be an f-string's choice ({'s' if ...})."""
    if len(word) > 3 and word.endswith("s"):
        return re.escape(word[:-1]) + r"(?:s|\{[^{}\n]*\})"
    return re.escape(word)


def test_no_message_is_stale():
    """Each message's English still stands in viz's code (its words in order, values between them): a changed
    English sentence leaves its entry behind, and this fails until the catalog follows (and is translated again)."""
    code = _sources()
    stale = []
    for msgid, _, _ in _entries():
        for part in re.split(r"\{[^{}]*\}", msgid):
            words = [w for w in part.split() if w.strip(".,:;")]  # a sentence's stop may stand apart in the code
            if words and not re.search(_SEP.join(_word(w) for w in words), code):
                stale.append(f"{msgid!r}: {part!r}")
    assert stale == []


def test_every_word_the_page_writes_has_a_translation():
    """The page's own words (buttons' labels and tooltips, legends, the quiz's controls) are in the catalog."""
    exact = i18n.catalog("zh").exact
    words = set()
    for name in ("player", "story", "tangent", "quiz"):
        js = (VIZ / f"{name}.js").read_text(encoding="utf-8")
        words |= set(re.findall(r'\["mg-k-[\w-]+", "([^"]+)"', js))  # legends
        words |= set(re.findall(r'button\("[\w -]+", "([^"]+)"', js))  # buttons' tooltips
        words |= set(re.findall(r'(?:title|placeholder) = (?:[^;]*\? )?"([^"]+)"', js))
        words |= set(re.findall(r'h\("(?:button|div|option)", "?[\w -]*"?,? ?"([A-Z][^"]+)"\)', js))
    assert len(words) >= 30
    assert sorted(w for w in words if w not in exact) == []


def test_the_translations_keep_the_values():
    """A template's translation shows each of its values (node names and numbers stay as they are)."""
    for msgid, msgstr, _ in _entries():
        assert sorted(re.findall(r"\{[^{}]*\}", msgid)) == sorted(re.findall(r"\{[^{}]*\}", msgstr)), msgid
        # Chinese words, or at least Chinese punctuation around the values
        assert CJK.search(msgstr) or re.search(r"[\uff00-\uffef\u3000-\u303f]", msgstr), msgid


def test_templates_translate_finished_texts_and_leave_node_names():
    assert i18n.tr("AccumulateGrad (w) adds into w.grad", "zh") == "AccumulateGrad (w) 累加到 w.grad"
    assert i18n.tr("grad = [1, 2] (from MulBackward0)", "zh") == "grad = [1, 2]（来自 MulBackward0）"
    assert i18n.tr("MulBackward0", "zh") == "MulBackward0"
    assert i18n.tr("RuntimeError: element 0 of tensors does not require grad", "zh") == \
        "RuntimeError: element 0 of tensors does not require grad"
    assert i18n.tr("runs now", "en") == "runs now"
    page = i18n.page_data("zh")
    assert page["lang"] == "zh" and page["exact"]["Play (space)"] == "播放（空格）"
    step = [source for source, out in page["templates"] if out == "第 $1 步 / 共 $2 步" and source.startswith("^Step")]
    assert len(step) == 1 and re.match(step[0], "Step 3 / 7").groups() == ("3", "7")  # JS reads the same syntax
    assert i18n.page_data("en") is None


# -- the player -----------------------------------------------------------------------------------------------


def _loss(mg):
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    w = mg.tensor([3.0, 4.0], requires_grad=True)
    return (x * w).sum(), {"x": x, "w": w}


def test_a_chinese_player_carries_its_words_and_keeps_node_names(mg, zh):
    loss, params = _loss(mg)
    player = viz.animate(loss, params=params)
    steps = player.data["steps"]
    assert steps[0]["title"] == "反向传播开始"
    assert [s["title"] for s in steps[1:3]] == ["SumBackward0 运行", "MulBackward0 运行"]
    assert "AccumulateGrad (w) 累加到 w.grad" in [s["title"] for s in steps]
    assert player.data["i18n"]["lang"] == "zh"
    from viz.player import front_ends

    assert "i18n" in front_ends(player.data)
    viz.set_language("en")
    assert viz.animate(_loss(mg)[0]).data["steps"][0]["title"] == "Backward starts"
    assert "i18n" not in viz.animate(_loss(mg)[0]).data
    assert steps[0]["title"] == "反向传播开始"  # a player keeps the language it was made in


def test_an_exported_page_keeps_its_language(mg, pgv, zh, tmp_path):
    loss, params = _loss(mg)
    player = viz.animate(loss, params=params)
    viz.set_language("en")
    page = player.save_html(tmp_path / "zh.html").read_text(encoding="utf-8")
    assert "function mgI18n" in page and "反向传播开始" in page and "播放（空格）" in page
    english = viz.animate(_loss(mg)[0]).save_html(tmp_path / "en.html").read_text(encoding="utf-8")
    assert "function mgI18n" not in english and not CJK.search(english.split("<script", 1)[0])


def test_summary_and_compare_speak_chinese_with_aligned_columns(mg, zh):
    loss, params = _loss(mg)
    text = str(viz.summary(loss, params=params))
    head, columns, *rows = text.splitlines()
    assert head == "反向视图：5 个节点，4 条边"
    assert columns.split() == ["编号", "类型", "名称", "形状", "指向", "数据", "备注"]  # no .grad yet
    # a CJK character takes two terminal columns: each row's cells start under their header
    starts = [i18n.width(columns[:columns.index(c)]) for c in ("类型", "名称")]
    assert all(_before_column(row, starts[0]) == "  " and _before_column(row, starts[1]) == "  " for row in rows)
    assert "MulBackward0" in text and "AccumulateGrad" in text
    assert [row.split()[1] for row in rows] == ["输出", "grad_fn节点", "grad_fn节点", "叶子节点", "叶子节点"]
    assert [row.split()[2] for row in rows][:2] == ["output", "SumBackward0"]  # names stay (code reads them)
    mine = {"x": params["w"].detach().numpy(), "w": params["x"].detach().numpy() * 2}  # w's gradient is wrong
    table = repr(viz.compare(loss, mine, params, draw=False))
    assert "张量" in table and "结论" in table and "按反向顺序第一个错误" in table


def _before_column(row: str, column: int) -> str:
    """The two characters a terminal shows just before ``column`` (a CJK character takes two columns)."""
    at = next(i for i in range(len(row) + 1) if i18n.width(row[:i]) >= column)
    return row[at - 2:at]


# -- pictures --------------------------------------------------------------------------------------------------


def test_chinese_wraps_between_characters_not_before_closing_punctuation():
    lines = _wrap("AccumulateGrad (x) 累加到 x.grad，所以它直接等于这个梯度。", len, 14)
    assert "".join(lines).replace(" ", "") == "AccumulateGrad(x)累加到x.grad，所以它直接等于这个梯度。"
    assert all(len(line) <= 14 or " " not in line for line in lines)
    assert not any(line.startswith(("，", "。")) for line in lines)
    assert _wrap("hello world this is a test", len, 12) == ["hello world", "this is a", "test"]


def test_a_cjk_font_is_found_and_gif_captions_use_it(mg, pgv, zh, tmp_path):
    from PIL import Image

    font = i18n.cjk_font()
    assert font is not None and Path(font).exists(), "make test installs fonts-noto-cjk (Makefile: cjk-font)"
    loss, params = _loss(mg)
    player = viz.animate(loss, params=params)
    from viz.export import _Captions, step_caption

    assert step_caption(player.scene, 1) == "第 1 步 / 共 5 步：SumBackward0 运行"
    captions = _Captions(400, 1.0, [step_caption(player.scene, 1)])
    assert Path(captions.font.path).resolve() == Path(font).resolve()
    band = captions.under(Image.new("RGB", (400, 10), "white"), step_caption(player.scene, 1))
    caption = band.crop((0, 10, 400, band.height)).convert("L")
    inked = caption.width * caption.height - caption.histogram()[255]
    assert inked > 300  # glyphs drawn, not the default font's empty boxes alone
    assert player.save_gif(tmp_path / "zh.gif").exists()


def test_without_a_cjk_font_one_hint_line(monkeypatch, capsys, zh, mg, pgv):
    monkeypatch.setattr(i18n, "cjk_font", lambda: None)
    monkeypatch.setattr(i18n, "_HINTED", set())
    import viz.export as export

    monkeypatch.setattr(export, "cjk_font", lambda: None)
    export._Captions(200, 1.0, ["第 1 步"])
    export._Captions(200, 1.0, ["第 2 步"])
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("hint: viz found no CJK font") and "fonts-noto-cjk" in err
    i18n._HINTED.clear()  # a PNG of a graph with a Chinese name says it too, and is made all the same
    x = mg.tensor([1.0], requires_grad=True)
    assert viz.draw((x * 2).sum(), params={"权重": x}).png() is not None
    assert capsys.readouterr().err == err


def test_page_data_is_json():
    assert json.loads(json.dumps(i18n.page_data("zh")))["lang"] == "zh"


# -- the per-op rule texts ------------------------------------------------------------------------------------

# The words a rule text's formulas use: code (names, arguments, functions written bare), never English prose.
_CODE_WORDS = {
    "grad", "grads", "result", "self", "other", "input", "output", "weight", "bias", "target", "value", "values",
    "tensor", "tensors", "source", "src", "vec", "key", "query", "exponent", "max", "min", "dim", "dims", "index",
    "indices", "mask", "condition", "alpha", "beta", "threshold", "mean", "correction", "scale", "diagonal",
    "shifts", "pad", "reduction", "training", "stats", "geo", "transposed", "numel", "inf", "eps", "rstd", "zeros",
    "ln", "hypot", "ord", "sgn", "sign", "dtype", "eval", "dist", "scatter", "add", "gelu", "softplus", "argmax",
    "argmin", "start", "end", "step", "unique", "if", "else", "N", "P", "B", "d", "g", "i", "j", "k", "p", "s",
    "x", "y", "keepdim", "NONE", "None", "False"}  # (NONE: PyTorch's Reduction::None, in derivatives.yaml's formulas;
# None, False: Python's, in forward formulas)
_BARE = re.compile(r"(?<![\w.'])[A-Za-z]+(?![\w(])")  # a word that is not a call, an attribute or a name_part


def _rule_texts() -> dict[str, str]:
    """Every rule line viz can show, as the player writes it ("MulBackward0: grad_self = ..."): each declared
    node's backward rule and forward rule, and CopySlices'."""
    from minigrad.ops.inplace import CopySlices
    from minigrad.ops.registry import NODES, node_forward_rule

    texts = {"CopySlices": f"CopySlices: {CopySlices.rule_text.fget(None)}"}
    for name, cls in NODES.items():
        if hasattr(cls, "_text"):
            texts[name] = f"{name}: {cls._text}"
            forward = node_forward_rule(name)
            if forward and forward[1]:
                texts[name + " (forward)"] = f"{name}: {forward[1]}"
    return texts


def test_every_rule_text_reads_in_chinese():
    """No English word is left in any rule text in Chinese (the formulas' code stays): a new rule with new words
    fails here until viz/locale/rules.zh.po has them."""
    texts = _rule_texts()
    assert len(texts) >= 300
    left = {}
    for name, text in texts.items():
        words = set(_BARE.findall(i18n.tr(text, "zh").split(": ", 1)[1])) - _CODE_WORDS
        if words:
            left[name] = sorted(words)
    assert left == {}
    assert i18n.tr(texts["ReluBackward0"], "zh") == "ReluBackward0: grad_self = grad（result > 0 处），其余为 0"
    assert i18n.tr(texts["MulBackward0"], "zh") == texts["MulBackward0"]  # a formula alone is left as it is
    assert i18n.tr(texts["ReluBackward0"], "en") == texts["ReluBackward0"]


def test_no_rule_phrase_is_stale():
    """Each phrase of the rules' catalog still stands in one of minigrad's rule texts, and keeps its values."""
    texts = list(_rule_texts().values())
    phrases = i18n.read_po(i18n.LOCALE / "rules.zh.po")
    assert [m for m, s, fuzzy in phrases if not s or fuzzy] == []
    compiled = i18n.catalog("zh").rules.phrases
    assert len(compiled) == len(phrases)
    unused = [p.pattern for p, _, _ in compiled if not any(p.search(t) for t in texts)]
    assert unused == []
    for msgid, msgstr, _ in phrases:
        assert sorted(re.findall(r"\{\w+\}", msgid)) == sorted(re.findall(r"\{\w+\}", msgstr)), msgid
        assert CJK.search(msgstr), msgid


def test_the_player_explains_each_rule_in_chinese(mg, zh):
    x = mg.tensor([-1.0, 2.0], requires_grad=True)
    player = viz.animate(x.relu().sum(), params={"x": x})
    lines = [text for step in player.data["steps"] for kind, text in step["lines"] if kind == "rule"]
    assert "ReluBackward0: grad_self = grad（result > 0 处），其余为 0" in lines


# -- the words inside the graph, Frame.text, the session's steps -------------------------------------------------


def test_the_words_inside_a_drawn_graph_speak_chinese_and_names_stay(mg, zh):
    x = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x.register_hook(lambda g: g)
    y = (x * x.exp()).sum()
    dot = viz.draw(y, params={"x": x}, show_saved=True, legend=True).source
    assert "保存的 self = x (3,)" in dot and "saved self" not in dot
    assert "AccumulateGrad · (3,) float32" in dot and "MulBackward0" in dot  # as PyTorch prints them
    assert "张量钩子 ×1" in dot and "图例" in dot and "你画的张量" in dot and "槽位 0" in dot
    viz.set_language("en")
    english = viz.draw(y, params={"x": x}, show_saved=True, legend=True).source
    assert "saved self = x (3,)" in english and "tensor hooks ×1" in english and not CJK.search(english)


def test_frame_text_and_the_sessions_steps_speak_chinese(mg, zh):
    x = mg.tensor([1.0, -2.0], requires_grad=True)
    player = viz.animate(x.relu().sum(), params={"x": x})
    relu = next(f.text for f in player.frames if f.text.startswith("ReluBackward0"))
    assert relu.splitlines()[0] == "ReluBackward0 运行" and "grad_self = grad（result > 0 处），其余为 0" in relu
    w = mg.tensor([1.0, 2.0], requires_grad=True)
    with viz.session(params={"w": w}) as story:
        loss = (w * w).sum()
        loss.backward()
    text = story.summary()
    assert CJK.search(text) and "MulBackward0" in text
    viz.set_language("en")
    assert not CJK.search(story.summary())  # the text is told in the language in force when it is read
    assert next(f.text for f in player.frames if f.text.startswith("ReluBackward0")).startswith("ReluBackward0 runs\n")


def test_a_learners_tensor_named_like_a_word_of_viz_keeps_its_name_in_the_page(mg, zh):
    """The page translates every text it shows: the lone words of drawings ("hidden", "output") are translated
    before it (in the DOT), and never sent to it, so a tensor called "hidden" stays "hidden"."""
    page = i18n.page_data("zh")["exact"]
    assert "hidden" not in page and "output" not in page and "leaf" not in page
    assert page["Play (space)"] == "播放（空格）"
    hidden = mg.tensor([1.0, 2.0], requires_grad=True)
    player = viz.animate((hidden * 2).sum(), params={"hidden": hidden})
    assert "hidden" not in player.data["i18n"]["exact"]


def test_still_pictures_of_a_chinese_player_speak_chinese(mg, zh, monkeypatch):
    """What shows where the widget cannot run (the PNG beside it): its note line, and the race's whole card."""
    from viz.export import frame_agraph
    from viz.jacobian import _card

    x = mg.tensor([0.5, -1.0, 2.0], requires_grad=True)
    race = viz.forward_vs_reverse(lambda t: (t * t).sin().sum(), x)
    card = "".join(_card(race))
    for english in ("Forward mode", "Reverse mode", "one per input", "one per output", "op evaluations",
                    "Run the cell", "The Jacobian", "passes", "wins"):
        assert english not in card, english
    assert "前向模式 · jacfwd" in card and "运行这个单元格即可播放" in card and "每个输入一遍" in card
    assert "jacfwd" in card and "jacrev" in card  # names stay as PyTorch spells them
    from viz import export

    notes = []
    player = viz.animate(_loss(mg)[0])
    monkeypatch.setattr(export, "frame_agraph",
                        lambda scene, k, note: notes.append(note) or frame_agraph(scene, k, note))
    viz.set_language("en")  # the player keeps the language it was made in
    player.png()
    assert notes == ["运行这个单元格即可播放"]
    viz.set_language("en")
    english_race = viz.forward_vs_reverse(lambda t: (t * t).sin().sum(), mg.tensor([0.5, -1.0], requires_grad=True))
    assert "Run the cell to play" in "".join(_card(english_race)) and not CJK.search("".join(_card(english_race)))
