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
import pandas as pd
import pytest
import torch

from dropedge_explorer.data import _csv_guards as csv_guards
from dropedge_explorer.data.csv_graph import UploadError, parse_graph

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


# ----------------------------------------------------------------------------- non-ASCII digits

FULL_WIDTH = "\uff10,\uff11"  # ０,１
ARABIC = "\u0660,\u0661"  # ٠,١
ASCII_ONLY = "is written with non-ASCII digits; only ASCII digits 0-9 are allowed in numbers"


@pytest.mark.parametrize("row", [FULL_WIDTH, ARABIC])
@pytest.mark.parametrize("line", [1, 2])
def test_non_ascii_digits_are_refused_on_line_1_as_on_line_2(row, line):
    """Line 1 was read as a header (no cell is a number to pandas), so only line 2 was
    refused; both are one line naming the line and the value now."""
    zero = row.split(",")[0]
    edges = "\n".join(["0,1", "1,2"][:line - 1] + [row, "1,2"]) + "\n"
    assert _refused(edges=edges.encode()) == f"edges.csv line {line}: {zero!r} {ASCII_ONLY}"
    features = "\n".join(["0.5,1", "1,2"][:line - 1] + [row, "1,2", "3,4"][:3 - line + 1]) + "\n"
    assert _refused(edges=EDGES, features=features.encode()) == (f"features.csv line {line}, column 1: "
                                                                 f"{zero!r} {ASCII_ONLY}")
    labels = "\n".join(["0", "1"][:line - 1] + [zero, "1", "0"][:3 - line + 1]) + "\n"
    assert _refused(edges=EDGES, labels=labels.encode()) == (f"labels.csv line {line}: label {zero!r} "
                                                             f"{ASCII_ONLY}")
    pairs = "\n".join(["0,1", "1,0"][:line - 1] + [row, "2,1"][:3 - line]) + "\n"
    assert _refused(edges=EDGES, labels=pairs.encode()) == f"labels.csv line {line}: {zero!r} {ASCII_ONLY}"


def test_a_long_non_ascii_number_is_shown_cut_with_its_length():
    message = _refused(edges=("\uff11" * 500 + ",1\n0,1\n").encode())
    assert message.startswith("edges.csv line 1: '" + "\uff11" * 80 + "'... (500 characters) is written")


@pytest.mark.parametrize("header", ["source,target", "\u0438\u0441\u0442\u043e\u0447\u043d\u0438\u043a,"
                                    "\u0446\u0435\u043b\u044c", "x\uff11,y\uff12", "\u00b2nd,\u2460st"])
def test_header_words_with_non_ascii_letters_stay_headers(header):
    """Cyrillic words and words with a full-width, superscript or circled digit in them
    (``x１``, ``²nd``, ``①st``) are header words, as before."""
    graph, notes = parse_graph((header + "\n0,1\n1,2\n").encode())
    assert graph.num_nodes == 3 and any("read as a header" in n for n in notes)


def test_the_guard_agrees_with_python_on_unicode_numbers():
    """A cell is a non-ASCII number exactly when it is not ASCII and Python's ``float``
    reads it (its Unicode digits) after dropping one sign and one point, or it is digits."""
    cells = ["\uff10", "-\u0663.\u0665", "+\u0966\u0967", "\u0661\u0660\u0660", "x\uff11", "caf\u00e9", "12",
             "1.5", "\u00b2", "\u2460", "", "\uff0e", "\u0663.", "\uff11e5", "\u00b2nd"]
    got = csv_guards.non_ascii_numbers(pd.Series(cells, dtype="string[pyarrow]")).tolist()

    def python_reads(c):
        try:
            float(c)
            return not c.isascii()
        except ValueError:
            return not c.isascii() and c.lstrip("+-").replace(".", "", 1).isdigit()

    assert got == [python_reads(c) for c in cells]
