"""The device rule without a GPU: every random draw happens on its generator's device.

A CUDA generator only draws CUDA numbers (DropEdge on CUDA crashed because its keys
were drawn on the CPU with the GPU's generator). These tests catch that class of bug on
a CPU-only machine: a generator that *says* it lives on ``cuda`` and a torch function
mode that records the device every random call asks for (and runs it on the CPU).
"""
from __future__ import annotations

import pytest
import torch
from dropedge_core import metrics, samplers
from dropedge_core.models import feature_dropout
from dropedge_core.samplers import SamplerError
from torch.overrides import TorchFunctionMode

from tests.helpers import random_graph

RANDOM_CALLS = {"rand", "randn", "randint", "randperm", "rand_like", "randn_like", "bernoulli",
                "multinomial", "normal", "exponential_", "uniform_", "random_"}


class ClaimsCuda(torch.Generator):
    """A CPU generator that reports ``cuda:0`` as its device."""

    @property
    def device(self) -> torch.device:
        return torch.device("cuda", 0)


class RecordDraws(TorchFunctionMode):
    """Records ``(call, device asked for)`` of every random call that passes a generator,
    and runs everything on the CPU (so that code asking for ``cuda`` still runs here)."""

    def __init__(self):
        super().__init__()
        self.draws: list[tuple[str, str]] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if func is torch.device:  # building a device is no placement
            return func(*args, **kwargs)
        name = getattr(func, "__name__", str(func))
        asked = kwargs.get("device")
        if "device" in kwargs:
            kwargs["device"] = "cpu"
        args = tuple("cpu" if _is_cuda(a) else a for a in args)  # e.g. tensor.to(device)
        if isinstance(kwargs.get("generator"), ClaimsCuda):
            if name in RANDOM_CALLS:
                self.draws.append((name, str(torch.device(asked)) if asked is not None else "cpu"))
            plain = torch.Generator()
            plain.set_state(kwargs["generator"].get_state())
            kwargs["generator"] = plain
        return func(*args, **kwargs)


def _is_cuda(value) -> bool:
    return (isinstance(value, torch.device) and value.type == "cuda") or (
        isinstance(value, str) and value.startswith("cuda"))


def _record(fn):
    with RecordDraws() as mode:
        fn()
    return mode.draws


def test_uniform_draws_follow_the_generator_device():
    """The draw helpers with no tensor to say where (uniform weights, a count of items):
    the keys must be drawn where the generator is, not on the CPU."""
    counts = torch.tensor([3, 5, 8])
    calls = {
        "successive_sample": lambda: samplers.successive_sample(None, 4, ClaimsCuda(), num_items=10),
        "independent_masks": lambda: samplers.independent_masks(None, counts, ClaimsCuda(), num_items=10),
        "nested_masks": lambda: samplers.nested_masks(None, counts, ClaimsCuda(), num_items=10),
        "nested_masks (LDD)": lambda: samplers.nested_masks(None, counts.flip(0), ClaimsCuda(),
                                                            num_items=10, increasing=False),
    }
    for name, call in calls.items():
        draws = _record(call)
        assert draws, f"{name} drew nothing from the generator"
        assert all(device == "cuda:0" for _, device in draws), (name, draws)


def test_metric_and_dropout_draws_follow_the_generator_device():
    g = random_graph(40, 90, seed=3)
    masks = torch.ones(2, g.num_edges, dtype=torch.bool)
    h = torch.randn(40, 4)
    for call in (lambda: metrics.men_estimate(g, masks, 8, generator=ClaimsCuda()),
                 lambda: metrics.mad(h, max_nodes=10, generator=ClaimsCuda()),
                 lambda: feature_dropout(h, 0.5, True, ClaimsCuda())):
        draws = _record(call)
        assert draws and all(device == "cuda:0" for _, device in draws), draws


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("name", samplers.NAMES)
def test_a_generator_on_another_device_than_the_graph_is_a_clear_error(name, directed):
    g = random_graph(12, 20, seed=1)
    with pytest.raises(SamplerError, match=r"generator is on cuda:0 but .* on cpu"):
        samplers.make(name, directed=directed).sample(g, 3, generator=ClaimsCuda())


def test_weighted_draws_refuse_weights_on_another_device():
    w = torch.rand(10) + 0.1
    with pytest.raises(SamplerError, match="torch.Generator"):
        samplers.successive_sample(w, 3, ClaimsCuda())
    with pytest.raises(SamplerError, match="generator is on cuda:0"):
        samplers.nested_masks(w, torch.tensor([2, 5]), ClaimsCuda())


def test_draw_device_rules():
    w = torch.ones(3)
    assert samplers.draw_device(None) == torch.device("cpu")
    assert samplers.draw_device(None, None, w) == w.device
    assert samplers.draw_device(torch.Generator(), w, None) == torch.device("cpu")
    assert samplers.draw_device(ClaimsCuda()) == torch.device("cuda", 0)


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("name", samplers.NAMES)
def test_every_sampler_runs_with_a_generator_on_the_graph_device(name, directed):
    """The matching case (what the trainer does: graph and generator on one device)."""
    g = random_graph(12, 20, seed=1)
    masks = samplers.make(name, directed=directed).sample(g, 3, generator=torch.Generator().manual_seed(0))
    assert masks.shape == (3, g.num_edges * (2 if directed else 1)) and masks.device == g.x.device
