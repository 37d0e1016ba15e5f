"""The player in Chinese (issue 32): every word of the page in Chinese (node names stay as PyTorch prints them), and
CJK text that wraps and never overflows a node, the panel, the legend or a button — light and dark, inline at
1280x800 and in the player's own full screen at 1920x1080 (the projector), at every step, with the quiz's controls
and verdicts too. Overflow is measured, not eyeballed; screenshots: test-artifacts/zh_*.png.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"browser_{name}", Path(__file__).with_name(f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


helpers = _load("conftest")
catalogue = _load("graphs")
ARTIFACTS = helpers.REPO / "test-artifacts"
UI_TIMEOUT = 30_000
CJK = re.compile(r"[\u4e00-\u9fff]")

# What overflows: a button, the panel or the legend whose content is wider (or taller) than its box, a text of the
# panel or the legend that sticks out of it, a node's text outside its node's shape; and the page's words still in
# English (titles, aria-labels, the legend, the panel's title).
MEASURE_JS = """root => {
  const out = [];
  const inside = (a, b, slack) => a.left >= b.left - slack && a.right <= b.right + slack &&
    a.top >= b.top - slack && a.bottom <= b.bottom + slack;
  const shown = e => e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden';
  for (const b of root.querySelectorAll('button, select, .mg-count, .mg-zlabel')) {
    if (!shown(b)) continue;
    if (b.scrollWidth > b.clientWidth + 1 || b.scrollHeight > b.clientHeight + 1)
      out.push(['button', b.className, b.textContent, b.scrollWidth, b.clientWidth, b.scrollHeight, b.clientHeight]);
    if (!inside(b.getBoundingClientRect(), root.getBoundingClientRect(), 1))
      out.push(['button outside the player', b.className]);
  }
  for (const box of root.querySelectorAll('.mg-side, .mg-legend, .mg-quiz, .mg-bar')) {
    if (!shown(box)) continue;
    if (box.scrollWidth > box.clientWidth + 1) out.push(['box', box.className, box.scrollWidth, box.clientWidth]);
    const r = box.getBoundingClientRect();
    const walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
    for (let t = walker.nextNode(); t; t = walker.nextNode()) {
      if (!t.data.trim() || !t.parentElement || !shown(t.parentElement)) continue;
      const range = document.createRange(); range.selectNodeContents(t);
      for (const line of range.getClientRects())
        if (line.width && (line.left < r.left - 1 || line.right > r.right + 1))
          out.push(['text out of its box', box.className, t.data.slice(0, 40), line.left, line.right, r.left, r.right]);
    }
  }
  for (const g of root.querySelectorAll('.mg-stage svg g.node')) {
    const shape = g.querySelector('.mg-bg') || g.querySelector('polygon, path, ellipse, rect');
    if (!shape) continue;
    const s = shape.getBoundingClientRect();
    for (const t of g.querySelectorAll('text')) {
      if (!t.textContent.trim() || !shown(t) || t.parentElement.querySelector('circle')) continue;  // a badge
      if (!inside(t.getBoundingClientRect(), s, 2)) out.push(['node text', t.textContent.slice(0, 30)]);
    }
  }
  const english = [];
  for (const e of [root, ...root.querySelectorAll('[title], [aria-label], [placeholder]')])
    for (const a of ['title', 'aria-label', 'placeholder']) {
      const v = e.getAttribute(a);
      if (v && /[a-z]{3}/.test(v) && !/[\\u4e00-\\u9fff]/.test(v)) english.push([a, v]);
    }
  for (const e of root.querySelectorAll('.mg-legend .mg-key, .mg-title, .mg-q-label, .mg-q-prompt, .mg-q-head'))
    if (e.textContent.trim() && !/[\\u4e00-\\u9fff]/.test(e.textContent)) english.push(['text', e.textContent]);
  return {overflow: out.slice(0, 10), english: english.slice(0, 10),
          title: (root.querySelector('.mg-title') || {}).textContent || '',
          count: (root.querySelector('.mg-count') || {}).textContent || '',
          nodes: [...root.querySelectorAll('.mg-stage svg g.node text')].map(t => t.textContent)};
}"""

SETTLED = "r => !r.classList.contains('mg-busy') && r.querySelector('.mg-stage svg g.node')"


def _settle(page, root) -> None:
    page.wait_for_function(f"r => ({SETTLED})(r)", arg=root.element_handle(), timeout=UI_TIMEOUT)
    page.wait_for_timeout(150)


def _page(chromium, page_file: Path, size: tuple, scheme: str, errors: list[str] | None = None):
    """A saved page opened at ``size`` in ``scheme`` (its script errors collected in ``errors``)."""
    context = chromium(viewport={"width": size[0], "height": size[1]}, device_scale_factor=1)
    page = context.new_page()
    if errors is not None:
        page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.emulate_media(color_scheme=scheme)
    page.goto(page_file.resolve().as_uri(), timeout=UI_TIMEOUT)
    return context, page


def _open(chromium, page_file: Path, size: tuple, full: bool, scheme: str = "light",
          errors: list[str] | None = None):
    """A saved player opened at ``size`` in ``scheme``, in its own full screen when ``full``, settled."""
    context, page = _page(chromium, page_file, size, scheme, errors)
    root = page.locator(".mg-player")
    _settle(page, root)
    if full:
        root.locator("button.mg-full").click()
        page.wait_for_function("() => !!document.fullscreenElement", timeout=UI_TIMEOUT)
        _settle(page, root)
    return context, page, root


def _check(root, label: str) -> dict:
    found = root.evaluate(MEASURE_JS)
    assert found["overflow"] == [], (label, found["overflow"])
    assert found["english"] == [], (label, found["english"])
    return found


def test_chinese_names_fit_their_nodes(chromium, mg, pgv):
    """A learner's own names in Chinese (params={"权重": w}): each node and edge text inside its box, every step,
    inline and projected (viz reserves a CJK character's width as a whole em)."""
    import viz

    x = mg.tensor([0.5, -1.0, 2.0], requires_grad=True)
    w = mg.tensor([3.0, 1.0, -2.0], requires_grad=True)
    viz.set_language("zh")
    try:
        player = viz.animate(((x * w).exp() * x).sum(), params={"输入向量": x, "权重参数": w})
        page_file = player.save_html(ARTIFACTS / "zh_names.html")
    finally:
        viz.set_language(None)
    for size, full in (((1280, 800), False), ((1920, 1080), True)):
        context, page, root = _open(chromium, page_file, size, full)
        for k in range(player.num_steps):
            found = _check(root, f"names {size} step {k}")
            assert any("权重参数" in t for t in found["nodes"]), found["nodes"]
            if k == player.num_steps - 1:
                page.screenshot(path=str(ARTIFACTS / f"zh_names_{'projector' if full else '1280'}.png"))
            root.locator("button.mg-next").click()
            page.wait_for_timeout(40)
        context.close()


def test_a_chinese_player_fits_its_words_light_and_dark_inline_and_projected(chromium, mg, pgv):
    import viz

    ARTIFACTS.mkdir(exist_ok=True)
    viz.set_language("zh")
    try:
        loss, params = catalogue.lesson5(mg)
        player = viz.animate(loss, params=params, quiz=True, quiz_every=2)
        page_file = player.save_html(ARTIFACTS / "zh_player.html")
    finally:
        viz.set_language(None)
    steps = player.num_steps
    errors: list[str] = []
    seen_titles = set()
    for scheme in ("light", "dark"):
        for size, full in (((1280, 800), False), ((1920, 1080), True)):
            context, page, root = _open(chromium, page_file, size, full, scheme, errors)
            assert page.evaluate("() => document.documentElement.lang") == "zh-CN"
            label = f"{scheme}_{'projector' if full else '1280'}"
            visited, verdicts = set(), 0
            for _ in range(3 * steps):  # step to the end; a question stops the player until it is answered
                found = _check(root, f"{label} step {len(visited)}")
                seen_titles.add(found["title"])
                k, last = map(int, re.fullmatch(r"第 (\d+) 步 / 共 (\d+) 步", found["count"]).groups())
                assert last == steps - 1, found["count"]
                assert "MulBackward0" in found["nodes"] and "PowBackward0" in found["nodes"]  # names stay
                if k in (0, 2) and k not in visited:
                    page.screenshot(path=str(ARTIFACTS / f"zh_{label}_step{k}.png"))
                visited.add(k)
                if root.locator(".mg-q-form").count():  # reveal the answer: the verdict in Chinese
                    page.screenshot(path=str(ARTIFACTS / f"zh_{label}_quiz{k}.png"))
                    root.locator("button.mg-q-skip").click()
                    page.wait_for_timeout(100)
                    _check(root, f"{label} verdict {k}")
                    assert root.locator(".mg-q-head").first.text_content() in ("✗ 未作答", "✗ 不太对")
                    page.screenshot(path=str(ARTIFACTS / f"zh_{label}_verdict{k}.png"))
                    verdicts += 1
                    continue  # revealing the answer plays the step it asked about
                if k == steps - 1:
                    break
                root.locator("button.mg-next").click()
                page.wait_for_timeout(60)
            assert visited == set(range(steps)) and verdicts >= 2, (visited, verdicts)
            context.close()
    assert "反向传播开始" in seen_titles and "反向传播结束" in seen_titles, seen_titles
    assert any(t.endswith(" 运行") for t in seen_titles), seen_titles
    assert not errors, errors


# forward_vs_reverse's page: its buttons, counts, verdict and both sides' panels, measured the same way
JACOBIAN_JS = """root => {
  const out = [], english = [];
  const shown = e => e.getClientRects().length > 0;
  for (const b of root.querySelectorAll('button, .mgj-count')) {
    if (shown(b) && (b.scrollWidth > b.clientWidth + 1 || b.scrollHeight > b.clientHeight + 1))
      out.push(['button', b.className, b.textContent, b.scrollWidth, b.clientWidth]);
  }
  for (const box of root.querySelectorAll('.mgj-bar, .mgj-verdict, .mgj-side, .mgj-counts, .mgj-now, .mgj-sub')) {
    if (!shown(box)) continue;
    if (box.scrollWidth > box.clientWidth + 1) out.push(['box', box.className, box.scrollWidth, box.clientWidth]);
    const r = box.getBoundingClientRect();
    const walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
    for (let t = walker.nextNode(); t; t = walker.nextNode()) {
      if (!t.data.trim() || t.parentElement.closest('svg')) continue;
      const range = document.createRange(); range.selectNodeContents(t);
      for (const line of range.getClientRects())
        if (line.width && (line.left < r.left - 1 || line.right > r.right + 1))
          out.push(['text out of its box', box.className, t.data.slice(0, 40)]);
    }
  }
  for (const e of root.querySelectorAll('[title], [aria-label], [data-mg-text]'))
    for (const a of ['title', 'aria-label', 'data-mg-text']) {
      const v = e.getAttribute(a);
      if (v && /[a-z]{3}/.test(v) && !/[\\u4e00-\\u9fff]/.test(v)) english.push([a, v]);
    }
  const words = '.mgj-verdict, .mgj-title, .mgj-sub, .mgj-passes, .mgj-evals, .mgj-now, button';
  for (const e of root.querySelectorAll(words))
    if (/[a-z]{3}/.test(e.textContent) && !/[\\u4e00-\\u9fff]/.test(e.textContent))
      english.push(['text', e.textContent]);
  return {overflow: out.slice(0, 10), english: english.slice(0, 10),
          now: [...root.querySelectorAll('.mgj-now')].map(e => e.textContent)};
}"""


def test_forward_vs_reverse_in_chinese_fits_light_and_dark(chromium, mg, pgv):
    import viz

    ARTIFACTS.mkdir(exist_ok=True)
    viz.set_language("zh")
    try:
        race = viz.forward_vs_reverse(lambda t: (t * t).sin().sum(), mg.tensor([1.0, 2.0, 3.0]))
    finally:
        viz.set_language(None)
    page_file = race.save_html(ARTIFACTS / "zh_jacobian.html")
    errors: list[str] = []
    for scheme in ("light", "dark"):
        for size, full in (((1280, 800), False), ((1920, 1080), True)):
            context, page = _page(chromium, page_file, size, scheme, errors)
            root = page.locator(".mgj")
            page.wait_for_function("r => r.querySelector('.mgj-count').textContent", arg=root.element_handle(),
                                   timeout=UI_TIMEOUT)
            if full:
                root.locator("button.mgj-full").click()
                page.wait_for_function("() => !!document.fullscreenElement", timeout=UI_TIMEOUT)
            label = f"{scheme}_{'projector' if full else '1280'}"
            for k in range(race.num_steps):
                found = root.evaluate(JACOBIAN_JS)
                assert found["overflow"] == [] and found["english"] == [], (label, k, found)
                if k in (1, race.num_steps - 1):
                    page.screenshot(path=str(ARTIFACTS / f"zh_jacobian_{label}_step{k}.png"))
                root.locator("button.mgj-next").click()
                page.wait_for_timeout(40)
            assert any(CJK.search(t) for t in found["now"]), found["now"]
            context.close()
    assert not errors, errors


def test_forward_mode_player_in_chinese_fits(chromium, mg, pgv):
    """viz.animate(f, dual_x) in Chinese: the tangent's legend, steps and notes, light and dark, nothing overflowing."""
    import viz

    fw = mg.autograd.forward_ad
    viz.set_language("zh")
    try:
        with fw.dual_level():
            x = fw.make_dual(mg.tensor([0.5, -1.25, 2.0]), mg.tensor([1.0, 0.5, -2.0]))
            player = viz.animate(lambda x, w: (x * w).sin().sum(), x, mg.tensor([1.5, -0.75, 0.25]))
        page_file = player.save_html(ARTIFACTS / "zh_tangent.html")
    finally:
        viz.set_language(None)
    for scheme in ("light", "dark"):
        context, page, root = _open(chromium, page_file, (1280, 800), False, scheme)
        assert root.get_attribute("aria-label") == "前向模式（切向量）播放器"
        assert page.locator("h1").inner_text() == "viz：前向模式，一步一步"
        assert "正在计算它的值和切向量" in root.locator(".mg-legend").inner_text()
        titles = set()
        for k in range(player.num_steps):
            titles.add(_check(root, f"tangent {scheme} step {k}")["title"])
            if k == 2:
                page.screenshot(path=str(ARTIFACTS / f"zh_tangent_{scheme}.png"))
            root.locator("button.mg-next").click()
            page.wait_for_timeout(40)
        assert "前向模式：每个张量都带着一个切向量" in titles and "MulBackward0 计算它的值和切向量" in titles, titles
        context.close()


def test_rule_texts_and_node_words_in_chinese_fit(chromium, mg, pgv):
    """The per-op rule texts in the panel (ReLU's, amax's, mean's: formulas with Chinese words between them) and
    the words inside the nodes (保存的 self = …, 张量钩子 ×1), light and dark, at 1280x800 and projected: measured
    at every step, and the screenshots kept (test-artifacts/zh_rules_*.png)."""
    import viz

    x = mg.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], requires_grad=True)
    x.register_hook(lambda g: g)
    viz.set_language("zh")
    try:
        player = viz.animate(x.relu().amax(dim=1).mean(), params={"x": x})
        page_file = player.save_html(ARTIFACTS / "zh_rules.html")
    finally:
        viz.set_language(None)
    rules = [text for step in player.data["steps"] for kind, text in step["lines"] if kind == "rule"]
    assert "ReluBackward0: grad_self = grad（result > 0 处），其余为 0" in rules
    assert any("沿 dim 在各最大元素之间平分" in r for r in rules) and any("扩展成 self 的形状" in r for r in rules)
    for scheme in ("light", "dark"):
        for size, full in (((1280, 800), False), ((1920, 1080), True)):
            context, page, root = _open(chromium, page_file, size, full, scheme)
            label = f"{scheme}_{'projector' if full else '1280'}"
            panels = []
            for k in range(player.num_steps):
                found = _check(root, f"rules {label} step {k}")
                assert "张量钩子 ×1" in found["nodes"], found["nodes"]
                panels.append(root.locator(".mg-side").inner_text())
                if "其余为 0" in panels[-1] or "平分" in panels[-1]:
                    page.screenshot(path=str(ARTIFACTS / f"zh_rules_{label}_step{k}.png"))
                root.locator("button.mg-next").click()
                page.wait_for_timeout(40)
            assert any("其余为 0" in p for p in panels) and any("平分" in p for p in panels), panels
            context.close()
