"""Training: a run's settings (:mod:`.config`), the named recipes that fill them
(:mod:`.recipes`) and the trainer (:mod:`.trainer`). The names below are the ones the
CLI, the studies and the app use."""
from dropedge_core.training.checks import check_memory, check_trainable
from dropedge_core.training.config import (
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
from dropedge_core.training.trainer import (
                                           AdjacencyBuilder,
                                           diagnostics,
                                           prepare_features,
                                           train,
)

__all__ = ["AdjacencyBuilder", "ConfigError", "END_REASONS", "MAX_EPOCHS", "MAX_HIDDEN", "MAX_LAYERS",
           "MAX_LR", "MAX_SEED", "MAX_WEIGHT_DECAY", "RunResult", "TrainConfig", "UPLOAD_DATASET",
           "UPLOAD_SPLITS", "check_memory", "check_trainable", "device_name", "diagnostics",
           "prepare_features", "resolve_device", "train"]
