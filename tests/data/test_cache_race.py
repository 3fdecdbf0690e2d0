"""Several processes staging one dataset into a fresh cache at once (issue 38, item 7).

Each process copies the raw files of ``DROPEDGE_DATA`` into ``DROPEDGE_CACHE`` under a
temporary name, then renames it onto the file's name. With one fixed temporary name
(``.ind.cora.x.part``) every process wrote the same file and the first rename took it
from the others (``FileNotFoundError`` in their rename). The race is made certain, not
hoped for: each worker's first copy waits at a barrier until every worker has copied, so
all of them hold a temporary copy before anyone renames.
"""
from __future__ import annotations

import multiprocessing
import os
import shutil
import traceback
from pathlib import Path

from dropedge_core import files

WORKERS = 4


def _stage(barrier, cache: str, data: str, results) -> None:
    """One worker: load cora from ``data`` through the fresh ``cache``; put ``None`` or the error."""
    os.environ.update(DROPEDGE_CACHE=cache, DROPEDGE_DATA=data)
    copy, first = shutil.copyfile, [True]

    def copy_then_wait(src, dst, *args, **kwargs):
        out = copy(src, dst, *args, **kwargs)
        if first[0]:  # every worker holds its copy of the first file before any renames it
            first[0] = False
            barrier.wait(timeout=300)
        return out

    shutil.copyfile = copy_then_wait
    try:
        from dropedge_core import datasets

        datasets.load("cora", "semi")
        results.put(None)
    except BaseException:  # noqa: BLE001 - any failure is the test's finding
        results.put(traceback.format_exc(limit=3))


def test_workers_staging_one_fresh_cache_at_once_all_succeed(tmp_path):
    data = os.environ.get("DROPEDGE_DATA", "/work/shared/data")
    assert (Path(data) / "Cora" / "raw" / "ind.cora.x").is_file(), "needs Cora's raw files in DROPEDGE_DATA"
    context = multiprocessing.get_context("spawn")
    barrier, results = context.Barrier(WORKERS), context.Queue()
    cache = tmp_path / "cache"
    workers = [context.Process(target=_stage, args=(barrier, str(cache), data, results))
               for _ in range(WORKERS)]
    for worker in workers:
        worker.start()
    errors = [results.get(timeout=600) for _ in workers]
    for worker in workers:
        worker.join(timeout=60)
    assert errors == [None] * WORKERS, next(e for e in errors if e)
    staged, source = cache / "Cora" / "raw", Path(data) / "Cora" / "raw"
    assert sorted(p.name for p in staged.iterdir()) == sorted(p.name for p in source.iterdir())
    assert not list(cache.rglob("*.part"))  # no temporary file left behind


def test_a_part_name_is_unique_per_call_and_removed_on_failure(tmp_path):
    target = tmp_path / "ind.cora.x"
    assert files.part_path(target) != files.part_path(target)
    try:
        with files.replaced(target) as part:
            part.write_text("half")
            raise OSError("disk full")
    except OSError:
        pass
    assert list(tmp_path.iterdir()) == []
    with files.replaced(target) as part:
        part.write_text("whole")
    assert target.read_text() == "whole" and list(tmp_path.iterdir()) == [target]
