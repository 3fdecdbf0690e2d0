"""The user graph: one test per defect, the repairs and
their notes, the input kinds, pickle payloads read as data, and property tests —
random edge lists always give a simple undirected graph, random bytes never raise
anything but ``UploadError``, and every sampler keeps exact counts on uploaded graphs."""
from __future__ import annotations

import io
import pickle
from pathlib import Path

import numpy as np
import pytest
import torch
from dropedge_core import samplers
from dropedge_core.graph import Graph
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dropedge_explorer.data.csv_graph import MAX_BYTES, UploadError, load_files, parse_graph

FAST = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])

EDGES = b"source,target\n0,1\n1,2\n2,0\n3,4\n"
FEATURES = b"f0,f1,f2\n1,1,2\n0,3,1\n2,0,0\n1,1,1\n0,0,5\n5,5,0\n"  # 6 nodes: node 5 isolated


def raises(match_all: list[str], **kwargs) -> str:
    """Parse, expect an UploadError whose one-line message contains every string given."""
    with pytest.raises(UploadError) as info:
        parse_graph(**kwargs)
    message = str(info.value)
    assert "\n" not in message and message.strip() == message
    for part in match_all:
        assert part in message, f"{part!r} not in {message!r}"
    return message


def check_simple(g: Graph) -> None:
    u, v = g.undirected_edges
    assert g.undirected_edges.dtype == torch.long
    assert bool((u < v).all())
    key = u * g.num_nodes + v
    assert bool((key[1:] > key[:-1]).all())  # sorted, no duplicates
    assert int(g.undirected_edges.max()) < g.num_nodes
    assert g.edge_index.shape == (2, 2 * g.num_edges)


# ----------------------------------------------------------------------------- happy paths


def test_happy_path_features_and_partial_labels():
    labels = b"node,label\n0,cat\n2,dog\n3,cat\n5,dog\n"
    g, notes = parse_graph(EDGES, FEATURES, labels, name="mine", seed=3)
    assert isinstance(g, Graph) and g.name == "mine"
    assert (g.num_nodes, g.num_edges, g.num_features, g.num_classes) == (6, 4, 3, 2)
    check_simple(g)
    assert g.undirected_edges.tolist() == [[0, 0, 1, 3], [1, 2, 2, 4]]
    assert torch.allclose(g.x.abs().sum(1), torch.ones(6))
    assert torch.allclose(g.x[0], torch.tensor([0.25, 0.25, 0.5]))
    assert g.y.tolist() == [0, -1, 1, 0, -1, 1]  # cat -> 0, dog -> 1 (sorted); 1 and 4 unlabelled
    assert g.info["class_names"] == ["cat", "dog"]
    labelled = g.y >= 0
    splits = torch.stack([g.train_mask, g.val_mask, g.test_mask])
    assert int(splits.sum(0).max()) <= 1  # disjoint
    assert torch.equal(splits.any(0), labelled)  # only over labelled nodes, all of them
    assert "2 of 6 nodes have no label; they are in no split" in notes
    assert "1 of 6 nodes has no edges" in notes
    assert any("line 1 ('source,target') read as a header" in n for n in notes)
    assert g.info["notes"] == notes


def test_splits_are_20_30_per_class_over_labelled_nodes_only():
    n = 500
    rng = np.random.default_rng(0)
    src = np.arange(n)
    edges = "\n".join(f"{a},{b}" for a, b in zip(src, (src + 1) % n)).encode()
    y = rng.integers(0, 3, n)
    y[rng.random(n) < 0.24] = -1  # about 120 unlabelled
    g, notes = parse_graph(edges, labels="\n".join(map(str, y)).encode(), seed=1)
    unlabelled = int((y < 0).sum())
    assert g.y.tolist() == y.tolist()
    assert f"{unlabelled} of 500 nodes have no label; they are in no split" in notes
    for c in range(3):
        in_c = g.y == c
        assert int((g.train_mask & in_c).sum()) == 20
        assert int((g.val_mask & in_c).sum()) == 30
        assert int((g.test_mask & in_c).sum()) == int(in_c.sum()) - 50
    assert not bool(((g.train_mask | g.val_mask | g.test_mask) & (g.y < 0)).any())
    g2, _ = parse_graph(edges, labels="\n".join(map(str, y)).encode(), seed=1)
    assert torch.equal(g.train_mask, g2.train_mask)  # the seed decides the split


