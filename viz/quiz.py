"""Predict, then reveal: ``viz.animate(loss, quiz=True)`` asks a question before a step is shown.

    player = viz.animate(loss, quiz=True)
    player.quiz.questions[0].prompt     # 'Which node runs next?'
    player.answer(0, "MulBackward0")    # checked, and the reason revealed (also by clicking in the page)
    player.answers                      # every answer with its verdict: what a check cell or grader reads
    player.score                        # (right, answered)

Watching an animation teaches little; predicting what comes next and being told why teaches
more (Naps et al.'s engagement taxonomy: responding beats viewing). The questions come from the
recorded frames, so they are about the real backward pass: which node runs next, the gradient
sent along an edge (a value for small tensors, a shape for large ones), the sum where gradients
from several uses meet, and what a leaf's ``.grad`` becomes.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import probe
from .i18n import tr
from .trace import SMALL, value_text

__all__ = ["Question", "Answer", "Quiz", "KINDS", "make_quiz"]

KINDS = ("next", "grad", "sum", "accumulate")
RTOL, ATOL = 1e-2, 1e-3  # values are shown to 4 significant digits: typed answers are rounded


@dataclass
class Question:
    """One question, asked before step ``step`` is revealed."""

    id: int
    step: int
    kind: str  # one of KINDS
    prompt: str
    expected: Any  # a drawn node id ("next"), an array (values) or a shape tuple (large tensors)
    expected_text: str  # the answer in words
    reason: str  # revealed with the verdict: the rule and the values
    names: tuple[str, ...] = ()  # "next": names that count as the node (its display name)

    def to_payload(self) -> dict:
        """What the page needs to ask, check and reveal without the kernel (exported HTML too)."""
        exp = self.expected
        if isinstance(exp, np.ndarray):
            exp = exp.tolist()
        elif isinstance(exp, tuple):
            exp = {"shape": list(exp)}
        return {"id": self.id, "step": self.step, "kind": self.kind, "prompt": self.prompt, "expected": exp,
                "expected_text": self.expected_text, "reason": self.reason, "names": list(self.names)}


@dataclass
class Answer:
    """A learner's answer and its verdict."""

    question: int
    step: int
    kind: str
    given: Any
    correct: bool
    expected: str
    reason: str

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class Quiz:
    """The questions of one animation and the answers given so far (first answer per question counts)."""

    questions: list[Question]
    answers: list[Answer] = field(default_factory=list)
    options: dict = field(default_factory=dict)  # make_quiz's kinds, every, max_questions (to ask again)

    @property
    def score(self) -> tuple[int, int]:
        """(right, answered), counting each question's first answer."""
        first: dict[int, Answer] = {}
        for a in self.answers:
            first.setdefault(a.question, a)
        return sum(a.correct for a in first.values()), len(first)

    def at_step(self, step: int) -> list[Question]:
        return [q for q in self.questions if q.step == step]

    def question(self, qid: int) -> Question:
        """The question with id ``qid`` (IndexError when there is none)."""
        for q in self.questions:
            if q.id == int(qid):
                return q
        raise IndexError(f"viz.quiz: no question {qid}")

    def answer(self, question: int | Question, given: Any) -> Answer:
        """Check ``given`` against question ``question`` (its id), record and return the verdict."""
        q = question if isinstance(question, Question) else self.question(question)
        answer = Answer(q.id, q.step, q.kind, _plain(given), is_right(q, given), q.expected_text, q.reason)
        self.answers.append(answer)
        return answer

    def to_payload(self) -> list[dict]:
        return [q.to_payload() for q in self.questions]

    def ask_again(self, frames: list[Any]) -> None:
        """The questions of new frames (a folded module opened): a question asked before keeps its id
        (and so its answers and the score); new ones get new ids; answers already given stay."""
        old: dict[tuple, list[int]] = {}
        for q in self.questions:  # in order: the same question asked twice keeps its ids in turn
            old.setdefault((q.kind, q.prompt, q.expected_text), []).append(q.id)
        fresh = make_quiz(frames, **self.options).questions
        next_id = max([q.id for q in self.questions] + [a.question for a in self.answers] + [-1]) + 1
        for q in fresh:
            ids = old.get((q.kind, q.prompt, q.expected_text))
            if ids:
                q.id = ids.pop(0)
            else:
                q.id, next_id = next_id, next_id + 1
        self.questions = fresh


