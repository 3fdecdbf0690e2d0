"""The three files of a user's graph, each parsed alone: the edge list, the node features
and the node labels (:mod:`dropedge_explorer.data.csv_graph` puts them together; its docstring
gives the file format). Each parser returns numpy arrays and one-line notes, or raises
:class:`~dropedge_explorer.data.csv_reader.UploadError` naming the file, the line and the value.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from dropedge_explorer.data._csv_guards import ASCII_DIGITS, non_ascii_numbers
from dropedge_explorer.data.csv_reader import (
    ID_PATTERN,
    MAX_CLASSES,
    MAX_FEATURES,
    NAN_WORDS,
    Table,
    UploadError,
    header_note,
    node_ids,
    numbers,
    read_table,
    show_cell,
)


def parse_edges(text: str, name: str, limit: int, why: str) -> tuple[np.ndarray, list[str]]:
    """The ``(E, 2)`` int64 ``source, target`` rows of an edge list, as given.

    Args:
        text (str): the file's text.
        name (str): the file name for messages.
        limit (int): node ids must be below it.
        why (str): the reason for the limit, ending a message.

    Returns:
        tuple[np.ndarray, list[str]]: the rows and the notes (a header read).

    Raises:
        UploadError: empty, ragged, non-integer, negative or out-of-range ids.
    """
    table = read_table(text, name, num_fields=2)
    if table.num_rows == 0:
        only = " (only a header)" if table.header is not None else ""
        raise UploadError(f"{name}: edge list is empty{only}; expected rows 'source,target' of "
                          f"integer node ids")
    return node_ids(table, [0, 1], limit, why), header_note(table)


def parse_features(text: str, name: str, max_nodes: int) -> tuple[np.ndarray, list[str]]:
    """The ``(N, C)`` float64 feature matrix, row ``i`` node ``i``.

    Args:
        text (str): the file's text.
        name (str): the file name for messages.
        max_nodes (int): the most rows allowed.

    Returns:
        tuple[np.ndarray, list[str]]: the matrix and the notes (a header read).

    Raises:
        UploadError: empty, ragged, a non-numeric or non-finite cell, too many rows.
    """
    table = read_table(text, name)
    if table.header is None and table.num_columns >= 8 and table.num_rows > 1 and \
            table.flat.iloc[:table.num_columns].tolist() == [str(c) for c in range(table.num_columns)]:
        # "0,1,2,...,C-1" is the header pandas writes for a frame with default column names
        table = read_table(text, name, header=True)
    if table.num_rows == 0:
        raise UploadError(f"{name} has no feature rows; expected one row of numbers per node")
    if table.num_rows > max_nodes:
        raise UploadError(f"{name} has {table.num_rows} rows; at most {max_nodes} nodes are allowed")
    if table.num_columns > MAX_FEATURES:
        raise UploadError(f"{name} has {table.num_columns} columns; at most {MAX_FEATURES} features "
                          f"per node are allowed")
    return numbers(table), header_note(table)


@dataclass
class Labels:
    """Parsed labels: ``y`` (``(N,)`` int64, ``-1`` unlabelled) and the class names.

    Args:
        y (np.ndarray): ``(N,)`` int64 class ids, ``-1`` unlabelled.
        class_names (list[str]): the name of each class id.
        notes (list[str]): one-line facts a user should know (headers, mappings).
    """

    y: np.ndarray
    class_names: list[str]
    notes: list[str]


def _class_ids(values: pd.Series, lines: np.ndarray, name: str) -> tuple[np.ndarray, list[str], list[str]]:
    """Class ids (``-1`` for no label) of label cells, the class names, and notes."""
    # "nan" is what a float column with missing values writes (pandas, numpy): no label
    none = ((values == "") | (values == "-1") | values.str.lower().isin(NAN_WORDS)).to_numpy(bool)
    negative = values.str.fullmatch(r"-[0-9]+").to_numpy(bool) & ~none
    if negative.any():
        i = int(np.argmax(negative))
        raise UploadError(f"{name} line {lines[i]}: label {values.iat[i]} is negative; labels are "
                          f"integers >= 0 or class names (-1 or an empty cell: no label)")
    wide = non_ascii_numbers(values)  # "１" beside "1" would be a second class
    if wide.any():
        i = int(np.argmax(wide))
        raise UploadError(f"{name} line {lines[i]}: label {show_cell(values.iat[i])} is written with "
                          f"non-ASCII digits; {ASCII_DIGITS}")
    given = values[~none]
    codes = np.full(values.size, -1, dtype=np.int64)
    if given.empty:
        return codes, [], []
    integer = bool(given.str.fullmatch(ID_PATTERN).all())
    keys = given.astype("int64").to_numpy() if integer else given.to_numpy(str)
    classes, inverse = np.unique(keys, return_inverse=True)
    if classes.size > MAX_CLASSES:
        raise UploadError(f"{name} has {classes.size} distinct labels; at most {MAX_CLASSES} classes "
                          f"are allowed (is it the right file?)")
    codes[~none] = inverse
    names = [str(c) for c in classes]
    notes = []
    if not (integer and classes[-1] == classes.size - 1):
        shown = ", ".join(f"{c if integer else show_cell(c)}->{i}" for i, c in enumerate(names[:5]))
        more = ", ..." if len(names) > 5 else ""
        kind = "integer labels" if integer else "labels"
        notes.append(f"{name}: {len(names)} {kind} mapped to class ids 0..{len(names) - 1} in sorted "
                     f"order ({shown}{more})")
    return codes, names, notes


def _one_label_per_node(table: Table, name: str, num_nodes: int, fixed_by: str | None, max_nodes: int,
                        notes: list[str]) -> Labels:
    """One column: node ``i``'s label on row ``i``. Trailing empty rows label nothing; more
    rows than the edge list needs are isolated nodes (unless the features fix ``N``)."""
    column = table.column(0)
    # trailing empty cells beyond the nodes (blank lines at the end) label nothing
    trailing = table.num_rows - int(np.flatnonzero(column.ne("").to_numpy(bool)).max(initial=-1)) - 1
    keep = max(num_nodes, table.num_rows - trailing)
    if keep < table.num_rows:
        table = Table(name, table.flat.iloc[:keep], 1, table.lines[:keep], table.header,
                      table.header_line)
    rows = table.num_rows
    if rows < num_nodes or (fixed_by and rows != num_nodes):
        source = (f"{fixed_by} has {num_nodes} rows" if fixed_by
                  else f"the graph has {num_nodes} nodes (the edge list uses ids 0..{num_nodes - 1})")
        hint = (f" (if line {table.header_line} {show_cell(table.header)} is a label, not a header, "
                f"add a header line)" if table.header is not None else "")
        raise UploadError(f"{name} has {rows} label{'s' * (rows != 1)}, one per node, but {source}; "
                          f"give one label per node, or two columns 'node,label'{hint}")
    if rows > max_nodes:
        raise UploadError(f"{name} has {rows} rows; at most {max_nodes} nodes are allowed")
    if rows > num_nodes:
        extra = (f"node {num_nodes} has" if rows == num_nodes + 1
                 else f"nodes {num_nodes}..{rows - 1} have")
        hint = f" (is line {table.lines[0]} a header?)" if table.header is None else ""
        notes.append(f"{name} has {rows} labels but the edge list needs {num_nodes}: {extra} "
                     f"no edges{hint}")
    y, class_names, more = _class_ids(table.column(0), table.lines, name)
    return Labels(y, class_names, notes + more)


def _blank_separated(text: str, name: str) -> bool:
    """Whether a label file without commas is ``node label`` rows split by blanks (SNAP
    style: every row's first cell a node id), rather than one column of class names that
    hold spaces (``New York``), which splitting on blanks would cut into ragged fields."""
    if "," in text:
        return True  # commas separate: blanks are never split (read_table's rule)
    try:
        table = read_table(text, name, num_fields=(1, 2), keep_blank=True)
    except UploadError:  # ragged when split on blanks: names with spaces
        return False
    if table.num_columns != 2 or table.num_rows == 0:
        return True  # one column, or nothing to tell by: read_table's rule
    return bool(table.column(0).str.fullmatch(ID_PATTERN).all())


def parse_labels(text: str, name: str, num_nodes: int, fixed_by: str | None,
                 max_nodes: int) -> Labels:
    """Labels of one column (one per node) or two columns ``node,label``.

    Args:
        text (str): the file's text.
        name (str): the file name for messages.
        num_nodes (int): ``N`` as known from the features or the edge list.
        fixed_by (str, optional): the features file's name when it fixes ``N``, else
            ``None`` (then labels may add nodes above the edge list's largest id).
        max_nodes (int): the largest ``N`` allowed.

    Returns:
        Labels: the labels, the class names and the notes.

    Raises:
        UploadError: ragged, negative labels, bad node ids, a node labelled twice,
            a one-column file whose row count does not match ``N``.
    """
    blanks = _blank_separated(text, name)
    table = read_table(text, name, num_fields=(1, 2), keep_blank=True, blanks=blanks)
    if table.num_columns == 1 and table.header is not None and table.num_rows + 1 == num_nodes \
            and not table.column(0).str.fullmatch(f"(?:{ID_PATTERN}|-1|)").all() \
            and table.column(0).eq(table.header.strip().strip('"').strip()).any():
        # class names, one per node, no header: the "header" is node 0's label (it is one
        # of the classes; a word no node has, like "label", stays a header)
        table = read_table(text, name, num_fields=1, header=False, keep_blank=True, blanks=blanks)
    notes = header_note(table)
    if table.num_rows == 0:
        raise UploadError(f"{name} has no label rows; expected one label per node, or rows 'node,label'")
    if table.num_columns == 1:
        return _one_label_per_node(table, name, num_nodes, fixed_by, max_nodes, notes)
    why = (f"{fixed_by} has {num_nodes} rows, so ids must be 0..{num_nodes - 1}" if fixed_by
           else f"ids must be below {max_nodes}")
    nodes = node_ids(table, [0], num_nodes if fixed_by else max_nodes, why)[:, 0]
    dup = pd.Series(nodes).duplicated().to_numpy()
    if dup.any():
        i = int(np.argmax(dup))
        first = int(np.argmax(nodes == nodes[i]))
        raise UploadError(f"{name} line {table.lines[i]}: node {nodes[i]} is labelled twice "
                          f"(first on line {table.lines[first]})")
    codes, class_names, more = _class_ids(table.column(1), table.lines, name)
    y = np.full(max(num_nodes, int(nodes.max()) + 1), -1, dtype=np.int64)
    y[nodes] = codes
    return Labels(y, class_names, notes + more)