def test_without_features_and_labels():
    g, notes = parse_graph(b"0,1\n1,2\n")
    assert (g.num_nodes, g.num_edges, g.num_features, g.num_classes) == (3, 2, 1, 0)
    assert torch.equal(g.x, torch.ones(3, 1))
    assert g.y.tolist() == [-1, -1, -1]
    assert not bool((g.train_mask | g.val_mask | g.test_mask).any())
    assert "no features: using a constant feature; the feature-dependent sampler then equals uniform" in notes
    assert "no labels: training is unavailable; the samplers and MEN still work" in notes


def test_input_kinds_give_the_same_graph(tmp_path):
    path = tmp_path / "cites.csv"
    path.write_bytes(EDGES)
    kinds = [EDGES, EDGES.decode(), path, io.BytesIO(EDGES), io.StringIO(EDGES.decode())]
    graphs = [parse_graph(k)[0] for k in kinds]
    for g in graphs[1:]:
        assert torch.equal(g.undirected_edges, graphs[0].undirected_edges)
    g, _ = load_files(path)
    assert g.name == "cites" and g.info["files"]["edges"] == "cites.csv"
    stream = io.BytesIO(EDGES)
    stream.read()  # already read once (Streamlit reruns): read again from the start
    assert parse_graph(stream)[0].num_edges == 4


def test_whitespace_separated_crlf_comments_and_bom():
    text = "\ufeff# a SNAP-style list\r\n0 1\r\n\r\n1\t2\r\n   \r\n2  3\r\n"
    g, _ = parse_graph(text.encode())
    assert g.undirected_edges.tolist() == [[0, 1, 2], [1, 2, 3]]


def test_label_formats():
    edges = b"0,1\n1,2\n2,3\n"
    # one column of class names, one per node, no header: the first row is a label
    g, notes = parse_graph(edges, labels=b"b\na\nb\nc\n")
    assert g.y.tolist() == [1, 0, 1, 2] and g.info["class_names"] == ["a", "b", "c"]
    assert any("3 labels mapped to class ids 0..2 in sorted order" in n for n in notes)
    # the same with a header
    g, _ = parse_graph(edges, labels=b"label\nb\na\nb\nc\n")
    assert g.y.tolist() == [1, 0, 1, 2]
    # integers 0..K-1 are class ids as they are; -1 and an empty cell mean "no label"
    g, notes = parse_graph(edges, labels=b"node,label\n0,1\n1,\n2,0\n3,-1\n")
    assert g.y.tolist() == [1, -1, 0, -1] and g.num_classes == 2
    assert not any("mapped" in n for n in notes)
    # integers with gaps are mapped in numeric order
    g, notes = parse_graph(edges, labels=b"10\n2\n2\n10\n")
    assert g.y.tolist() == [1, 0, 0, 1] and g.info["class_names"] == ["2", "10"]
    assert any("2 integer labels mapped to class ids 0..1 in sorted order (2->0, 10->1)" in n
               for n in notes)
    # two-column labels may name nodes above the edge list's largest id (isolated nodes)
    g, notes = parse_graph(edges, labels=b"0,1\n6,0\n")
    assert g.num_nodes == 7 and g.y.tolist() == [1, -1, -1, -1, -1, -1, 0]
    assert "3 of 7 nodes have no edges" in notes


