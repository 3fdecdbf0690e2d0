"""Demo links: the app's state as URL query parameters, and back.

A presenter's link such as ``...?dataset=karate&sampler=lid&layers=6&p_min=0.2&p_max=0.9&seed=3``
restores the shared sidebar pickers and the page's main controls. This module is the
pure part: what each parameter may hold (:class:`Param` kinds), :func:`decode` (query →
session values, with a one-line reason for every value it ignores) and :func:`encode`
(session values → query). ``app_shared`` reads and writes ``st.query_params`` with them.

URL names are the widgets' session keys (``men_depths``), except the sidebar's keep-rate
range, which travels as ``p_min`` and ``p_max`` (session key ``p_range``), and the
parameters of :data:`DATASET_KEYED` (``center``: the Edge sampler's centre node, kept per
dataset under ``center_<dataset>``; the MEN explorer's runs and exact switch likewise).
Lists and ranges are comma-separated; booleans ``1``/``0``.

Example:
    >>> values, errors = decode(SIDEBAR, {"sampler": "lid", "layers": "6", "p_min": "0.2",
    ...                                   "p_max": "0.9", "seed": "x"})
    >>> values["p_range"], values["layers"], errors
    ((0.2, 0.9), 6, ['seed=x ignored: not an integer (allowed: 0 .. 2147483647)'])
    >>> encode(SIDEBAR, values)["p_min"]
    '0.2'
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from dropedge_core import datasets, models, normalization, samplers
from dropedge_core.echo import bounded

from dropedge_explorer.studies.depth import DEPTHS
from dropedge_explorer.studies.sampling import MEN_DEPTHS
from dropedge_explorer.studies.tuning import MAX_TRIALS, OPTIONAL_PARAMS

__all__ = [
    "APP_MAX_LAYERS", "MAX_LIST_ITEMS", "RATE_STEP", "UrlError", "Param", "choice", "multi", "integer",
    "number", "span", "snap", "text", "BOOL", "SIDEBAR", "PAGES", "DATASET_KEYED", "session_key",
    "spec_for", "decode", "encode",
]

#: The app's layer limit (the sidebar's slider, the layer picker): the paper's deepest
#: model, the last of the depth study's depths. Deliberately below the package's bound
#: (:data:`dropedge_explorer.training.MAX_LAYERS`, 256: the CLI and the API), because a
#: page redraws its samples and figures on every change.
APP_MAX_LAYERS = max(DEPTHS)
RATE_STEP = 0.05
#: Values a list parameter may name (repeats counted): a link's ``men_depths`` with 3,000
#: repeated depths cost 129-203 s of server time per visit before lists were bounded.
MAX_LIST_ITEMS = 64


class UrlError(ValueError):
    """A query value a parameter cannot hold (the message says what is allowed)."""


@dataclass(frozen=True)
class Param:
    """One parameter: ``kind`` is ``"choice"``, ``"int"``, ``"float"``, ``"bool"``,
    ``"multi"`` (a list of choices), ``"range"`` (two floats ``low <= a <= b <= high``, a
    range slider's value) or ``"text"`` (at most ``high`` characters); ``options`` for the
    choices, ``aliases`` (``(other spelling, option)`` pairs, e.g. ``("appnp*", "appnp_star")``)
    accepted for them, ``low``/``high`` for numbers."""

    kind: str
    options: tuple = ()
    aliases: tuple = ()
    low: float = -math.inf
    high: float = math.inf

    def allowed(self) -> str:
        if self.kind in ("choice", "multi"):
            return ", ".join(str(o) for o in self.options)
        if self.kind == "bool":
            return "1, 0"
        if self.kind == "int":
            return f"{int(self.low)} .. {int(self.high)}"
        if self.kind == "range":
            return f"a,b with {self.low:g} <= a <= b <= {self.high:g}"
        if self.kind == "text":
            return f"text of at most {int(self.high)} characters"
        return f"{self.low:g} .. {self.high:g}"

    def parse(self, text: str):
        """The value of ``text``; :class:`UrlError` if not allowed."""
        text = str(text).strip()
        if self.kind == "choice":
            return self._option(text)
        if self.kind == "multi":  # bounded, then each value once, in the link's order
            items = text.split(",", MAX_LIST_ITEMS)
            if len(items) > MAX_LIST_ITEMS:
                raise UrlError(f"more than {MAX_LIST_ITEMS} values")
            return list(dict.fromkeys(self._option(t) for t in items if t.strip()))
        if self.kind == "text":
            if not text or len(text) > self.high:
                raise UrlError("empty or too long")
            return text
        if self.kind == "bool":
            if text.lower() in ("1", "true", "yes", "on"):
                return True
            if text.lower() in ("0", "false", "no", "off"):
                return False
            raise UrlError("not 1 or 0")
        if self.kind == "range":
            parts = [Param("float", low=self.low, high=self.high).parse(t) for t in text.split(",")]
            if len(parts) != 2 or parts[0] > parts[1]:
                raise UrlError("not two increasing numbers")
            return tuple(parts)
        try:
            value = int(text) if self.kind == "int" else float(text)
        except ValueError:
            raise UrlError(f"not {'an integer' if self.kind == 'int' else 'a number'}") from None
        if not (self.low <= value <= self.high) or (isinstance(value, float) and math.isnan(value)):
            raise UrlError("out of range")
        return value

    def _option(self, text: str):
        for option in self.options:
            if str(option).lower() == text.strip().lower():
                return option
        for alias, option in self.aliases:
            if alias.lower() == text.strip().lower():
                return option
        raise UrlError("not an option")

    def dump(self, value) -> str:
        if self.kind == "multi":
            return ",".join(str(v) for v in value)
        if self.kind == "range":
            return ",".join(f"{float(v):g}" for v in value)
        if self.kind == "bool":
            return "1" if value else "0"
        if self.kind == "float":
            return f"{float(value):g}"
        return str(value)


def choice(options: Sequence, aliases: Mapping[str, str] | None = None) -> Param:
    return Param("choice", tuple(options), tuple((aliases or {}).items()))


def multi(options: Sequence, aliases: Mapping[str, str] | None = None) -> Param:
    return Param("multi", tuple(options), tuple((aliases or {}).items()))


def integer(low: int, high: int) -> Param:
    return Param("int", low=low, high=high)


def number(low: float, high: float) -> Param:
    return Param("float", low=low, high=high)


def span(low: float, high: float) -> Param:
    return Param("range", low=low, high=high)


def text(max_len: int) -> Param:
    return Param("text", high=max_len)


BOOL = Param("bool")
_SPLITS = tuple(dict.fromkeys(s for src in datasets.SOURCES.values() for s in src.splits))
#: The shared sidebar pickers (the upload is not linkable: its files stay in the browser).
SIDEBAR: dict[str, Param] = {
    "dataset": choice(datasets.NAMES), "split": choice(_SPLITS), "sampler": choice(samplers.NAMES),
    "p_min": number(0.0, 1.0), "p_max": number(0.0, 1.0), "layers": integer(1, APP_MAX_LAYERS),
    "seed": integer(0, 2**31 - 1),
}
_BACKBONES = models.BACKBONES  # "appnp*" (the paper's spelling) is read as "appnp_star"
#: Each page's main controls, by the page's URL path ("" = Home).
PAGES: dict[str, dict[str, Param]] = {
    "": {},
    "edge_sampler": {"kernel": choice(samplers.KERNELS), "hops": integer(1, 3),
                     "max_nodes": choice((50, 100, 150, 200, 300)), "center": integer(0, 10**7),
                     "edge_layer": integer(0, APP_MAX_LAYERS - 1), "animate": BOOL,
                     "compare": choice(("none", *samplers.NAMES)),
                     "reach_node": integer(0, 10**7), "draw": integer(0, 10**6)},
    "men_explorer": {"men_paper_setting": BOOL, "men_depths": multi(MEN_DEPTHS),
                     "men_samplers": multi(samplers.NAMES), "men_runs": integer(1, 10),
                     "men_exact": BOOL, "men_curve_depth": choice(MEN_DEPTHS)},
    "live_training": {"lt_backbone": choice(_BACKBONES, models.ALIASES),
                      "lt_mode": choice(("depth recipe", "quick", "paper preset", "custom")),
                      "lt_epochs": integer(1, 5000), "lt_patience": integer(0, 5000),
                      # the custom hyperparameters (bounds: app_shared.training_view.BOUNDS)
                      "lt_hidden": integer(1, 1024), "lt_dropout": number(0.0, 0.95),
                      "lt_lr": number(0.0, 1.0), "lt_wd": number(0.0, 1.0),
                      "lt_norm": choice(normalization.METHODS), "lt_alpha": number(0.0, 1.0),
                      "lt_loop": BOOL, "lt_bn": BOOL, "lt_diag_every": integer(0, 1000),
                      "lt_kernel": choice(samplers.KERNELS), "lt_directed": BOOL},
    "depth_study": {"ds_backbones": multi(_BACKBONES, models.ALIASES), "ds_depths": multi(DEPTHS),
                    "ds_samplers": multi(samplers.NAMES), "ds_seeds": integer(1, 20),
                    "ds_epochs": integer(0, 5000),
                    "ds_mode": choice(("depth recipe", "quick", "quick + batch norm", "paper preset")),
                    "ds_kernel": choice(samplers.KERNELS), "ds_directed": BOOL},
    "tuning": {"tune_backbone": choice(_BACKBONES, models.ALIASES), "tune_search": choice(("tpe", "random")),
               "tune_trials": integer(1, MAX_TRIALS), "tune_epochs": integer(5, 1000),
               "tune_hidden": integer(4, 512), "tune_extra": multi(OPTIONAL_PARAMS),
               "tune_kernel": choice(samplers.KERNELS), "tune_directed": BOOL, "tune_study": text(200)},
    "class_merge": {"cm_source": choice(("bundled", "deep32", "merging", "merging-seed0", "old-defaults",
                                         "propagation", "session")),
                    "cm_layer": integer(0, 255), "cm_epochs": integer(50, 400), "cm_steps": integer(2, 64)},
    "theory": {"th_samplers": multi(samplers.NAMES)},
    "lesson": {"lesson_step": choice(("propagation", "depth", "dropping", "lid_ldd", "fd", "result",
                                      "verdicts")),
               "lesson_dataset": choice(("csbm", "karate")), "lesson_keep": number(0.05, 1.0),
               "lesson_kernel": choice(samplers.KERNELS), "lesson_recipe": choice(("deep", "old-defaults")),
               "lesson_rates": span(0.0, 1.0), "lesson_layers_depth": integer(2, 64),
               **{f"lesson_layers_{k}": integer(2, 32)
                  for k in ("propagation", "dropping", "lid_ldd", "fd")}},
    "paper_tables": {"pt_epochs": integer(5, 50), "pt_split": choice(("semi", "full"))},
}


#: URL parameters whose session key is ``<name>_<dataset>`` (a value per dataset).
DATASET_KEYED: tuple[str, ...] = ("center", "men_runs", "men_exact")


def session_key(name: str, dataset: str) -> str:
    """The session key of URL parameter ``name`` under ``dataset``."""
    return f"{name}_{dataset}" if name in DATASET_KEYED else name


def spec_for(page: str) -> dict[str, Param]:
    """The sidebar's parameters and ``page``'s (unknown page: the sidebar's only)."""
    return {**SIDEBAR, **PAGES.get(page, {})}


def snap(rate: float) -> float:
    """``rate`` on the sidebar slider's :data:`RATE_STEP` grid."""
    return round(round(rate / RATE_STEP) * RATE_STEP, 2)


def decode(spec: Mapping[str, Param], query: Mapping[str, str]) -> tuple[dict, list[str]]:
    """Session values from a query, and one line per ignored value.

    Parameters not in ``spec`` are left alone (no error: a link may carry other pages'
    controls). ``p_min``/``p_max`` become ``p_range`` (either missing: the other with
    the current or default rate is not guessed — both are needed), snapped to the
    slider's 0.05 steps; ``p_min > p_max`` is an error.
    """
    values, errors = {}, []
    for name, param in spec.items():
        if name not in query:
            continue
        try:
            values[name] = param.parse(query[name])
        except UrlError as exc:
            errors.append(f"{name}={bounded(query[name], quote=False)} ignored: {exc} "
                          f"(allowed: {param.allowed()})")
    lo, hi = values.pop("p_min", None), values.pop("p_max", None)
    if lo is not None and hi is not None:
        if lo > hi:
            errors.append(f"p_min={lo:g} > p_max={hi:g} ignored: p_min must be <= p_max")
        else:
            values["p_range"] = (snap(lo), snap(hi))
    elif lo is not None or hi is not None:
        errors.append("p_min and p_max come together: give both")
    return values, errors


def encode(spec: Mapping[str, Param], values: Mapping) -> dict[str, str]:
    """The query of ``values`` (session keys; ``p_range`` as ``p_min``/``p_max``), in the
    order of ``spec``; values ``spec`` would not accept back are left out."""
    flat = dict(values)
    if "p_range" in flat:
        flat["p_min"], flat["p_max"] = flat.pop("p_range")
    out = {}
    for name, param in spec.items():
        if name not in flat or flat[name] is None:
            continue
        text = param.dump(flat[name])
        try:
            param.parse(text)
        except UrlError:
            continue
        out[name] = text
    return out
