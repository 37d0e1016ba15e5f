"""The quiz in the browser (viz.animate(loss, quiz=True)): a question asked before its step, answered by
clicking a node and by typing values, the verdict and the reason shown, the running score kept — in an
exported page (reloaded: the answers stay in the page's storage, nothing fetched) and in JupyterLab, where
``player.answers`` in the kernel reflects the click. Every text of the quiz is 10 px or more and reads at
4.5:1 or more, light and dark. Screenshots go to test-artifacts/quiz_*.png.
"""

from __future__ import annotations

import importlib.util
import json
import time
from pathlib import Path


def _load(name: str):
    """A sibling file as a module (the tests run in importlib mode: no package, no sys.path entry)."""
    spec = importlib.util.spec_from_file_location(f"browser_{name}", Path(__file__).with_name(f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


helpers = _load("conftest")
REPO, lab_api, wait_for = helpers.REPO, helpers.lab_api, helpers.wait_for
ARTIFACTS = REPO / "test-artifacts"
UI_TIMEOUT = 30_000
KERNEL_TIMEOUT = 60

GRAPH = """x = mg.tensor([1.0, 2.0], dtype=mg.float64, requires_grad=True)
w = mg.tensor([3.0, -1.0], dtype=mg.float64, requires_grad=True)
y = x * w  # used three times: the gradients of the uses meet at its node
player = viz.animate((y * y + y).sum(), params={"x": x, "w": w}, quiz=True)"""

FOLDED = """nn = mg.nn
mg.manual_seed(0)
model = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.Linear(2, 2), nn.Tanh()))
folded = viz.animate(model(mg.randn(1, 2)).sum(), params=model, fold="module", quiz=True)
folded"""

FIRST = "Which node runs next? (click it, or pick its name)"
SECOND = "AddBackward0 runs. What gradient does it send to MulBackward0 (its values)?"

# every text of the quiz: its size and its contrast with what is behind it (layers of backgrounds mixed)
QUIZ_TEXT_JS = "root => {\n" + helpers.CONTRAST_JS + """  const out = {count: 0, bad: []};
  for (const e of root.querySelectorAll('.mg-quiz *')) {
    const own = [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
    if (!own && !['INPUT', 'SELECT'].includes(e.tagName)) continue;
    if (!e.getClientRects().length) continue;
    out.count++;
    const c = getComputedStyle(e).color, b = backdrop(e);
    const r = contrast(c, b);
    const px = parseFloat(getComputedStyle(e).fontSize);
    if (r < 4.5 || px < 10) out.bad.push({text: (e.textContent || e.value).slice(0, 40), contrast: +r.toFixed(2), px});
  }
  return out;
}"""

FLIPPED = ("d => document.querySelector('.mg-dir').textContent.includes(d)"
           " && !document.querySelector('.mg-player').classList.contains('mg-busy')")
QUIZ_TEXT = "r => r.querySelector('.mg-quiz').innerText"


def _check_texts(root, label: str) -> int:
    found = root.evaluate(QUIZ_TEXT_JS)
    assert found["count"] >= 3 and found["bad"] == [], (label, found)
    return found["count"]


def _shot(root, label: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    root.screenshot(path=str(ARTIFACTS / f"quiz_{label}.png"))


def _answer_by_click(root) -> None:
    """Step forward: the first question comes before step 1; click SumBackward0's node in the picture."""
    root.locator("button.mg-next").click()
    assert root.get_attribute("data-frame") == "0"  # the step is not revealed before the answer
    assert root.locator(".mg-q-prompt").text_content() == FIRST
    assert "Quiz score: 0 / 0" in root.evaluate(QUIZ_TEXT)
    root.locator('.mg-stage g.node[data-n="n1"]').click()
    assert root.get_attribute("data-frame") == "1"  # revealed, with the verdict and the reason
    text = root.evaluate(QUIZ_TEXT)
    assert "✓ Right" in text and "Quiz score: 1 / 1" in text and "Your answer: SumBackward0" in text, text
    assert "every gradient flowing into it has arrived" in text, text


def test_quiz_answered_in_an_exported_page_and_in_jupyterlab(tmp_path, lab_server, chromium):
    import minigrad as mg
    import viz

    started = time.monotonic()
    namespace = {"mg": mg, "viz": viz}
    exec(GRAPH, namespace)
    html = namespace["player"].save_html(ARTIFACTS / "quiz_export.html")
    context = chromium(viewport={"width": 1280, "height": 800})
    errors: list[str] = []

    # the exported page: no kernel, no network
    page = context.new_page()
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(html.resolve().as_uri(), timeout=UI_TIMEOUT)
    page.wait_for_selector(".mg-player svg g.node", timeout=UI_TIMEOUT)
    root = page.locator(".mg-player")
    assert root.evaluate(QUIZ_TEXT).startswith("Quiz score: 0 / 0")
    root.locator("button.mg-next").click()
    _check_texts(root, "export question")
    _shot(root, "export_question")
    root.locator("button.mg-first").click()
    _answer_by_click(root)
    _check_texts(root, "export verdict")
    # the second question: typed, wrong; the verdict gives the answer and the rule with its values
    root.locator("button.mg-next").click()
    assert root.locator(".mg-q-prompt").text_content() == SECOND
    assert root.evaluate("r => r.querySelector('g.node.mg-asked').getAttribute('data-n')") == "n2"
    _check_texts(root, "export typed question")
    _shot(root, "export_typed_question")
    root.locator("button.mg-dir").click()  # laid out left to right: the question is still asked
    page.wait_for_function(FLIPPED, arg="TB", timeout=UI_TIMEOUT)
    assert root.locator(".mg-q-prompt").text_content() == SECOND
    root.locator("button.mg-dir").click()
    page.wait_for_function(FLIPPED, arg="LR", timeout=UI_TIMEOUT)
    root.locator(".mg-q-input").fill("[2, 2]")
    root.locator(".mg-q-input").press("Enter")
    text = root.evaluate(QUIZ_TEXT)
    assert "✗ Not quite" in text and "Your answer: [2, 2]" in text and "The answer: [1, 1]" in text, text
    assert "Rule: AddBackward0: grad_self = grad" in text and "Quiz score: 1 / 2" in text, text
    assert root.get_attribute("data-frame") == "2"
    _check_texts(root, "export wrong")
    _shot(root, "export_verdict")
    # kept in the page: reloaded, the score and the verdicts are still there; an answered question is not
    # asked again, the next one is
    page.reload()
    page.wait_for_selector(".mg-player svg g.node", timeout=UI_TIMEOUT)
    root = page.locator(".mg-player")
    assert root.evaluate(QUIZ_TEXT).startswith("Quiz score: 1 / 2")
    root.locator("button.mg-next").click()
    assert root.get_attribute("data-frame") == "1" and "✓ Right" in root.evaluate(QUIZ_TEXT)
    root.locator("button.mg-last").click()  # a jump stops before the first unanswered question
    assert root.get_attribute("data-frame") == "2"
    assert root.locator(".mg-q-prompt").text_content() == FIRST  # question 3: which node runs next
    root.locator(".mg-q-pick").select_option("MulBackward0")  # picked rather than clicked
    root.locator(".mg-q-check").click()
    assert "Quiz score: 2 / 3" in root.evaluate(QUIZ_TEXT)
    assert [u for u in requests if not u.startswith(("file:", "blob:", "data:"))] == []
    page.close()
    dark = context.new_page()
    dark.emulate_media(color_scheme="dark")
    dark.on("pageerror", lambda exc: errors.append(str(exc)))
    dark.goto(html.resolve().as_uri(), timeout=UI_TIMEOUT)
    dark.wait_for_selector(".mg-player svg g.node", timeout=UI_TIMEOUT)
    root = dark.locator(".mg-player")
    assert root.evaluate("r => r.classList.contains('mg-dark')")
    root.locator("button.mg-next").click()  # answered: step 1 and its verdict
    root.locator("button.mg-next").click()
    root.locator("button.mg-next").click()  # answered: step 3
    root.locator("button.mg-next").click()  # question 4 (the sum), asked
    assert "Gradients from 3 uses meet" in root.locator(".mg-q-prompt").text_content()
    _check_texts(root, "export dark question")
    root.locator(".mg-q-input").fill("7, -3")
    root.locator(".mg-q-check").click()
    assert "✓ Right" in root.evaluate(QUIZ_TEXT) and "Quiz score: 3 / 4" in root.evaluate(QUIZ_TEXT)
    _check_texts(root, "export dark verdict")
    _shot(root, "export_dark")
    dark.close()
    assert not errors, errors

    # JupyterLab: the click reaches the kernel
    root_dir = tmp_path / "root"
    root_dir.mkdir()
    sources = ["import minigrad as mg, viz\n" + GRAPH + "\nplayer", FOLDED]
    nb = {"cells": [{"cell_type": "code", "execution_count": None, "id": f"c{i}", "metadata": {}, "outputs": [],
                     "source": source.splitlines(keepends=True)} for i, source in enumerate(sources)],
          "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
          "nbformat": 4, "nbformat_minor": 5}
    (root_dir / "quiz.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    base, token = lab_server(root_dir)
    lab_api(base, token, "/api/sessions", {"path": "quiz.ipynb", "type": "notebook", "name": "quiz.ipynb",
                                           "kernel": {"name": "python3"}})
    lab = context.new_page()
    lab.on("pageerror", lambda exc: errors.append(str(exc)))
    lab.goto(f"{base}/lab/tree/quiz.ipynb?token={token}", timeout=UI_TIMEOUT)
    wait_for("an idle kernel", KERNEL_TIMEOUT, lambda: all(
        s["kernel"]["execution_state"] == "idle" for s in lab_api(base, token, "/api/sessions")))
    lab.wait_for_function("() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
                          " const k = w && w.sessionContext && w.sessionContext.session"
                          " && w.sessionContext.session.kernel;"
                          " return k && k.status === 'idle' && w.content && w.content.widgets.length > 0; }",
                          timeout=UI_TIMEOUT)
    lab.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    lab.wait_for_function("() => [...document.querySelectorAll('.jp-OutputArea .mg-player')]"
                          ".filter(p => p.querySelector('svg g.node[data-n]')).length === 2", timeout=UI_TIMEOUT)
    root = lab.locator(".jp-OutputArea .mg-player").first
    _answer_by_click(root)
    _check_texts(root, "lab verdict")
    _shot(root, "lab_verdict")

    def kernel_says(code: str = "print(player.score, player.answers)") -> str:
        return lab.evaluate("""async code => {
          const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
          const future = kernel.requestExecute({code, silent: false});
          let out = '';
          future.onIOPub = msg => { if (msg.header.msg_type === 'stream') out += msg.content.text; };
          await future.done;
          return out;
        }""", code)

    said = wait_for("the click in player.answers", 15, lambda: (lambda s: s if s.startswith("(1, 1)") else None)(
        kernel_says()))
    assert "'given': 'n1', 'correct': True" in said and "'expected': 'SumBackward0'" in said, said
    # the score is kept: stepping back and forth asks nothing again
    root.locator("button.mg-first").click()
    root.locator("button.mg-next").click()
    assert root.get_attribute("data-frame") == "1" and "Quiz score: 1 / 1" in root.evaluate(QUIZ_TEXT)
    # answered from Python: the page counts it too, and does not ask it again
    kernel_says('player.answer(1, "[1, 1]")')
    lab.wait_for_function("() => document.querySelector('.jp-OutputArea .mg-quiz').innerText"
                          ".includes('Quiz score: 2 / 2')", timeout=UI_TIMEOUT)
    root.locator("button.mg-next").click()
    assert root.get_attribute("data-frame") == "2" and "✓ Right" in root.evaluate(QUIZ_TEXT)
    # a folded module opened in a quiz player: the kernel lays the graph out again, the quiz stays
    folded = lab.locator(".jp-OutputArea .mg-player").nth(1)
    folded.locator("button.mg-next").click()
    assert folded.locator(".mg-q-prompt").text_content() == FIRST
    folded.locator('.mg-stage g.node[data-n="n1"]').click()
    assert "✓ Right" in folded.evaluate(QUIZ_TEXT)
    box = folded.locator(".mg-stage g.node.mg-box").first
    scope = box.get_attribute("data-scope")
    box.click()
    lab.wait_for_function("s => { const r = document.querySelectorAll('.jp-OutputArea .mg-player')[1];"
                          " return !r.querySelector(`g.node.mg-box[data-scope='${s}']`)"
                          " && !r.classList.contains('mg-busy'); }", arg=scope, timeout=UI_TIMEOUT)
    text = folded.evaluate(QUIZ_TEXT)
    assert "Quiz score: 1 / 1" in text and "✓ Right" in text, text
    folded.locator("button.mg-next").click()
    assert folded.locator(".mg-q-prompt").count() == 1  # the next question is asked on the opened graph
    _shot(folded, "lab_opened_module")
    assert not errors, errors
    context.close()
    print(f"\nquiz browser test took {time.monotonic() - started:.1f} s")
