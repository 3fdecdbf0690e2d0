"""A tuning study read back: the stored study for reading (never created), and its best
point as a training request (the Live training page's "Train this").

Apart from :mod:`dropedge_explorer.studies.tuning` (which runs studies): reading must not
create a storage, and a tuned point becomes a run's settings here, in the package, where
the CLI and the app can both reach it.
"""
from __future__ import annotations

from dropedge_explorer import databases
from dropedge_explorer._lazy import lazy_import
from dropedge_explorer.studies import tuning
from dropedge_explorer.training import TrainConfig

#: Fields a tuned point may set in a training request (the rest come from the base config).
TUNED_FIELDS: tuple[str, ...] = ("p_min", "p_max", "lr", "dropout", "weight_decay")


def load_study(study_name: str, storage: str | None = None):
    """The study ``study_name`` in ``storage`` for reading, or ``None`` when there is no
    such study.

    Nothing is created: a new or empty SQLite file is not touched, and a storage that is
    not an Optuna one (another program's database, the results store, a server that
    refuses) raises :class:`~dropedge_explorer.studies.tuning.TuningError` (one line).

    Args:
        study_name (str): the study's name in the storage.
        storage (str, optional): an SQLAlchemy URL or a file path (``None``: the default
            tuning storage). (default: :obj:`None`)
    """
    optuna = lazy_import("optuna")
    SQLAlchemyError = lazy_import("sqlalchemy.exc").SQLAlchemyError  # noqa: N806 (a class)
    url = tuning.check_storage(storage, create_folder=False)
    file = databases.sqlite_path(url)
    if file is not None and (not file.exists() or file.stat().st_size == 0):
        return None  # no storage yet: reading must not create one
    try:
        rdb = optuna.storages.RDBStorage(url, engine_kwargs=tuning.engine_options(url))
        return optuna.load_study(study_name=study_name, storage=rdb)
    except KeyError:
        return None
    except SQLAlchemyError as exc:
        raise tuning.TuningError(f"cannot read the Optuna storage {databases.display(url)!r}: "
                                 f"{databases.error_line(exc)}") from None


def train_request(best: dict, base: TrainConfig, study_name: str) -> dict:
    """A tuned point as a training request: ``base``'s fields with the point's
    ``p_min``/``p_max`` (and lr / dropout / weight decay when tuned), plus ``source`` in
    words.

    No ``device`` (the trainer picks its own) and no ``diag_every`` (the study ran without
    diagnostics; the receiver keeps its own). ``p_max`` is raised to ``p_min`` where a
    point had them crossed.

    Args:
        best (dict): :func:`~dropedge_explorer.studies.tuning.best_summary` of the study.
        base (TrainConfig): the study's base config.
        study_name (str): the study's name, written into ``source``.

    Example:
        >>> base = TrainConfig(dataset="karate", p_min=0.3, p_max=0.8)
        >>> r = train_request({"trial": 4, "p_min": 0.5, "p_max": 0.4}, base, "s")
        >>> r["p_min"], r["p_max"], r["source"]
        (0.5, 0.5, "study 's', trial #4")
    """
    request = {k: v for k, v in base.to_dict().items() if k not in ("device", "diag_every")}
    for key in TUNED_FIELDS:
        if best.get(key) is not None:
            request[key] = float(best[key])
    request["p_max"] = max(request["p_max"], request["p_min"])
    request["source"] = f"study {study_name!r}, trial #{best['trial']}"
    return request


__all__ = ["load_study", "train_request"]