def _plain(value: Any) -> Any:
    """An answer as plain data (for player.answers and JSON)."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if probe.is_tensor(value):
        try:
            return value.tolist()
        except Exception:
            return str(value)
    return value


_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def _numbers(given: Any) -> np.ndarray | None:
    """A typed answer ('[1, 2.5]', '3', a list, an array) as a flat float array."""
    if isinstance(given, str):
        found = _NUMBER.findall(given)
        return np.array([float(x) for x in found]) if found else None
    try:
        return np.asarray(_plain(given), dtype=np.float64).ravel()
    except (TypeError, ValueError):
        return None


def is_right(q: Question, given: Any) -> bool:
    """Whether ``given`` answers ``q``: the node (by drawn id or name), the values within rounding,
    or the shape."""
    if given is None or given is ...:
        return False
    if q.kind == "next":
        text = str(given).strip()
        return text == q.expected or text in q.names
    if isinstance(q.expected, tuple):  # a shape
        numbers = _numbers(given)
        return numbers is not None and tuple(int(n) for n in numbers) == q.expected and \
            bool(np.all(numbers == np.round(numbers)))
    numbers = _numbers(given)
    want = np.asarray(q.expected, dtype=np.float64).ravel()
    return numbers is not None and numbers.shape == want.shape and bool(np.allclose(numbers, want, rtol=RTOL,
                                                                                     atol=ATOL))


def _expected(arr: np.ndarray) -> tuple[Any, str, str]:
    """(expected, text, what to type): values for small tensors, the shape for large ones."""
    if arr.size <= SMALL:
        return np.array(arr, dtype=np.float64), value_text(arr), "its values"
    return tuple(int(d) for d in arr.shape), probe.format_shape(arr.shape), "its shape"


def make_quiz(frames: list[Any], kinds: tuple[str, ...] | list[str] = KINDS, every: int = 1,
              max_questions: int | None = None) -> Quiz:
    """Questions from recorded backward frames: each eligible step asks one question, of the kind in
    ``kinds`` that fits it and was asked least so far; ``every=2`` asks at every other eligible step."""
    unknown = set(kinds) - set(KINDS)
    if unknown:
        raise ValueError(f"viz.animate: unknown quiz kinds {sorted(unknown)}; known: {list(KINDS)}")
    questions: list[Question] = []
    eligible = 0
    steps = [f for f in frames if f.kind in ("run", "accumulate", "module") and f.node is not None]
    name_count: dict[str, int] = {}
    for f in steps:
        name_count[f.name] = name_count.get(f.name, 0) + 1
    for k, f in enumerate(steps):
        # "which node runs next?" offers the names of the nodes still to run: with one name left it
        # would be no question at all
        left = len({later.name for later in steps[k:]})
        # of the kinds that fit this step, the one asked least so far (ties: in the order of kinds),
        # so one animation asks a mix and the rarer moments (a sum, an accumulation) are not missed
        fitting = [q for q in (_question(kind, f, len(questions), left, name_count[f.name]) for kind in kinds)
                   if q is not None]
        if not fitting:
            continue
        asked = {kind: sum(q.kind == kind for q in questions) for kind in kinds}
        q = min(fitting, key=lambda q: asked[q.kind])
        eligible += 1
        if (eligible - 1) % max(1, int(every)):
            continue
        questions.append(q)
        if max_questions is not None and len(questions) >= max_questions:
            break
    for q in questions:  # asked in viz's language (viz.i18n); node names and values stay as they are
        q.prompt, q.reason = tr(q.prompt), tr(q.reason)
    return Quiz(questions, options={"kinds": tuple(kinds), "every": every, "max_questions": max_questions})


def _question(kind: str, f: Any, qid: int, left: int = 2, same_name: int = 1) -> Question | None:
    """The question of ``kind`` at step ``f``, or None when it does not fit; ``left`` is how many names the
    "next" picker offers, ``same_name`` how many nodes of the graph share ``f``'s name."""
    if kind == "next":
        if left < 2:
            return None
        what = "its nodes run now (the module is one step here)" if f.kind == "module" else "runs now"
        return Question(qid, f.step, "next", "Which node runs next? (click it, or pick its name)", f.node, f.name,
                        f"{f.name} {what}: every gradient flowing into it has arrived, and among the nodes "
                        "that are ready the engine runs the one created last.", names=(f.name, _bare(f.name)))
    if kind == "sum":
        for arrival in f.grads_in:
            if len(arrival.parts) >= 2 and arrival.total is not None:
                expected, text, what = _expected(arrival.total)
                parts = " + ".join(value_text(v) for _, v in arrival.parts)
                n = len(arrival.parts)
                which = (f"the {f.name} whose result is used {n} times (there are {same_name} {f.name} nodes)"
                         if same_name > 1 else f.name)
                return Question(qid, f.step, "sum", f"Gradients from {n} uses meet at {which}. "
                                f"What does it run with ({what})?", expected, text,
                                f"A tensor used several times gets the sum of the gradients of its uses: "
                                f"{parts} = {text}.")
        return None
    if kind == "accumulate":
        if f.kind != "accumulate" or f.grad_after is None:
            return None
        expected, text, what = _expected(f.grad_after)
        before = "None" if f.grad_before is None else value_text(f.grad_before)
        how = ("it was None, so .grad becomes the incoming gradient" if f.grad_before is None else
               f".grad adds up: {before} + the incoming gradient = {text}")
        return Question(qid, f.step, "accumulate", f"What does {_bare(f.name)}.grad become ({what})?", expected, text,
                        f"AccumulateGrad: {how}.")
    if kind == "grad":
        for send in f.grads_out:
            if send.grad is None or send.to is None:
                continue
            expected, text, what = _expected(send.grad)
            rule = f" Rule: {f.rule}." if f.rule else ""
            return Question(qid, f.step, "grad", f"{f.name} runs. What gradient does it send to {send.to_name} "
                            f"({what})?", expected, text, f"{f.name} sends {send.text or text}.{rule}")
        return None
    return None