@pytest.mark.parametrize("missing", ["", '""', "nan"])
@pytest.mark.parametrize("line_end", ["\n", "\r\n"])
def test_a_missing_label_in_one_column_is_unlabelled_and_the_header_never_a_label(missing, line_end):
    """``label, cat, <missing>, dog`` (pandas writes ``""`` for a missing value; other
    writers a blank line or ``nan``): node 1 has no label, the header is no class, and no
    label shifts (issue 29: the blank line was skipped, so 'label' became node 0's class)."""
    edges = b"0,1\n1,2\n"
    text = line_end.join(["label", "cat", missing, "dog"]) + line_end
    g, notes = parse_graph(edges, labels=text.encode())
    assert g.y.tolist() == [0, -1, 1] and g.info["class_names"] == ["cat", "dog"]
    assert "labels.csv: line 1 ('label') read as a header" in notes
    assert "1 of 3 nodes has no label; it is in no split" in notes
    # a trailing blank line past the last node labels nothing (and adds no node)
    g, _ = parse_graph(edges, labels=b"label\ncat\ndog\ncat\n\n\n")
    assert g.num_nodes == 3 and g.y.tolist() == [0, 1, 0]
    # a blank line before the last label is a missing label, not a skipped line
    g, _ = parse_graph(edges, labels=b"label\n\ncat\ndog\n")
    assert g.y.tolist() == [-1, 0, 1]


def test_a_header_word_no_node_has_is_never_read_as_node_0s_label():
    """One row short with a header: refused with the hint, not guessed to be a label."""
    raises(["labels.csv has 2 labels, one per node, but the graph has 3 nodes",
            "if line 1 'label' is a label, not a header, add a header line"],
           edges=b"0,1\n1,2\n", labels=b"label\ncat\ndog\n")
    # a first row that is one of the classes is node 0's label (no header), as before
    g, _ = parse_graph(b"0,1\n1,2\n", labels=b"dog\ncat\ndog\n")
    assert g.y.tolist() == [1, 0, 1]


def test_one_column_class_names_with_spaces_are_names():
    """``New York`` in a one-column file is one class name, not two fields (issue 38: such
    files were refused as ragged, or read as ``node label`` rows); blank-separated
    ``node label`` rows still split."""
    edges = b"0,1\n1,2\n2,3\n"
    g, _ = parse_graph(edges, labels=b"city\nNew York\nLos Angeles\nNew York\nSan Luis Obispo\n")
    assert g.info["class_names"] == ["Los Angeles", "New York", "San Luis Obispo"]
    assert g.y.tolist() == [1, 0, 1, 2]
    g, _ = parse_graph(edges, labels=b"New York\nLos Angeles\nNew York\nLos Angeles\n")  # no header
    assert g.info["class_names"] == ["Los Angeles", "New York"] and g.y.tolist() == [1, 0, 1, 0]
    g, _ = parse_graph(edges, labels=b"Sci Fi\n\nDrama\nSci Fi\n")  # a blank line: no label
    assert g.y.tolist() == [1, -1, 0, 1]
    g, _ = parse_graph(edges, labels=b"node label\n0 cat\n2 dog\n")  # SNAP-style rows still split
    assert g.y.tolist() == [0, -1, 1, -1]


@pytest.mark.parametrize("labels, message", [
    (b"New York\nLos Angeles\nx,y\nLA\n", "labels.csv line 3 has 2 fields; expected 1 (as on line 1)"),
    (b"San Luis Obispo\nLA\n3,LA\nLA\n", "labels.csv line 3 has 2 fields; expected 1 (as on line 1)"),
    (b"New York\nLos Angeles\nNew York\n3,Los Angeles\n",
     "labels.csv line 4 has 2 fields; expected 1 (as on line 1)"),
])
def test_a_comma_below_a_one_column_first_line_is_counted_by_commas(labels, message):
    """A label file with commas is split on commas, whatever its first line holds (issue 48:
    ``San Luis Obispo`` on line 1 was split on spaces, so a comma row further down was
    refused as "1 field; expected 3", or ``Los`` read as a node id): the message names the
    fields the row really has."""
    assert raises([message], edges=b"0,1\n1,2\n2,3\n", labels=labels) == message


