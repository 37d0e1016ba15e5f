"""viz.session and source lines in a real browser (the exported player, file://, no kernel): stepping a
session across two backward calls, an optimizer step and the failing third backward, with its legend and
its marks (changed, freed, the failing node); the forward recording with source lines shows each node's
line, lit by a click or from the keyboard; a folded module opened (the test answers the page's request as
the kernel does) keeps the source map. Screenshots go to test-artifacts/, at a projector's 1920x1080."""

from __future__ import annotations

from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts"
UI_TIMEOUT = 30_000
PROJECTOR = {"viewport": {"width": 1920, "height": 1080}}
LIT = ("root => [...root.querySelectorAll('g.node.mg-pick')].map(g => [...g.querySelectorAll('text')]"
       ".map(t => t.textContent).join(' ')).sort()")
MARKS = ("(root, cls) => [...root.querySelectorAll('g.node.' + cls)].map(g => g.querySelector('text').textContent)"
         ".sort()")

STEP_JS = """(root, k) => {
  root.mgPlayer.go(k);
  const current = [...root.querySelectorAll('g.node.mg-ref')].map(g => [...g.querySelectorAll('text')]
    .map(t => t.textContent).join(' '));
  return {title: root.querySelector('.mg-title').textContent,
          lines: [...root.querySelectorAll('.mg-line')].map(d => d.textContent), current};
}"""


def _open(context, html: Path, errors: list):
    page = context.new_page()
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(html.resolve().as_uri(), timeout=UI_TIMEOUT)
    page.wait_for_selector(".mg-player g.node", timeout=UI_TIMEOUT)
    return page


def test_session_steps_in_the_browser(chromium):
    import minigrad
    import viz

    w = minigrad.nn.Parameter(minigrad.tensor(np.array([1.0, 2.0])))
    x = minigrad.tensor(np.array([3.0, 4.0]))
    opt = minigrad.optim.SGD([w], lr=0.1)
    with viz.session(params={"w": w, "x": x}) as story:
        loss = (w * x).sum()
        loss.backward(retain_graph=True)
        loss.backward()
        opt.step()
        loss.backward()
    ARTIFACTS.mkdir(exist_ok=True)
    html = story.player().save_html(ARTIFACTS / "story_session.html")
    errors: list[str] = []
    page = _open(chromium(), html, errors)
    root = page.locator(".mg-player")
    seen = [root.evaluate(STEP_JS, k) for k in range(len(story.steps))]
    assert [s["title"] for s in seen] == ["[0] The tensors the session watches", "[1] loss.backward(retain_graph=True)",
                                          "[2] loss.backward()", "[3] SGD.step()", "[4] loss.backward() failed",
                                          "[5] The block ended with the error above"]
    assert "w.grad: [3, 4] -> [6, 8]   ([3, 4] + [3, 4] = [6, 8]: backward adds into .grad)" in seen[2]["lines"]
    assert any("[1, 2] - 0.1 × [6, 8] = [0.4, 1.2]" in t for t in seen[3]["lines"])
    assert any("freed after the backward of step 2" in t for t in seen[4]["lines"])
    assert any("MulBackward0" in t for t in seen[4]["current"]), seen[4]["current"]  # the node that lost its value
    root.evaluate("root => root.mgPlayer.go(4)")
    root.screenshot(path=str(ARTIFACTS / "story_session_failure.png"))
    assert not errors, errors


