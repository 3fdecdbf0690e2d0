"""Files that are not CSV text although they may decode as text (issue 29, class 7): a Python
pickle of any protocol given as an edge list, features or labels is refused in one line and
never unpickled; numbers written with non-ASCII digits (full-width ``０,１``, Arabic-Indic
``٠,١``) are refused on line 1 as on any other line, never taken for a header."""
from __future__ import annotations

import io
import os
import pickle
import pickletools

import numpy as np
import pytest
import torch

from dropedge_core.data import csv_guards
from dropedge_core.data.csv_graph import UploadError, parse_graph

EDGES = b"0,1\n1,2\n2,0\n"
OBJECTS = {"list": ["cat", "dog", "cat"], "dict": {"0": "cat", "1": "dog", "2": "cat"}}


def _refused(**files) -> str:
    with pytest.raises(UploadError) as info:
        parse_graph(**files)
    message = str(info.value)
    assert "\n" not in message and "Traceback" not in message
    return message


@pytest.fixture
def never_unpickle(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("an upload must never be unpickled")

    for module, attr in [(pickle, "loads"), (pickle, "load"), (pickle, "Unpickler"), (torch, "load"),
                         (np, "load")]:
        monkeypatch.setattr(module, attr, refuse)


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
@pytest.mark.parametrize("kind", OBJECTS)
@pytest.mark.parametrize("role", ["labels", "features", "edges"])
def test_a_pickle_of_any_protocol_is_refused_in_one_line(never_unpickle, protocol, kind, role):
    payload = pickle.dumps(OBJECTS[kind], protocol=protocol)
    files = {"edges": EDGES, role: payload}
    message = _refused(**files)
    assert message == (f"{role}.csv looks like a Python pickle (protocol {protocol}), not CSV text; "
                       f"{role} must be a CSV/text file (a pickle is never unpickled here)")
    if protocol == 0:  # ASCII: the same text given as a str is refused the same way
        assert _refused(**{**files, role: payload.decode("ascii")}) == message


def test_the_check_runs_nothing(tmp_path):
    marker = tmp_path / "unpickled"

    class Payload:  # unpickling it would create the directory ``marker``
        def __reduce__(self):
            return os.mkdir, (str(marker),)

    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        payload = pickle.dumps(Payload(), protocol=protocol)
        assert csv_guards.pickle_protocol(payload) == protocol
        assert "looks like a Python pickle" in _refused(edges=EDGES, labels=io.BytesIO(payload))
        assert not marker.exists()
    pickle.loads(payload)
    assert marker.is_dir()  # the payload is live: loading it does run os.mkdir


@pytest.mark.parametrize("text", [  # one label per node of three, most after a header line
    "label\ncat\ndog\ncat\n",
    "0\n1\n0\n",
    "(lp0\ndog\ncat\ndog\n",  # a header like a pickle's first line
    "label\ncat\ndog\n.\n",  # a class named ".", last, as a pickle's STOP
    "(\nl\n.\nl\n",  # opcodes, but not a whole pickle (MARK, LIST, then a newline)
    "N\ncat\n.\ncat\n",
    "0,cat\n1,dog\n2,.\n",
])
def test_label_files_that_only_look_like_pickles_still_load(text):
    assert csv_guards.pickle_protocol(text.encode()) is None
    graph, _ = parse_graph(EDGES, labels=text.encode())
    assert graph.num_nodes == 3


@pytest.mark.parametrize("text", ["1.\n2.\n3.\n", "0.5,1.\n2.,3.\n1,1.\n"])
def test_feature_files_ending_in_a_dot_still_load(text):
    graph, _ = parse_graph(EDGES, features=text.encode())
    assert graph.x.shape[0] == 3


def test_a_whole_pickle_must_end_the_file():
    """What follows the pickle's STOP decides: a pickle with CSV rows after it is not one file
    of pickle; a pickle with blank lines after it is."""
    body = pickle.dumps(["a", "b"], protocol=0)
    assert csv_guards.pickle_protocol(body + b"\n\n") == 0
    assert csv_guards.pickle_protocol(body + b"\n0,1\n") is None
    assert csv_guards.pickle_protocol(body[:-1]) is None  # no STOP: not a whole pickle
    # whole opcode streams that no pickler writes: the disassembler's stack check refuses them
    assert csv_guards.pickle_protocol(b"1.\n") is None  # POP_MARK with no MARK (a one-cell feature file)
    assert csv_guards.pickle_protocol(b"0.\n") is None  # POP of an empty stack
    assert csv_guards.pickle_protocol(b"NN.") is None  # two objects left at STOP
    assert [op.name for op, _, _ in pickletools.genops(b"NN.")] == ["NONE", "NONE", "STOP"]


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_pickles_longer_than_the_whole_check_and_deeply_nested_ones_are_found(never_unpickle, protocol):
    """Past :data:`WHOLE_CHECK` bytes a file is judged by its first opcodes and its STOP;
    nesting keeps a few objects per level outside any mark, under :data:`MAX_UNMARKED`."""
    long = pickle.dumps([f"class_{i}" for i in range(60_000)], protocol=protocol)
    assert len(long) > csv_guards.WHOLE_CHECK
    nested: object = {}
    for i in range(400):
        nested = {"k": nested, "v": [i, "x"]}
    for payload in (long, pickle.dumps(nested, protocol=protocol)):
        assert csv_guards.pickle_protocol(payload) == protocol
        assert "looks like a Python pickle" in _refused(edges=EDGES, labels=payload)


def test_class_names_that_read_as_opcodes_are_not_a_pickle():
    """``cat``/``dog`` lines read as GLOBAL opcodes (module ``at``, name ``dog``), and a
    last line ``.`` as STOP: the objects pile up outside any mark, which no pickler does."""
    for rows in (3, 40_000):  # checked whole, and past WHOLE_CHECK
        text = b"cat\ndog\n" * rows + b".\n"
        assert csv_guards.pickle_protocol(text) is None
    edges = b"".join(b"%d,%d\n" % (i, i + 1) for i in range(6))
    graph, _ = parse_graph(edges, labels=b"cat\ndog\n" * 3 + b".\n")
    assert graph.info["class_names"] == [".", "cat", "dog"]
