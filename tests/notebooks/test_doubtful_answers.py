"""Two answers that are right but not what the lesson asks are accepted on purpose, with a note in the
check's message (notebooks/INSTRUCTORS.md, "Two answers accepted with a note"): exercise 12's beta gradient
returned element by element (autograd sums it to beta's shape, as PyTorch does) and exercise 6b's w.data
instead of no_grad() (it records nothing either). The answers are defined here, in a file, so that the check
can read evaluate's source as it reads a notebook cell's."""

from __future__ import annotations

import minigrad as torch
from minigrad.autograd import Function

F = torch.nn.functional


class UnsummedSwish(Function):
    @staticmethod
    def forward(ctx, x, beta):
        ctx.save_for_backward(x, beta)
        return x * torch.sigmoid(beta * x)

    @staticmethod
    def backward(ctx, grad_output):
        x, beta = ctx.saved_tensors
        s = torch.sigmoid(beta * x)
        return grad_output * (s + beta * x * s * (1 - s)), grad_output * x * x * s * (1 - s)  # not summed


def evaluate_with_data(w, inputs, labels):
    scores = inputs @ w.data
    loss = F.binary_cross_entropy_with_logits(scores, labels)
    accuracy = ((scores > 0).float() == labels).float().mean()
    return loss, accuracy


def evaluate_with_no_grad(w, inputs, labels):
    with torch.no_grad():
        scores = inputs @ w
        loss = F.binary_cross_entropy_with_logits(scores, labels)
        accuracy = ((scores > 0).float() == labels).float().mean()
    return loss, accuracy


def test_an_unsummed_beta_gradient_passes_with_a_note(course):
    result = course.check_swish(UnsummedSwish, quiet=True)
    assert result.passed
    assert "note: backward returns grad_beta with shape (3,)" in result.message
    assert "write the sum yourself" in result.message


def test_w_data_passes_with_a_note_and_no_grad_without(course):
    noted = course.check_evaluate(evaluate_with_data, quiet=True)
    assert noted.passed and "note: reading w.data records nothing too" in noted.message
    plain = course.check_evaluate(evaluate_with_no_grad, quiet=True)
    assert plain.passed and "note" not in plain.message