def test_a_long_bad_cell_is_echoed_cut_with_its_length():
    cell = "x" * 10_000
    message = raises(["edges.csv line 1: 'xxxx",
                      "... (10000 characters) is not a non-negative integer node id"],
                     edges=f"{cell},1\n0,1\n".encode())
    assert len(message) < 250


def test_pandas_default_header_of_features_is_a_header():
    header = ",".join(map(str, range(8)))  # DataFrame(x).to_csv(index=False) with 8 columns
    features = f"{header}\n1,0,0,0,0,0,0,1\n0,0,1,0,0,0,0,0\n".encode()
    g, notes = parse_graph(b"0,1\n", features)
    assert g.num_nodes == 2 and any(f"({header!r}) read as a header" in n for n in notes)
    g, _ = parse_graph(b"0,1\n", b"0,1,2\n1,1,1\n")  # narrow: a feature row like any other
    assert g.num_nodes == 2 and g.x[0].tolist() == pytest.approx([0, 1 / 3, 2 / 3])


def test_huge_feature_values_do_not_overflow():
    g, _ = parse_graph(b"0,1\n", b"1e308,1e308\n-3,1\n")
    assert torch.isfinite(g.x).all()
    assert torch.allclose(g.x, torch.tensor([[0.5, 0.5], [-0.75, 0.25]]))


# ----------------------------------------------------------------------------- repairs


def test_repair_notes_self_loops_and_duplicates():
    edges = b"0,1\n1,0\n0,1\n2,2\n3,3\n4,4\n1,2\n2,1\n"
    g, notes = parse_graph(edges)
    assert g.undirected_edges.tolist() == [[0, 1], [1, 2]]
    assert "dropped 3 self-loops" in notes
    assert "dropped 3 duplicate edges (the same pair again, in either direction)" in notes
    assert "2 of 5 nodes have no edges" in notes  # 3 and 4 only had self-loops
    g, notes = parse_graph(b"0,1\n1,1\n")
    assert "dropped 1 self-loop" in notes


# ----------------------------------------------------------------------------- defects: edges


@pytest.mark.parametrize("edges, parts", [
    (b"", ["edges.csv", "edge list is empty"]),
    (b"\n \n\n", ["edge list is empty"]),
    (b"source,target\n", ["edge list is empty (only a header)"]),
    (b"# only a comment\n", ["edge list is empty"]),
])
def test_empty_edge_list(edges, parts):
    raises(parts, edges=edges)


def test_ragged_row_names_the_line():
    # line 7 of the file, counting the comment and the blank line
    edges = b"# comment\n0,1\n1,2\n\n2,3\n3,4\n4,5,6\n5,6\n"
    assert raises(["line 7 has 3 fields; expected 2"], edges=edges) == \
        "edges.csv line 7 has 3 fields; expected 2"
    raises(["line 2 has 1 field; expected 2"], edges=b"0,1\n1\n")
    raises(["line 3 has 3 fields; expected 2"], edges=b"0,1\r\n1,2\r\n2,3,\r\n")  # trailing comma


@pytest.mark.parametrize("edges, parts", [
    (b"0,1\n1,2\n2,3\na1,2\n", ["edges.csv line 4: 'a1' is not a non-negative integer node id"]),
    (b"0,1\n1.0,2\n", ["line 2: '1.0' is not a non-negative integer node id"]),
    (b"0,1\n1,\n", ["line 2: '' is not a non-negative integer node id"]),
    (b"0,x\n", ["line 1: 'x' is not a non-negative integer node id"]),  # a number on line 1: not a header
    (b"0,1\n1,\xc3\xa9\n", ["line 2: '\u00e9' is not a non-negative integer node id"]),
])
def test_non_integer_ids(edges, parts):
    raises(parts, edges=edges)


def test_first_bad_cell_in_file_order():
    raises(["line 2: 'b'"], edges=b"0,1\n1,b\nc,2\n")


