"""viz.animate(loss, quiz=True): questions from the real backward pass, answers checked in Python
(player.answer, player.answers, player.score), and the questions carried in the page's payload."""

from __future__ import annotations

import re

import numpy as np
import pytest

import viz
from viz.quiz import KINDS, make_quiz


def _graph(lib):
    """y = x * w used three times (y * y + y): the gradients of the uses meet at x * w's node."""
    x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
    w = lib.tensor([3.0, -1.0], dtype=lib.float64, requires_grad=True)
    y = x * w
    return (y * y + y).sum(), {"x": x, "w": w}


def test_questions_follow_the_backward_pass(lib, pgv):
    loss, params = _graph(lib)
    player = viz.animate(loss, params=params, quiz=True)
    qs = player.quiz.questions
    assert [q.kind for q in qs] == ["next", "grad", "next", "sum", "accumulate", "accumulate"]
    assert [q.step for q in qs] == [1, 2, 3, 4, 5, 6]
    assert qs[0].expected_text == "SumBackward0"
    np.testing.assert_allclose(qs[3].expected, [7.0, -3.0])  # dy = 2y + 1, y = [3, -2]
    assert "[1, 1] + [3, -2] + [3, -2] = [7, -3]" in qs[3].reason
    grads = {re.search(r"What does (\w+)\.grad", q.prompt).group(1): q.expected for q in qs if q.kind == "accumulate"}
    np.testing.assert_allclose(grads["x"], [21.0, 3.0])
    np.testing.assert_allclose(grads["w"], [7.0, -6.0])
    np.testing.assert_allclose(params["x"].grad.numpy(), [21.0, 3.0])  # the real backward ran


def test_answers_are_checked_and_scored(mg, pgv):
    loss, params = _graph(mg)
    player = viz.animate(loss, params=params, quiz=True)
    qs = player.quiz.questions
    assert player.answer(0, "SumBackward0").correct
    assert player.answer(0, "MulBackward0").correct is False  # a second answer is recorded, not scored
    assert player.answer(1, "[1, 1]").correct
    assert player.answer(3, [7.001, -3.0]).correct  # rounded values count
    assert not player.answer(4, "[7, -3]").correct
    assert not player.answer(5, ...).correct
    assert player.score == (3, 5)
    answers = player.answers
    assert [a["question"] for a in answers] == [0, 0, 1, 3, 4, 5]
    assert answers[4] == {"question": 4, "step": 5, "kind": "accumulate", "given": "[7, -3]", "correct": False,
                          "expected": qs[4].expected_text, "reason": qs[4].reason}
    assert player.answer(0, qs[0].expected).correct  # the drawn id, as a click sends it


def test_large_tensors_ask_for_a_shape(mg, pgv):
    x = mg.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
    player = viz.animate((x * 2).sum(), quiz=True, quiz_kinds=["grad"])
    (q,) = [q for q in player.quiz.questions if q.kind == "grad"][:1]
    assert q.expected == (3, 4) and q.expected_text == "(3, 4)"
    assert player.answer(q.id, "(3, 4)").correct and player.answer(q.id, [3, 4]).correct
    assert not player.answer(q.id, "(4, 3)").correct


def test_kinds_and_frequency_are_options(mg, pgv):
    loss, params = _graph(mg)
    frames = viz.trace_backward(loss, params=params)
    assert {q.kind for q in make_quiz(frames, ["accumulate"]).questions} == {"accumulate"}
    assert len(make_quiz(frames, KINDS, every=2).questions) == 3
    assert len(make_quiz(frames, KINDS, max_questions=2).questions) == 2
    with pytest.raises(ValueError, match="unknown quiz kinds"):
        make_quiz(frames, ["guess"])


def test_questions_ride_in_the_payload_and_page_answers_are_recorded(mg, pgv):
    loss, params = _graph(mg)
    player = viz.animate(loss, params=params, quiz=True)
    payload = player.data["quiz"]
    assert [q["id"] for q in payload] == list(range(len(player.quiz.questions)))
    assert payload[3]["expected"] == [7.0, -3.0] and payload[0]["names"][0] == "SumBackward0"
    player._on_msg(None, {"type": "answer", "question": 3, "given": "7, -3"}, [])
    player._on_msg(None, {"type": "answer", "question": "nonsense", "given": 1}, [])  # ignored, never raises
    assert player.answers[-1]["correct"] and player.score == (1, 1)


def test_without_quiz_nothing_is_added(mg, pgv):
    loss, params = _graph(mg)
    player = viz.animate(loss, params=params)
    assert "quiz" not in player.data and not hasattr(player, "quiz")