def _bare(name: str) -> str:
    """'AccumulateGrad (w)' -> 'w'; other names unchanged."""
    m = re.match(r"AccumulateGrad \((.*)\)$", name)
    return m.group(1) if m else name


def quiz_player(player: Any, quiz: Quiz) -> Any:
    """Give a player its quiz: ``player.quiz``, ``player.answer(...)``, ``player.answers`` and
    ``player.score``; the questions ride in the payload (so exported pages can ask them too). Answers
    given in the page come back through the widget's synced ``answers`` list (each
    ``{"question": id, "given": ...}``, checked again here) or a message
    (``{"type": "answer", "question": id, "given": ...}``); both are recorded."""
    base = type(player)
    cls = _QUIZ_CLASSES.get(base)
    if cls is None:
        cls = type("Quiz" + base.__name__, (base,), {
            "answer": _answer,
            "answers": property(lambda self: [a.to_dict() for a in self.quiz.answers]),
            "score": property(lambda self: self.quiz.score),
            "_on_msg": _on_msg,
            "_rescene": _rescene,
            "widget": property(_widget),
        })
        _QUIZ_CLASSES[base] = cls
    player.__class__ = cls
    player.quiz = quiz
    player._page_answers = 0  # how many of the page's answers are recorded
    player.scene.payload["quiz"] = quiz.to_payload()
    return player


_QUIZ_CLASSES: dict[type, type] = {}


def _on_msg(self: Any, widget: Any, content: Any, buffers: Any) -> None:
    if isinstance(content, dict) and content.get("type") == "answer":
        try:
            self.quiz.answer(int(content.get("question", -1)), content.get("given"))
        except (IndexError, ValueError, TypeError):
            pass
        return
    super(type(self), self)._on_msg(widget, content, buffers)


def _answer(self: Any, question: int | Question, given: Any) -> Answer:
    """``player.answer(id, value)``: checked and recorded; a shown player shows the verdict too."""
    answer = self.quiz.answer(question, given)
    widget = self._widget
    if widget is not None and hasattr(widget, "answers"):
        shown = answer.given
        try:
            json.dumps(shown)
        except (TypeError, ValueError):
            shown = None if shown is ... else str(shown)
        now = list(widget.answers) + [{"question": answer.question, "given": shown, "correct": answer.correct}]
        self._page_answers = len(now)  # already recorded: not again when the list comes back
        widget.answers = now
    return answer


def _rescene(self: Any, scene: Any) -> Any:
    """A module opened: the quiz is asked again on the new steps and stays in the page's data."""
    self.quiz.ask_again(scene.frames)
    scene.payload["quiz"] = self.quiz.to_payload()
    return scene


_WIDGET: dict[tuple[str, ...], Any] = {}


def widget_class(names: tuple[str, ...] = ("quiz",)) -> type | None:
    """The player's widget class with the quiz's front end (viz/quiz.js, viz/quiz.css, after the other
    modules ``names``) and a synced ``answers`` list (None without anywidget)."""
    if names not in _WIDGET:
        from .player import widget_class as player_widget

        base = player_widget(names)
        if base is None:
            _WIDGET[names] = None
        else:
            import traitlets

            _WIDGET[names] = type("QuizPlayerWidget", (base,), {
                "__module__": __name__, "__doc__": "The player with its quiz: the answers given in the page, synced.",
                "answers": traitlets.List().tag(sync=True)})
    return _WIDGET[names]


def _widget(self: Any) -> Any:
    """The widget (made now if needed): the quiz player's, whose page answers come back here."""
    if self._widget is None:
        from .player import front_ends

        cls = widget_class(front_ends(self.scene.payload))
        if cls is not None:
            self._widget = cls(**self._widget_state())
            self._widget.on_msg(self._on_msg)
            self._widget.observe(lambda change: _from_page(self, change["new"]), names="answers")
    return self._widget


def _from_page(self: Any, answers: Any) -> None:
    """Record the answers the page added to its synced list since last time."""
    answers = list(answers or [])
    for entry in answers[self._page_answers:]:
        try:
            self.quiz.answer(int(entry.get("question", -1)), entry.get("given"))
        except (AttributeError, IndexError, ValueError, TypeError):
            pass
    self._page_answers = max(self._page_answers, len(answers))