def test_session_legend_and_marks(chromium):
    """The session player's legend says what its marks mean, and the marks follow the story: the tensor a step
    changed is outlined, the node whose saved values a backward freed stays greyed from then on."""
    import minigrad
    import viz

    w = minigrad.nn.Parameter(minigrad.tensor(np.array([1.0, 2.0])))
    x = minigrad.tensor(np.array([3.0, 4.0]))
    opt = minigrad.optim.Adam([w], lr=0.1)
    with viz.session(params={"w": w, "x": x}) as story:
        loss = (w * x).sum()
        loss.backward(retain_graph=True)
        opt.step()
        opt.zero_grad()
        (g,) = minigrad.autograd.grad(loss, w)
        minigrad.autograd.backward(loss)
    assert [st.kind for st in story.steps] == ["start", "backward", "step", "zero_grad", "grad", "error", "done"]
    ARTIFACTS.mkdir(exist_ok=True)
    html = story.player().save_html(ARTIFACTS / "story_session_adam.html")
    errors: list[str] = []
    page = _open(chromium(**PROJECTOR), html, errors)
    root = page.locator(".mg-player")
    legend = root.locator(".mg-legend").inner_text()
    for text in ("value or .grad changed in this step", "the node this step is about",
                 "saved values freed (backward without retain_graph)", "panel: before -> after", "panel: the error"):
        assert text in legend, legend
    assert "created in this step" not in legend  # the forward player's key, which a session does not show
    marks = [(root.evaluate(STEP_JS, k), root.evaluate(MARKS, "mg-changed"), root.evaluate(MARKS, "mg-freed"))
             for k in range(len(story.steps))]
    assert [m[1] for m in marks] == [[], ["w"], ["w"], ["w"], [], [], []]  # .grad, the Adam step, zero_grad
    assert all(m[2] == [] for m in marks[:4]) and marks[4][2] == ["MulBackward0"]  # grad() freed its values
    step = marks[2][0]
    assert step["title"] == "[2] Adam.step()"
    assert any("t = 1, m̂ = [3, 4], v̂ = [9, 16]; p ← p − lr·m̂/(√v̂ + eps) = [1, 2] − 0.1 × [3, 4]/(√[9, 16] + "
               "1e-08) = [0.9, 1.9]" in t for t in step["lines"]), step["lines"]
    assert "returns the gradient for w: [3, 4]" in marks[4][0]["lines"]
    assert "MulBackward0" in " ".join(marks[5][0]["current"])  # the failing node is outlined
    root.evaluate("root => root.mgPlayer.go(2)")
    root.screenshot(path=str(ARTIFACTS / "story_session_adam.png"))
    root.evaluate("root => root.mgPlayer.go(5)")
    root.screenshot(path=str(ARTIFACTS / "story_session_freed.png"))
    assert not errors, errors


def test_source_lines_in_the_browser(chromium):
    """Each step shows the line that made its node; clicking that line lights up every node the line made
    (here MulBackward0 and SumBackward0), clicking it again turns them off."""
    import minigrad
    import viz

    x = minigrad.tensor(np.array([1.0, 2.0]), requires_grad=True)
    with viz.record(params={"x": x}, source=True) as rec:
        y = x * x  # line-y
        loss = (y * 2.0).sum()  # line-loss
    ARTIFACTS.mkdir(exist_ok=True)
    html = rec.player().save_html(ARTIFACTS / "story_source.html")
    errors: list[str] = []
    page = _open(chromium(), html, errors)
    root = page.locator(".mg-player")
    steps = [root.evaluate(STEP_JS, k) for k in range(len(rec.frames))]
    made = [s for s in steps if any(t.startswith("test_story_browser.py, line") for t in s["lines"])]
    assert len(made) == 3
    assert any(t.endswith("y = x * x  # line-y") for t in made[0]["lines"])
    assert all(any(t.endswith("loss = (y * 2.0).sum()  # line-loss") for t in m["lines"]) for m in made[1:])
    last = len(rec.frames) - 2  # the last node made: SumBackward0
    root.evaluate("(root, k) => root.mgPlayer.go(k)", last)
    lit = ("root => [...root.querySelectorAll('g.node.mg-ref')].map(g => [...g.querySelectorAll('text')]"
           ".map(t => t.textContent).join(' ')).sort()")
    assert root.evaluate(lit) == []
    root.locator(".mg-l-source").click()
    texts = root.evaluate(lit)
    assert len(texts) == 2 and "MulBackward0" in texts[0] and "SumBackward0" in texts[1], texts
    root.screenshot(path=str(ARTIFACTS / "story_source_clicked.png"))
    root.locator(".mg-l-source").click()
    assert root.evaluate(lit) == []
    # from the keyboard: Tab reaches the line, Enter lights its nodes, Space turns them off (and does not play)
    root.evaluate("root => root.focus()")
    line = root.locator(".mg-l-source")
    for _ in range(40):
        page.keyboard.press("Tab")
        if line.evaluate("d => d === document.activeElement"):
            break
    assert line.evaluate("d => d === document.activeElement"), "Tab never reached the source line"
    ring = line.evaluate("d => { const s = getComputedStyle(d); return [s.outlineStyle, s.outlineWidth]; }")
    assert ring == ["solid", "2px"], ring  # the focus ring shows
    page.keyboard.press("Enter")
    assert len(root.evaluate(lit)) == 2
    focused = root.locator(".mg-l-source")  # the panel was made again: focus stays on the line
    assert focused.evaluate("d => d === document.activeElement && d.getAttribute('aria-pressed')") == "true"
    root.screenshot(path=str(ARTIFACTS / "story_source_keyboard.png"))
    page.keyboard.press(" ")
    assert root.evaluate(lit) == []
    assert root.evaluate("root => root.classList.contains('mg-playing')") is False
    assert root.evaluate("root => root.getAttribute('data-frame')") == str(last)
    assert not errors, errors
    del loss