def test_negative_ids():
    raises(["edges.csv line 3: node id -3 is negative", "ids are integers >= 0"],
           edges=b"0,1\n1,2\n-3,2\n")


def test_ids_out_of_range_when_features_fix_n():
    raises(["edges.csv line 2: node id 6 is out of range", "features.csv has 6 rows, so ids must be 0..5"],
           edges=b"0,1\n5,6\n", features=FEATURES)
    raises(["node id 7 is out of range", "has 6 rows"], edges=b"7,1\n", features=FEATURES)


def test_ids_above_max_nodes():
    raises(["line 2: node id 5000 is out of range", "ids must be below 1000"],
           edges=b"0,1\n5000,1\n", max_nodes=1000)
    raises(["node id '123456789012345678901234' is too large"], edges=b"0,123456789012345678901234\n")


def test_only_self_loops():
    raises(["edges.csv has no edge between two different nodes (2 self-loops only)"], edges=b"1,1\n2,2\n")


# ----------------------------------------------------------------------------- defects: features


@pytest.mark.parametrize("features, parts", [
    (b"1,2,3\n4,5\n", ["features.csv line 2 has 2 fields; expected 3 (as on line 1)"]),
    (b"f1,f2\n1,2\n4,abc\n", ["features.csv line 3, column 2: 'abc' is not a number"]),
    (b"1,2\nnan,1\n", ["line 2, column 1: 'nan' is not a finite number"]),
    (b"1,2\n1,inf\n", ["line 2, column 2: 'inf' is not a finite number"]),
    (b"1,2\n1,-Infinity\n", ["line 2, column 2: '-Infinity' is not a finite number"]),
    (b"1,2\n1e400,1\n", ["line 2, column 1: '1e400' is not a finite number"]),
    (b"1,2\n1,\n", ["line 2, column 2: '' is not a number"]),
    (b"a,b\n", ["features.csv has no feature rows"]),
    (b"", ["features.csv has no feature rows"]),
])
def test_feature_defects(features, parts):
    raises(parts, edges=b"0,1\n", features=features)


def test_fewer_feature_rows_than_the_largest_id():
    raises(["edges.csv line 3: node id 2 is out of range; features.csv has 2 rows, so ids must be 0..1"],
           edges=b"0,1\n1,0\n1,2\n", features=b"1,0\n0,1\n")


# ----------------------------------------------------------------------------- defects: labels


@pytest.mark.parametrize("labels, features, parts", [
    (b"0,1,2\n", None, ["labels.csv line 1 has 3 fields; expected 1 or 2"]),
    (b"0,a\n1\n", None, ["labels.csv line 2 has 1 field; expected 2 (as on line 1)"]),
    (b"0\n-2\n1\n", None, ["labels.csv line 2: label -2 is negative"]),
    (b"node,label\n0,a\n1,b\n0,c\n", None, ["labels.csv line 4: node 0 is labelled twice (first on line 2)"]),
    (b"0,a\nx,b\n", None, ["labels.csv line 2: 'x' is not a non-negative integer node id"]),
    (b"0,a\n-4,b\n", None, ["labels.csv line 2: node id -4 is negative"]),
    (b"0,a\n6,b\n", FEATURES, ["labels.csv line 2: node id 6 is out of range; features.csv has 6 rows"]),
    (b"0\n1\n", None, ["labels.csv has 2 labels, one per node, but the graph has 3 nodes"]),
    (b"0\n1\n0\n1\n0\n1\n1\n", FEATURES,
     ["labels.csv has 7 labels, one per node, but features.csv has 6 rows"]),
    (b"cat\ndog\n", FEATURES,
     ["labels.csv has 1 label, one per node", "if line 1 'cat' is a label, not a header"]),
    (b"label\n", None, ["labels.csv has no label rows"]),
])
def test_label_defects(labels, features, parts):
    raises(parts, edges=b"0,1\n1,2\n", features=features, labels=labels)


