"""viz.session and source lines in a real browser (the exported player, file://, no kernel): stepping a
session across two backward calls, an optimizer step and the failing third backward; the forward
recording with source lines shows each node's line. Screenshots go to test-artifacts/."""

from __future__ import annotations

from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts"
UI_TIMEOUT = 30_000

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
    assert not errors, errors
    del loss
