"""`minigrad.func`: PyTorch's function transforms (`torch.func`), the JAX model of autodiff.

`grad`, `grad_and_value`, `vjp`, `jacrev`, `jvp`, `jacfwd` and `hessian` turn a function of tensors into its
derivative; `vmap` runs a function of one sample on a whole batch, once (batching rules, _rules.py);
`functional_call` runs a module with the parameters and buffers it is given; `stack_module_state` stacks the
states of several copies of a module for `vmap` (model ensembling).
"""

from __future__ import annotations

from . import _rules, _rules_ops  # noqa: F401  (give BatchedTensor its methods and the batching rules)
from ._module import functional_call, stack_module_state
from ._transforms import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, vjp
from ._vmap import vmap

__all__ = ["functional_call", "grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp", "stack_module_state",
           "vjp", "vmap"]