def test_too_many_classes():
    edges = "\n".join(f"{i},{i + 1}" for i in range(1500)).encode()
    labels = "\n".join(f"{i},c{i}" for i in range(1001)).encode()
    raises(["labels.csv has 1001 distinct labels; at most 1000 classes"], edges=edges, labels=labels)


# ----------------------------------------------------------------------------- defects: files


def test_size_limit_every_kind(tmp_path):
    data = b"0,1\n" * 100  # 400 bytes
    path = tmp_path / "big.csv"
    path.write_bytes(data)
    raises(["edges.csv is 400 bytes; the limit is 50 bytes"], edges=data, max_bytes=50)
    raises(["big.csv is 400 bytes; the limit is 50 bytes"], edges=path, max_bytes=50)
    raises(["edges.csv is 400 bytes; the limit is 50 bytes"], edges=io.BytesIO(data), max_bytes=50)
    raises(["edges.csv is 400 bytes"], edges=data.decode(), max_bytes=50)
    raises(["features.csv is 400 bytes"], edges=b"0,1\n", features=data, max_bytes=50)
    raises(["labels.csv is 400 bytes"], edges=b"0,1\n", labels=data, max_bytes=50)
    assert parse_graph(data, max_bytes=400)[0].num_edges == 1  # the limit itself is allowed