def test_answers_from_the_page_come_through_the_synced_list(mg, pgv):
    pytest.importorskip("anywidget")
    loss, params = _graph(mg)
    player = viz.animate(loss, params=params, quiz=True)
    widget = player.widget
    assert widget.answers == []
    widget.answers = [{"question": 0, "given": "n1", "correct": True}]  # a click on SumBackward0's node
    widget.answers = widget.answers + [{"question": 1, "given": "[2, 2]", "correct": False}]
    assert [(a["question"], a["given"], a["correct"]) for a in player.answers] == [(0, "n1", True),
                                                                                   (1, "[2, 2]", False)]
    assert player.score == (1, 2)
    widget.answers = widget.answers + [{"question": 99, "given": "x"}]  # no such question: ignored
    assert player.score == (1, 2)
    player.answer(2, "MulBackward0")  # from Python: recorded once, and the page shows it too
    player.answer(3, ...)
    assert player.score == (2, 4) and len(player.answers) == 4
    assert widget.answers[-2:] == [{"question": 2, "given": "MulBackward0", "correct": True},
                                   {"question": 3, "given": None, "correct": False}]
    player.close()


def _folded(mg):
    nn = mg.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 2)

        def forward(self, x):
            return self.fc(x) * x

    mg.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 2), Block())
    return model(mg.randn(1, 2)).sum(), model


def test_opening_a_module_keeps_the_quiz_in_the_page(mg, pgv):
    pytest.importorskip("anywidget")
    loss, model = _folded(mg)
    player = viz.animate(loss, params=model, fold="module", quiz=True)
    widget = player.widget
    before = {(q.kind, q.prompt, q.expected_text): q.id for q in player.quiz.questions if q.kind != "next"}
    widget.answers = [{"question": 0, "given": player.quiz.questions[0].expected}]
    player._on_msg(widget, {"type": "expand", "scope": "1"}, [])
    assert "quiz" in widget.data and widget.data["quiz"] == player.quiz.to_payload()
    after = player.quiz.questions
    assert len(after) > 0 and len({q.id for q in after}) == len(after)
    kept = [q for q in after if (q.kind, q.prompt, q.expected_text) in before]
    assert kept and all(before[(q.kind, q.prompt, q.expected_text)] == q.id for q in kept)
    assert all(q.step < len(widget.data["steps"]) for q in after)
    assert player.score == (1, 1)  # the answer given before stays
    player.close()


def test_only_quiz_players_carry_the_quiz_front_end(mg, pgv, tmp_path):
    pytest.importorskip("anywidget")
    loss, params = _graph(mg)
    plain, quiz = viz.animate(loss, params=params), viz.animate(*_graph(mg), quiz=True)
    assert "quizGate(k) {" not in plain.widget._esm and "mg-quiz" not in plain.widget._css
    assert "quizGate(k) {" in quiz.widget._esm and ".mg-quiz" in quiz.widget._css
    assert "answers" in quiz.widget.keys and "answers" not in plain.widget.keys
    assert "quizGate(k) {" not in plain.save_html(tmp_path / "plain.html").read_text(encoding="utf-8")
    assert "quizGate(k) {" in quiz.save_html(tmp_path / "quiz.html").read_text(encoding="utf-8")
    plain.close()
    quiz.close()


def test_which_node_runs_next_is_asked_only_when_there_is_a_choice(lib, pgv):
    """The picker offers the names of the nodes still to run: one name left is no question (lesson 5's
    last "which node runs next?" offered AccumulateGrad (w) alone)."""
    x = lib.tensor([1.0, 0.5, -1.5], dtype=lib.float64, requires_grad=True)
    w = lib.tensor([2.0, -3.0, 1.0], dtype=lib.float64, requires_grad=True)
    player = viz.animate(((x * w) ** 2).sum(), params={"x": x, "w": w}, quiz=True, quiz_kinds=["grad", "next"])
    steps = [f for f in player.frames if f.kind in ("run", "accumulate") and f.node is not None]
    for q in player.quiz.questions:
        if q.kind == "next":
            k = next(i for i, f in enumerate(steps) if f.step == q.step)
            assert len({f.name for f in steps[k:]}) >= 2, q.step
    assert steps[-1].step not in [q.step for q in player.quiz.questions if q.kind == "next"]


def test_a_sum_question_says_which_of_two_same_named_nodes(lib, pgv):
    """Lesson 4: y = x * 3 used three times and y * y: two MulBackward0 on screen; the question names the one
    whose result is used three times."""
    x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
    y = x * 3
    player = viz.animate((y * y + y).sum(), params={"x": x}, quiz=True, quiz_kinds=["sum"])
    (q,) = [q for q in player.quiz.questions if q.kind == "sum"]
    assert "meet at the MulBackward0 whose result is used 3 times (there are 2 MulBackward0 nodes)" in q.prompt
    single = viz.animate((lambda t: (t * t + t).sum())(x.exp()), params={"x": x}, quiz=True, quiz_kinds=["sum"])
    (q,) = [q for q in single.quiz.questions if q.kind == "sum"]
    assert "meet at ExpBackward0. " in q.prompt
