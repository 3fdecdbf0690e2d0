"""Independent references for tests/pyg: the paper's formulas on dense matrices."""
from __future__ import annotations

import torch


def dense_formula(a: torch.Tensor, method: str) -> torch.Tensor:
    """The paper's formulas on a dense A (row = target; weighted: a degree sums a row's weights)."""
    eye = torch.eye(a.size(0), dtype=a.dtype)
    deg, deg_t = a.sum(1), (a + eye).sum(1)
    inv = torch.where(deg > 0, deg.pow(-0.5), torch.zeros_like(deg))
    na = inv[:, None] * a * inv[None, :]
    an = deg_t.pow(-0.5)[:, None] * (a + eye) * deg_t.pow(-0.5)[None, :]
    return {"NA": na, "FOG": eye + na, "AN": an, "ANS": eye + an, "ARW": (a + eye) / deg_t[:, None]}[method]