def test_default_size_limit_message():
    big = b"0,1\n" * (int(25.3 * 1024 * 1024) // 4)
    assert MAX_BYTES == 20 * 1024 * 1024
    assert raises(["25.3 MB"], edges=big) == "edges.csv is 25.3 MB; the limit is 20 MB"


@pytest.mark.parametrize("edges, parts", [
    (b"0,1\n\xff\xfe2,3\n", ["edges.csv is not UTF-8 text (byte 0xff at offset 4)"]),
    (b"0,1\x00\n", ["edges.csv contains a NUL character (offset 3)"]),
    ("0,1\n\ud800,2\n", ["edges.csv is not valid Unicode text"]),
    ("edges.csv", ["looks like a file name", "pathlib.Path"]),
    (12345, ["expected bytes, CSV text, a pathlib.Path or a file object (got int)"]),
    (Path("/nonexistent/dir/e.csv"), ["/nonexistent/dir/e.csv does not exist"]),
])
def test_unreadable_sources(edges, parts):
    raises(parts, edges=edges)


def test_directory_is_not_a_file(tmp_path):
    raises(["is not a file"], edges=tmp_path)
    raises(["does not exist"], edges=b"0,1\n", features=tmp_path / "missing.csv")


class _Payload:
    """Unpickling this calls :func:`_mark`: the test fails if anything unpickles it."""

    def __reduce__(self):
        return (_mark, ("unpickled",))


UNPICKLED: list[str] = []


def _mark(value: str) -> str:
    UNPICKLED.append(value)
    return value


@pytest.mark.parametrize("protocol", [0, 2, pickle.HIGHEST_PROTOCOL])
@pytest.mark.parametrize("role", ["edges", "features", "labels"])
def test_pickle_payload_is_rejected_as_data(monkeypatch, protocol, role):
    def refuse(*args, **kwargs):
        raise AssertionError("upload must never unpickle")

    for module, attr in [(pickle, "loads"), (pickle, "load"), (torch, "load"), (np, "load")]:
        monkeypatch.setattr(module, attr, refuse)
    payload = pickle.dumps(_Payload(), protocol=protocol)
    kwargs = {"edges": b"0,1\n1,2\n", role: payload}
    # protocol 0 is ASCII lines, which read as a column of class names: refused as a pickle too
    with pytest.raises(UploadError, match=rf"looks like a Python pickle \(protocol {protocol}\)") as info:
        parse_graph(**kwargs)
    assert "\n" not in str(info.value)
    assert UNPICKLED == []


# ----------------------------------------------------------------------------- properties

pairs = st.lists(st.tuples(st.integers(0, 25), st.integers(0, 25)), min_size=1, max_size=80)


def _edge_csv(edge_list, sep=",", header=False, newline="\n") -> bytes:
    rows = (["source" + sep + "target"] if header else []) + [f"{a}{sep}{b}" for a, b in edge_list]
    return (newline.join(rows) + newline).encode()


@FAST
@given(edge_list=pairs, sep=st.sampled_from([",", ", ", "\t", " "]), header=st.booleans(),
       newline=st.sampled_from(["\n", "\r\n"]))
def test_random_edge_lists_give_simple_undirected_graphs(edge_list, sep, header, newline):
    data = _edge_csv(edge_list, sep, header, newline)
    distinct = {(min(a, b), max(a, b)) for a, b in edge_list if a != b}
    if not distinct:
        with pytest.raises(UploadError, match="no edge between two different nodes"):
            parse_graph(data)
        return
    g, notes = parse_graph(data)
    check_simple(g)
    assert g.num_edges == len(distinct)
    assert set(map(tuple, g.undirected_edges.t().tolist())) == distinct
    assert g.num_nodes == max(max(a, b) for a, b in edge_list) + 1
    loops = sum(a == b for a, b in edge_list)
    dups = len(edge_list) - loops - len(distinct)
    assert (f"dropped {loops} self-loop{'s' * (loops != 1)}" in notes) == (loops > 0)
    assert any(n.startswith(f"dropped {dups} duplicate edge") for n in notes) == (dups > 0)


csv_alphabet = st.sampled_from(list("0123456789,,,\n\n\r\t -+.#\"eEnaifx\u00e9\ufeff"))
junk = st.one_of(st.binary(max_size=300), st.text(max_size=200),
                 st.text(alphabet=csv_alphabet, max_size=200))


def _parse_or_upload_error(**kwargs) -> None:
    try:
        g, notes = parse_graph(max_nodes=5000, **kwargs)
    except UploadError as exc:
        message = str(exc)
        assert message and "\n" not in message
        return
    check_simple(g)
    assert all(isinstance(n, str) and "\n" not in n for n in notes)
    assert g.y.numel() == g.num_nodes == g.x.size(0) and torch.isfinite(g.x).all()


@FAST
@given(data=junk)
def test_random_edges_never_raise_anything_but_upload_error(data):
    _parse_or_upload_error(edges=data)


@FAST
@given(data=junk)
def test_random_features_never_raise_anything_but_upload_error(data):
    _parse_or_upload_error(edges=b"0,1\n1,2\n", features=data)


@FAST
@given(data=junk)
def test_random_labels_never_raise_anything_but_upload_error(data):
    _parse_or_upload_error(edges=b"0,1\n1,2\n", labels=data)


@FAST
@given(edge_list=pairs, num_features=st.integers(1, 4), rates=st.tuples(st.floats(0, 1), st.floats(0, 1)),
       num_layers=st.integers(1, 6), name=st.sampled_from(samplers.NAMES), seed=st.integers(0, 2**31 - 1))
def test_samplers_on_uploaded_graphs(edge_list, num_features, rates, num_layers, name, seed):
    if all(a == b for a, b in edge_list):
        edge_list = edge_list + [(0, 1)]
    n = max(max(a, b) for a, b in edge_list) + 1
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 4, (n, num_features))
    features = "\n".join(",".join(map(str, row)) for row in x).encode()
    g, _ = parse_graph(_edge_csv(edge_list), features)
    p_min, p_max = sorted(rates)
    s = samplers.make(name, p_min=p_min, p_max=p_max)
    masks = s.sample(g, num_layers, torch.Generator().manual_seed(seed))
    assert masks.shape == (num_layers, g.num_edges) and masks.dtype == torch.bool
    assert masks.sum(1).tolist() == s.layer_counts(g, num_layers).tolist()
    if name in ("lid", "dropedge++"):
        assert not bool((masks[:-1] & ~masks[1:]).any())  # mask[l] ⊆ mask[l+1]
    if name == "ldd":
        assert not bool((masks[1:] & ~masks[:-1]).any())  # mask[l] ⊇ mask[l+1]
