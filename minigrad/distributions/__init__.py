"""`minigrad.distributions`: the probability distributions lecture code samples from and scores (policy
gradients, VAEs, language-model sampling), as `torch.distributions`: `sample`, `rsample`, `log_prob`,
`entropy`, with PyTorch's formulas, so gradients and nodes are PyTorch's."""

from __future__ import annotations

from .._missing import missing_name
from . import bernoulli, categorical, constraints, distribution, normal
from .bernoulli import Bernoulli
from .categorical import Categorical
from .distribution import Distribution
from .normal import Normal

__all__ = ["Bernoulli", "Categorical", "Distribution", "Normal", "bernoulli", "categorical", "constraints",
           "distribution", "normal"]

__getattr__ = missing_name(__name__, "torch.distributions")
