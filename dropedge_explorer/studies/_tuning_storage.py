"""Where a tuning study lives: an Optuna storage, checked before Optuna touches it.

A bare path means a SQLite file (``results/tuning.sqlite`` by default); a PostgreSQL or
MySQL URL lets workers on many machines share one study. :func:`check_storage` admits a
new, empty or Optuna database only (never the results store, another program's tables,
a read-only file or random bytes) and writes nothing when it refuses; :func:`open_study`
creates or joins a study, retrying the races of workers that start together.
"""
from __future__ import annotations

import time
import warnings
from pathlib import Path

import optuna
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from dropedge_explorer import _sqlite_locks as sqlite_locks
from dropedge_explorer import databases, locations, paths
from dropedge_explorer._lazy import lazy_import
from dropedge_explorer.studies._tuning_space import TuningError, make_sampler

#: Tables every Optuna RDB storage has (:data:`dropedge_explorer.databases.OPTUNA_MARKERS`).
OPTUNA_MARKERS = databases.OPTUNA_MARKERS


#: Seconds between a running trial's signs of life in the storage (Optuna's option).
ALIVE_EVERY = 10
#: Seconds of silence after which a running trial's worker counts as dead.
GRACE_PERIOD = 60


def storage_url(storage: str | None) -> str:
    """The storage as a URL, without looking at it (:func:`dropedge_explorer.locations.parse`): a
    file path means SQLite at that path (``~`` expanded); ``postgresql://`` means psycopg 3."""
    try:
        return locations.parse(storage or paths.tuning_storage(), "Optuna storage").sqlalchemy_url
    except locations.LocationError as exc:
        raise TuningError(str(exc)) from None


def optuna_revisions() -> tuple[str, set[str]]:
    """The storage schema revision this Optuna writes, and every revision it knows (the
    alembic scripts Optuna ships: ``optuna storage upgrade`` moves a known one to the head)."""
    config = lazy_import("alembic.config").Config()
    config.set_main_option("script_location", str(Path(optuna.storages.__file__).parent / "_rdb" / "alembic"))
    script = lazy_import("alembic.script").ScriptDirectory.from_config(config)
    return script.get_current_head(), {r.revision for r in script.walk_revisions()}


def optuna_tables() -> tuple[str, ...]:
    """The tables Optuna's storage keeps (made on first use): its models' and alembic's."""
    models = lazy_import("optuna.storages._rdb.models")
    return (*sorted(models.BaseModel.metadata.tables), "alembic_version")


def _refuse(contents: databases.Contents) -> None:
    """One line unless the storage is new, empty, or an Optuna storage of this Optuna's
    schema, and writable (:func:`dropedge_explorer.databases.inspect` looked without writing)."""
    where = f"Optuna storage {contents.where}"
    if contents.kind == "results":
        raise TuningError(f"{where} is the DropEdge results store, not an Optuna storage; give the study "
                          "its own file or database; nothing was written")
    if contents.kind in ("foreign", "damaged"):
        raise TuningError(f"{where} is {contents.describe()}, not an Optuna storage; give a new file or "
                          "an empty database; nothing was written")
    if contents.kind == "optuna":
        _refuse_other_optuna(contents, where)
    lacking = databases.missing_privilege(contents, optuna_tables())
    if lacking:
        raise TuningError(f"{where} is read-only for role {contents.grants.role!r}: it lacks {lacking} "
                          "(Optuna creates its tables on first use and writes trials); nothing was written")
    if not contents.writable:
        if contents.kind == "new":
            raise TuningError(f"cannot create the {where}: its folder is not a writable folder")
        raise TuningError(f"{where} is read-only (trials are written to it); give a writable file; "
                          "nothing was written")