def test_source_map_survives_opening_a_folded_module(chromium, pgv):
    """The bug: after a folded module was opened, clicking a source line lit nothing up. The page asks for the
    module to open; the test answers as the kernel does (Player._on_msg sets the widget's svg and data)."""
    import minigrad
    import viz

    nn = minigrad.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 2)

        def forward(self, x):
            return self.fc(x) * x  # line-block

    minigrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 2), Block()).double()
    with viz.source_lines():
        loss = model(minigrad.randn(1, 2, dtype=minigrad.float64)).sum()  # line-loss
    player = viz.animate(loss, params=model, fold="module", source=True)
    ARTIFACTS.mkdir(exist_ok=True)
    html = player.save_html(ARTIFACTS / "story_folded.html")
    errors: list[str] = []
    page = _open(chromium(**PROJECTOR), html, errors)
    root = page.locator(".mg-player")
    # a page with a kernel behind it: requests go to the test (and the kernel has answered the player's ping)
    root.evaluate("root => { const m = root.mgPlayer.model; window.sent = []; m.send = (msg) => window.sent.push(msg);"
                  " m.set('standalone', false); root.mgPlayer.alive = true; }")
    root.locator("g.node.mg-box[data-scope='1']").click()
    (request,) = root.evaluate("() => window.sent")
    assert request == {"type": "expand", "scope": "1"}

    class Widget:
        svg = svg_alt = ""
        data: dict = {}

    widget = Widget()
    player._on_msg(widget, request, [])
    root.evaluate("(root, w) => { const m = root.mgPlayer.model; m.set('svg_alt', ''); m.set('svg', w.svg);"
                  " m.set('data', w.data); }", {"svg": widget.svg, "data": widget.data})
    page.wait_for_function("() => !document.querySelector('g.node.mg-box[data-scope=\"1\"]')", timeout=UI_TIMEOUT)
    steps = [root.evaluate(STEP_JS, k) for k in range(len(player.frames))]
    k = next(i for i, s in enumerate(steps) if any(t.endswith("# line-block") for t in s["lines"]))
    root.evaluate("(root, k) => root.mgPlayer.go(k)", k)
    root.locator(".mg-l-source").first.click()
    texts = root.evaluate(LIT)
    made = [n for n, line in widget.data["sources"].items() if line.endswith("# line-block")]
    assert len(texts) == len(made) >= 2, (texts, made)
    assert any("MulBackward0" in t for t in texts) and any("AddmmBackward0" in t for t in texts), texts
    root.screenshot(path=str(ARTIFACTS / "story_folded_opened.png"))
    assert not errors, errors


def test_backward_pass_layer_has_its_legend_key(chromium):
    """animate(layers=True): the nodes the first backward made (create_graph=True) are coloured as a second
    layer; the legend says what that colour means."""
    import minigrad
    import viz

    x = minigrad.tensor(2.0, requires_grad=True)
    with viz.source_lines():
        y = x**3
        (dy,) = minigrad.autograd.grad(y, x, create_graph=True)
    player = viz.animate(dy, params={"x": x}, layers=True)
    ARTIFACTS.mkdir(exist_ok=True)
    html = player.save_html(ARTIFACTS / "story_layers.html")
    errors: list[str] = []
    page = _open(chromium(**PROJECTOR), html, errors)
    root = page.locator(".mg-player")
    legend = root.locator(".mg-legend").inner_text()
    assert "second layer: made by a backward with create_graph" in legend, legend
    assert "made by the picked source line" not in legend  # no source=True: no lines to pick, no key
    root.evaluate("root => root.mgPlayer.go(2)")
    root.screenshot(path=str(ARTIFACTS / "story_layers.png"))
    assert not errors, errors
