"""The CUDA tier (``pytest -m cuda``): every sampler, both ``directed`` values, every
backbone trains on the GPU with diagnostics; weighted draws on the GPU match the same
brute-force reference as the CPU tests; the Live training page reports the GPU and its
memory.

Skipped, with the reason, where ``torch.cuda.is_available()`` is False (CI has no GPU).
The CPU-side guard for the same class of bug (draws on another device than their
generator) is ``tests/core/test_devices.py``, which runs everywhere.

``DROPEDGE_TEST_DEVICE=cpu pytest -m cuda tests/test_cuda.py`` runs the same test bodies
on the CPU: that is how each test was seen to fail on the breakage it guards without a
GPU (break the code, run them on the CPU, restore).
"""
from __future__ import annotations

import math
import os

import pytest
import torch
from dropedge_core import _nested_draws as nested_draws
from dropedge_core import normalization, samplers
from dropedge_core.models import BACKBONES

from dropedge_explorer.training import TrainConfig, train
from tests.helpers.references import WEIGHTS, nested_marginals, successive_subset_probs

DEVICE = os.environ.get("DROPEDGE_TEST_DEVICE", "cuda").strip() or "cuda"
ON_CUDA = DEVICE.startswith("cuda")

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(ON_CUDA and not torch.cuda.is_available(),
                                 reason="needs a CUDA GPU: torch.cuda.is_available() is False")]


@pytest.fixture(autouse=True)
def accelerator_code_path(monkeypatch):
    """On the CPU (``DROPEDGE_TEST_DEVICE=cpu``), the nested weighted draws take the torch
    path the GPU takes, not the CPU's numpy path: the tests then check the GPU's code."""
    if not ON_CUDA:
        monkeypatch.setattr(nested_draws, "NUMPY_DRAW_DEVICES", set())


def cuda_gen(seed: int) -> torch.Generator:
    return torch.Generator(device=DEVICE).manual_seed(seed)


@pytest.mark.parametrize("backbone", BACKBONES)
@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("sampler", samplers.NAMES)
def test_every_sampler_and_backbone_trains_on_cuda(cora, sampler, directed, backbone):
    config = TrainConfig(dataset="cora", sampler=sampler, directed=directed, backbone=backbone,
                         num_layers=4, epochs=3, patience=0, diag_every=1, device=DEVICE, seed=0)
    result = train(config, graph=cora)
    assert result.device.startswith(DEVICE) and result.reason == "finished", result.message
    assert result.epochs_run == 3 and len(result.diagnostics) == 3
    for event in result.history:
        assert math.isfinite(event["train_loss"]) and math.isfinite(event["val_loss"])
    diag = result.diagnostics[-1]
    # gcn/resgcn report L - 1 hidden outputs, jknet/appnp_star L (their last layer is hidden-width)
    hidden = result.model.num_hidden_outputs
    assert diag["men"] > 0 and len(diag["edge_numbers"]) == 4
    assert len(diag["dirichlet"]) == len(diag["mad"]) == len(diag["subspace_distance"]) == hidden
    assert len(diag["layer_distances"]) == hidden - 1


@pytest.mark.parametrize("name", samplers.NAMES)
def test_masks_on_cuda_keep_the_counts_and_the_seed(cora, name):
    g = cora.to(DEVICE)
    s = samplers.make(name, p_min=0.3, p_max=0.8)
    a, b = s.sample(g, 8, cuda_gen(1)), s.sample(g, 8, cuda_gen(1))
    assert a.device.type == g.x.device.type and torch.equal(a, b)
    assert a.sum(1).cpu().tolist() == s.layer_counts(cora, 8).tolist()


def test_successive_sample_on_cuda_matches_brute_force():
    ref = successive_subset_probs(WEIGHTS.tolist(), 3, tuple(range(5)))
    marg = torch.tensor([sum(p for s, p in ref.items() if i in s) for i in range(5)], dtype=torch.float64)
    w, g = WEIGHTS.to(DEVICE), cuda_gen(4)
    freq = torch.stack([samplers.successive_sample(w, 3, g) for _ in range(4000)]).double().mean(0)
    assert torch.allclose(freq.cpu(), marg, atol=0.03)


def test_nested_weighted_marginals_on_cuda_match_brute_force():
    counts = torch.tensor([1, 2, 4])
    ref = torch.tensor(nested_marginals(WEIGHTS.tolist(), counts.tolist()), dtype=torch.float64)
    w, g, draws = WEIGHTS.to(DEVICE), cuda_gen(5), 6000
    freq = sum(samplers.nested_masks(w, counts, g).double() for _ in range(draws)) / draws
    assert (freq.cpu() - ref).abs().max() < 0.025, (freq, ref)


def test_uniform_shared_sample_on_cuda_is_uniform():
    """DropEdge's draw (no weights: the case that crashed) keeps every item equally often."""
    g, draws = cuda_gen(6), 4000
    freq = torch.stack([samplers.successive_sample(None, 2, g, num_items=5) for _ in range(draws)])
    assert freq.device.type == torch.device(DEVICE).type
    assert (freq.double().mean(0).cpu() - 0.4).abs().max() < 0.03


def test_normalised_values_on_cuda_match_the_cpu(cora):
    masks = samplers.make("dropedge++").sample(cora, 8, torch.Generator().manual_seed(0))
    for method in normalization.METHODS:
        cpu = normalization.layer_values(cora, masks, method)
        gpu = normalization.layer_values(cora.to(DEVICE), masks.to(DEVICE), method)
        torch.testing.assert_close(gpu.cpu(), cpu)


def test_live_training_page_reports_the_gpu():
    """The page says where it trains (the GPU's name), the run's device, and on a GPU the
    device memory in use and at its peak (on the CPU: none)."""
    from tests.helpers.app import _live, _until_idle

    at = _live(layers=3, epochs=5)
    label = f"CUDA · {torch.cuda.get_device_name(0)}" if ON_CUDA else "CPU"
    assert any(f"Training on **{label}" in c.value for c in at.caption)  # device=auto picked it
    at.button(key="lt_start").click().run()
    _until_idle(at, 120)
    run = at.session_state["live_training"].runs[0]
    kind = "cuda" if ON_CUDA else "cpu"
    assert run.status == "finished" and run.device.startswith(kind)
    assert f"device {kind}" in at.success[0].value
    assert at.dataframe[0].value.loc[0, "device"].startswith(kind)
    assert ("GPU memory" in at.success[0].value and " in use, peak " in at.success[0].value) == ON_CUDA
    if ON_CUDA:
        in_use, peak = run.device_memory
        assert 0 < in_use <= peak <= torch.cuda.get_device_properties(0).total_memory
