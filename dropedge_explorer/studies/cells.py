"""Test accuracy per cell of a depth study — mean ± std over the seeds, computed here
once for the app and the command line — beside the paper's accuracy-by-depth table.

A *cell* is one ``(dataset, split, backbone, sampler, layers)``
(:data:`~dropedge_explorer.studies.run_tables.GROUP_COLUMNS`); its runs differ only in their seed.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
from dropedge_core.models import check_backbone

from dropedge_explorer import paths
from dropedge_explorer.studies.run_tables import GROUP_COLUMNS, display_order


def cell_summary(runs: pd.DataFrame, by: Sequence[str] = GROUP_COLUMNS, value: str = "test_acc",
                 one_run_std: float = float("nan")) -> pd.DataFrame:
    """Mean ± std of ``value`` per cell: THE summary of a study's runs (the Depth study's
    table and the command line's sweep summary both use it).

    Args:
        runs (pandas.DataFrame): one row per run; NaN values (a run without a test
            accuracy, a requested run not made) are left out of the cell's numbers.
        by (Sequence[str], optional): the columns that make a cell.
            (default: :obj:`GROUP_COLUMNS`, the depth study's)
        value (str, optional): the column summarised. (default: :obj:`"test_acc"`)
        one_run_std (float, optional): the std of a cell with one value (a sample std needs
            two; the command line prints 0.0). (default: :obj:`float("nan")`)

    Returns:
        One row per cell, sorted by ``by``: the ``by`` columns, ``{value}_mean``,
        ``{value}_std`` (sample std, ddof 1), ``n`` (values counted). A cell whose
        values are all NaN has mean NaN and ``n`` 0.

    Example:
        >>> df = pd.DataFrame({"sampler": ["nodrop", "nodrop", "dropedge"],
        ...                    "test_acc": [0.8, 0.82, 0.7]})
        >>> cell_summary(df, by=["sampler"], one_run_std=0.0).round(3).to_dict("records")
        [{'sampler': 'dropedge', 'test_acc_mean': 0.7, 'test_acc_std': 0.0, 'n': 1}, \
{'sampler': 'nodrop', 'test_acc_mean': 0.81, 'test_acc_std': 0.014, 'n': 2}]
    """
    by = list(by)
    mean, std = f"{value}_mean", f"{value}_std"
    if runs.empty:
        return pd.DataFrame({c: [] for c in [*by, mean, std, "n"]}).astype({mean: float, std: float,
                                                                           "n": "int64"})
    values = pd.to_numeric(runs[value], errors="coerce").astype(float)
    grouped = runs.assign(**{value: values}).groupby(by, sort=True)[value]
    out = grouped.agg(**{mean: "mean", std: "std", "n": "count"}).reset_index()
    out["n"] = out["n"].astype("int64")
    out.loc[out["n"] == 1, std] = one_run_std
    return out


def mean_std(values: Sequence[float | None], one_run_std: float = 0.0) -> tuple[float | None, float | None]:
    """Mean and sample std of ``values`` (``None``/NaN left out): one cell of
    :func:`cell_summary`, for callers holding a plain list; ``(None, None)`` when no value
    is left, ``one_run_std`` as the std of one value.

    Args:
        values (Sequence[float | None]): the values of one cell.
        one_run_std (float, optional): the std returned for a single value.
            (default: :obj:`0.0`)

    Example:
        >>> [round(v, 4) for v in mean_std([0.8, None, 0.82])]
        [0.81, 0.0141]
    """
    cell = cell_summary(pd.DataFrame({"cell": 0, "value": list(values)}, dtype=object), by=["cell"],
                        value="value", one_run_std=one_run_std)
    if cell.empty or int(cell["n"].iloc[0]) == 0:
        return None, None
    return float(cell["value_mean"].iloc[0]), float(cell["value_std"].iloc[0])


def paper_rows(paper: pd.DataFrame, dataset: str, split: str, backbones: Sequence[str] | None = None,
               samplers: Sequence[str] | None = None, layers: Sequence[int] | None = None) -> pd.DataFrame:
    """The rows of :func:`dropedge_explorer.data.reference.paper_accuracy_by_depth` for one dataset
    and split (the paper's ``setting``), optionally only some backbones, samplers and
    depths; with a ``backbone_key`` column in our spelling (``"APPNP*"`` → ``"appnp_star"``).

    Args:
        paper (pandas.DataFrame): :func:`dropedge_explorer.data.reference.paper_accuracy_by_depth`.
        dataset (str): the dataset.
        split (str): the split (the paper's ``setting``).
        backbones (Sequence[str], optional): the backbones kept, in our spelling (all when
            ``None``). (default: :obj:`None`)
        samplers (Sequence[str], optional): the samplers kept (all when ``None``).
            (default: :obj:`None`)
        layers (Sequence[int], optional): the depths kept (all when ``None``).
            (default: :obj:`None`)
    """
    rows = paper[(paper["dataset_key"] == dataset) & (paper["setting"] == split)]
    rows = rows.assign(backbone_key=rows["backbone"].map(check_backbone))
    if backbones is not None:
        rows = rows[rows["backbone_key"].isin({check_backbone(b) for b in backbones})]
    if samplers is not None:
        rows = rows[rows["sampler"].isin(set(samplers))]
    if layers is not None:
        rows = rows[rows["layers"].isin({int(v) for v in layers})]
    return rows.reset_index(drop=True)




def depth_table(runs: pd.DataFrame, paper: pd.DataFrame | None = None) -> pd.DataFrame:
    """Test accuracy per cell ``(dataset, split, backbone, sampler, layers)``: mean, std
    and number of runs, over the seeds.

    Args:
        runs (pandas.DataFrame): one row per run in the run CSV format; an optional
            ``source`` column (:func:`~.depth.requested_runs`) where ``"missing"`` rows are
            requested runs not made yet.
        paper (pandas.DataFrame, optional): :func:`dropedge_explorer.data.reference.paper_accuracy_by_depth`
            (percent); its number for each cell is added as ``paper_test_acc`` (a fraction,
            NaN where the paper has none). (default: :obj:`None`)

    Returns:
        One row per cell, sorted: the group columns, ``test_acc_mean``, ``test_acc_std``
        (sample std, NaN below 2 runs), ``best_val_acc_mean``, ``n`` (runs with a test
        accuracy), ``missing`` (requested runs not made), ``n_store``/``n_bundled`` (where
        the ``n`` runs came from; with ``source`` only), ``status`` — ``"measured"``
        (nothing missing), ``"partial"`` or ``"missing"`` (no run) — and, with ``paper``,
        ``paper_test_acc`` and ``diff_vs_paper`` (mean − paper, a fraction).

    Example:
        >>> df = pd.DataFrame({"dataset": "cora", "split": "semi", "backbone": "gcn",
        ...     "sampler": "nodrop", "layers": 2, "seed": [0, 1], "test_acc": [0.8, 0.82],
        ...     "best_val_acc": 0.79, "epochs_run": 200, "key": ["a", "b"]})
        >>> row = depth_table(df).iloc[0]
        >>> round(float(row.test_acc_mean), 3), int(row.n), row.status
        (0.81, 2, 'measured')
    """
    df = runs.copy()
    if "source" not in df:
        df["source"] = "store"
    done = df["source"] != "missing"
    df["_measured"] = done & df["test_acc"].notna()
    df["_missing"] = ~done
    df["_store"] = df["_measured"] & (df["source"] == "store")
    df["_bundled"] = df["_measured"] & (df["source"] == "bundled")
    df["test_acc"] = df["test_acc"].where(done).astype(float)
    df["best_val_acc"] = df["best_val_acc"].where(done).astype(float)
    keys = list(GROUP_COLUMNS)
    columns = [*keys, "test_acc_mean", "test_acc_std", "best_val_acc_mean", "n", "missing",
               "n_store", "n_bundled", "status"]
    if df.empty:
        table = pd.DataFrame({c: [] for c in columns})
    else:
        counts = df.groupby(keys, sort=True).agg(
            best_val_acc_mean=("best_val_acc", "mean"), missing=("_missing", "sum"),
            n_store=("_store", "sum"), n_bundled=("_bundled", "sum")).reset_index()
        summary = cell_summary(df.assign(test_acc=df["test_acc"].where(df["_measured"])), keys)
        table = summary.merge(counts, on=keys, how="left")
        table["status"] = "partial"
        table.loc[table["missing"] == 0, "status"] = "measured"
        table.loc[table["n"] == 0, "status"] = "missing"
    for c in ("n", "missing", "n_store", "n_bundled", "layers"):
        table[c] = table[c].astype("int64")
    for c in ("test_acc_mean", "test_acc_std", "best_val_acc_mean"):
        table[c] = table[c].astype(float)
    table = table[columns] if paper is None else _beside_paper(table[columns], paper)
    return table.sort_values(keys, key=display_order, kind="stable").reset_index(drop=True)


def _beside_paper(table: pd.DataFrame, paper: pd.DataFrame) -> pd.DataFrame:
    """``table`` with the paper's number of each cell (``paper_test_acc``, a fraction) and
    ``diff_vs_paper`` (mean − paper)."""
    keys = list(GROUP_COLUMNS)
    ref = pd.DataFrame({"dataset": paper["dataset_key"], "split": paper["setting"],
                        "backbone": paper["backbone"].map(check_backbone),
                        "sampler": paper["sampler"], "layers": paper["layers"].astype("int64"),
                        "paper_test_acc": paper["test_accuracy"].astype(float) / 100.0})
    table = table.merge(ref.drop_duplicates(keys), on=keys, how="left")
    table["diff_vs_paper"] = table["test_acc_mean"] - table["paper_test_acc"]
    return table


#: Measured and paper differ "by more than a few points" (a fraction: 5 points).
PAPER_GAP = 0.05
#: Where the gaps between measured and paper numbers are explained.
REPRODUCTION_DOC = paths.reproduction_doc()


def paper_gaps(table: pd.DataFrame, threshold: float = PAPER_GAP) -> pd.DataFrame:
    """The cells of :func:`depth_table` (with ``paper``) whose measured mean differs from
    the paper's number by more than ``threshold`` (a fraction), largest gap first.

    Args:
        table (pandas.DataFrame): a :func:`depth_table` made with ``paper``.
        threshold (float, optional): the smallest gap listed, a fraction.
            (default: :obj:`PAPER_GAP`, 5 points)

    Example:
        >>> t = pd.DataFrame({"layers": [2, 4, 8], "diff_vs_paper": [-0.01, 0.06, -0.09]})
        >>> paper_gaps(t)["layers"].tolist()
        [8, 4]
    """
    if "diff_vs_paper" not in table or table.empty:
        return table.iloc[0:0]
    gaps = table[table["diff_vs_paper"].abs() > threshold]
    return gaps.reindex(gaps["diff_vs_paper"].abs().sort_values(ascending=False).index)


def reproduction_notes(path: str | Path | None = None,
                       sections: Sequence[str] = ("1.", "3.", "4.")) -> str:
    """The sections of ``docs/REPRODUCTION.md`` that explain measured-vs-paper gaps (the
    ``## 2.``, ``## 3.`` ... headings), as Markdown; a one-line note when it is missing.

    Args:
        path (str or Path, optional): the Markdown file (``None`` for the checkout's
            ``docs/REPRODUCTION.md``). (default: :obj:`None`)
        sections (Sequence[str], optional): the numbers of the ``## N.`` sections kept.
            (default: :obj:`("1.", "3.", "4.")`)
    """
    path = Path(path) if path is not None else REPRODUCTION_DOC
    if path is None:
        return "(docs/REPRODUCTION.md is in the repository, not in an installed package.)"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return f"({path} is missing.)"
    # the generator's block markers are HTML comments: a page's Markdown would print them
    text = re.sub(r"^<!-- /?repro_tables: [^>]*-->\n", "", text, flags=re.M)
    parts = text.split("\n## ")
    chosen = ["## " + p.strip() for p in parts[1:] if p.lstrip().startswith(tuple(sections))]
    return "\n\n".join(chosen) or text



__all__ = ["PAPER_GAP", "cell_summary", "depth_table", "mean_std", "paper_gaps",
           "paper_rows", "reproduction_notes"]
