"""Training: a run's settings, the recipes that fill them, the checks before a run, the
trainer. The names below (``__all__``) are the ones the CLI, the studies and the app use.

Public modules:

* :mod:`.config` — :class:`~.config.TrainConfig` and :class:`~.config.RunResult`;
* :mod:`.recipes` — the named defaults (``depth``, ``paper``, ``authors`` ...);
* :mod:`.forms` — the Live training and Tuning forms' decisions as pure functions;
* :mod:`.checks` — labels that can be learnt, memory that fits, before anything is allocated;
* :mod:`.trainer` — :func:`~.trainer.train`, one trainer for every backbone × sampler;
* :mod:`.seed_batch` — the seeds of one cell trained as one batched model.

Internals (``_``-prefixed, Optuna's convention; no stable names): ``_seeding`` (each
seed's generator streams), ``_selection`` (model selection and early stopping),
``_fingerprint`` (a run's fingerprints), ``_authors`` (the authors' protocol).
"""
from dropedge_explorer.training.checks import check_memory, check_trainable
from dropedge_explorer.training.config import (
                                           END_REASONS,
                                           MAX_EPOCHS,
                                           MAX_HIDDEN,
                                           MAX_LAYERS,
                                           MAX_LR,
                                           MAX_SEED,
                                           MAX_WEIGHT_DECAY,
                                           UPLOAD_DATASET,
                                           UPLOAD_SPLITS,
                                           ConfigError,
                                           RunResult,
                                           TrainConfig,
                                           device_name,
                                           resolve_device,
)
from dropedge_explorer.training.trainer import (
                                           diagnostics,
                                           prepare_features,
                                           train,
)

__all__ = ["ConfigError", "END_REASONS", "MAX_EPOCHS", "MAX_HIDDEN", "MAX_LAYERS",
           "MAX_LR", "MAX_SEED", "MAX_WEIGHT_DECAY", "RunResult", "TrainConfig", "UPLOAD_DATASET",
           "UPLOAD_SPLITS", "check_memory", "check_trainable", "device_name", "diagnostics",
           "prepare_features", "resolve_device", "train"]
