"""Every sparse tensor built in the method tests is checked (``torch.sparse``'s invariant
checks: compressed indices monotone and in range, shapes consistent). Without them an
invalid CSR pattern (a wrong count in a ``crow``) crashes the interpreter in the product
instead of failing the test that built it."""
from __future__ import annotations

import pytest
import torch


@pytest.fixture(autouse=True)
def checked_sparse_tensors():
    with torch.sparse.check_sparse_tensor_invariants():
        yield