def _refuse_other_optuna(contents: databases.Contents, where: str) -> None:
    """One line unless an Optuna storage is of this Optuna's schema, or being created by it.

    Optuna adds every table it lacks *before* it compares schemas (``create_all``, then
    stamps a revision), so a storage of another Optuna is refused here, unopened: by its
    alembic revision; without one (being created, or a newer Optuna's half-made file), by
    the schema number of its ``version_info`` row; and by the columns of Optuna's tables.
    """
    models = lazy_import("optuna.storages._rdb.models")
    head, known = optuna_revisions()
    revision, number = contents.optuna_revision, contents.optuna_schema
    made = (f"{where} was made by Optuna {contents.optuna_version} (schema "
            f"{revision if revision is not None else number})")
    newer = (f"{made}, newer than this Optuna {optuna.__version__} reads (schema {head}); upgrade Optuna "
             "or give another storage; nothing was written")
    older = (f"{made}, older than this Optuna {optuna.__version__} writes (schema {head}); upgrade it "
             "with `optuna storage upgrade --storage URL`; nothing was written")
    if revision is not None and revision not in known:
        raise TuningError(newer)
    if revision is not None and revision != head:
        raise TuningError(older)
    if revision is None and number is not None and number != models.SCHEMA_VERSION:
        raise TuningError(newer if number > models.SCHEMA_VERSION else older)
    for table, model in sorted(models.BaseModel.metadata.tables.items()):
        lacking = sorted(set(model.columns.keys()) - set(contents.columns.get(table, model.columns.keys())))
        if lacking:
            raise TuningError(f"{where} is not this Optuna's storage: its table {table!r} lacks "
                              f"{', '.join(lacking[:4])}; give a new file or an empty database; nothing "
                              "was written")


def check_storage(storage: str | None, create_folder: bool = True) -> str:
    """Check an Optuna storage before Optuna touches it; return its URL.

    The location is inspected without writing (:func:`dropedge_explorer.databases.inspect`): it
    must be new, empty or an Optuna storage of this Optuna's schema, and writable (not a
    directory, a device, a read-only file, another program's database, a view, random bytes
    or text, the results store, a storage of an older or newer Optuna; a server URL must
    name a known scheme whose driver is installed and a server that answers). Anything else
    is one :class:`TuningError` line, and nothing is written. With ``create_folder``, makes
    the folder of a new SQLite file once the check passed.
    """
    url = storage_url(storage)
    try:
        contents = databases.inspect(url, "Optuna storage")
    except databases.DatabaseError as exc:
        raise TuningError(str(exc)) from None
    _refuse(contents)
    file = contents.location.file
    if file is not None and create_folder:
        file.parent.mkdir(parents=True, exist_ok=True)
    return url


def resolve_storage(storage: str | None) -> str:
    """:func:`check_storage` (kept under its old name)."""
    return check_storage(storage)


def engine_options(url: str) -> dict:
    """SQLAlchemy engine options for Optuna's storage at ``url``: on a SQLite file, every
    connection's statements wait through :func:`dropedge_explorer._sqlite_locks.patient_connect`
    (a lock another process holds is announced within SQLite's first try and waited for at
    most ``DROPEDGE_LOCK_WAIT`` s, never Optuna's silent 60 s)."""
    file = locations.parse(url, "Optuna storage").file
    return {"creator": sqlite_locks.patient_connect(file, "Optuna storage")} if file is not None else {}


def open_study(study_name: str, storage: str | None = None, search: str = "tpe",
               seed: int | None = None, pruner: bool = True) -> optuna.Study:
    """Create the study, or join it when another worker already created it.

    The storage is checked first (:func:`check_storage`). Workers starting at the same
    moment race to create the storage's tables or the study; the loser gets an integrity
    error, "already exists" or "locked", and tries again (the tables then exist). Any
    other database error is one :class:`TuningError` line at once.
    """
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    url = check_storage(storage)
    engine = engine_options(url)
    where = repr(databases.display(url))
    cannot = f"cannot open the Optuna storage {where}"
    sampler = make_sampler(search, seed)
    for attempt in range(6):
        try:
            with warnings.catch_warnings():  # Optuna marks this option experimental
                warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
                # a running trial says it is alive every ALIVE_EVERY s; one silent for
                # GRACE_PERIOD s (its worker was killed) is failed by the next worker that
                # looks, and stops counting toward a budget (trial_budget)
                rdb = optuna.storages.RDBStorage(
                    url, engine_kwargs=engine,
                    heartbeat_interval=ALIVE_EVERY, grace_period=GRACE_PERIOD)
            return optuna.create_study(
                study_name=study_name, storage=rdb, direction="maximize", sampler=sampler,
                pruner=optuna.pruners.MedianPruner(n_startup_trials=3, n_warmup_steps=20) if pruner
                else optuna.pruners.NopPruner(),
                load_if_exists=True)
        except (IntegrityError, optuna.exceptions.DuplicatedStudyError) as exc:
            error = exc  # another worker created it a moment ago
        except SQLAlchemyError as exc:
            # two workers creating Optuna's tables at once: the loser tries again
            if not databases.creation_race(exc):
                raise TuningError(f"{cannot}: {databases.error_line(exc)}") from None
            error = exc
        time.sleep(0.2 * (attempt + 1))
    raise TuningError(f"{cannot}: {databases.error_line(error)}")



