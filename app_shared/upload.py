"""The user's own graph: the sidebar's file uploaders and their parse, kept in the
browser session.

:func:`dropedge_explorer.data.csv_graph.parse_graph` reads the files; the parsed graph (or the
one-line error) is kept in this browser session's ``st.session_state`` under the files'
content hashes — never in a module global, so two sessions each keep their own upload.
"""
from __future__ import annotations

import hashlib
import re
from pathlib import Path

import streamlit as st

from app_shared.text import plain
from dropedge_explorer.data import csv_graph, csv_reader

#: (role, uploader label, help) of the upload widgets; keys ``upload_<role>``.
UPLOAD_FILES = (
    ("edges", "Edge list (required)",
     "CSV rows `source,target` of integer node ids 0..N-1; a header row, spaces or tabs are "
     "fine. Self-loops and duplicate edges are dropped."),
    ("features", "Node features (optional)",
     "One row of numbers per node (row i = node i); it fixes the number of nodes. Without it "
     "every node gets one constant feature."),
    ("labels", "Node labels (optional; training needs them)",
     "One label per node in node order, or two columns `node,label`. Integers or class "
     "names; -1 or an empty cell: no label. Split: 20 train / 30 validation nodes per "
     "class, the rest test."),
)
UPLOAD_TYPES = ["csv", "txt", "tsv"]


def _file_digest(file) -> str:
    """SHA-256 of an uploaded file's content, hashed once per upload (``file_id``)."""
    memo = st.session_state.setdefault("_upload_digests", {})
    file_id = getattr(file, "file_id", None)
    if file_id not in memo:
        if len(memo) > 16:
            memo.clear()
        memo[file_id] = hashlib.sha256(file.getvalue()).hexdigest()
    return memo[file_id]


def upload_widgets(data_seed: int = 0) -> None:
    """The upload's file uploaders (in the sidebar) and its parse, kept in the session.

    ``st.session_state["upload_parsed"]`` holds ``{"digest", "id", "graph", "notes",
    "error", "files"}`` of the last parse; a new parse happens only when the files'
    content (their SHA-256) or names change. When the uploaders come back empty after
    another dataset was picked (Streamlit forgets a widget that was not drawn), the
    earlier upload stays in use until new files replace it or "Forget" drops it.
    """
    ss = st.session_state
    with st.expander("Your graph (CSV files)", expanded=True):
        files = {role: st.file_uploader(label, type=UPLOAD_TYPES, key=f"upload_{role}", help=text)
                 for role, label, text in UPLOAD_FILES}
        st.caption("Read as text only: nothing is unpickled or run. Up to "
                   f"{csv_reader.human_size(csv_graph.MAX_BYTES)} per file.")
        parsed = ss.get("upload_parsed")
        if files["edges"] is None:
            reappeared = not ss.get("_upload_drawn", False)
            if parsed is not None and (reappeared or ss.get("upload_kept")) and \
                    not any(files.values()):
                ss["upload_kept"] = True
                st.caption(f"Still using your earlier upload ({plain(upload_files_text(parsed['files']))}); "
                           "upload files to replace it.")
                if st.button("Forget it", key="upload_forget"):
                    ss.pop("upload_parsed", None)
                    ss["upload_kept"] = False
                    st.rerun()
                return
            ss.pop("upload_parsed", None)
            ss["upload_kept"] = False
            if files["features"] is not None or files["labels"] is not None:
                st.caption("Add the edge list: features and labels belong to its nodes.")
            return
        ss["upload_kept"] = False
        digest = tuple((role, f.name, f.size, _file_digest(f)) for role, f in files.items()
                       if f is not None)
        if parsed is None or parsed["digest"] != digest:
            parsed = _parse_upload(files, digest, data_seed)
            ss["upload_parsed"] = parsed
        for note in parsed["notes"]:
            st.caption(f"ℹ️ {plain(note)}")


def _graph_name(file_name: str) -> str:
    """The uploaded graph's name: the edge file's stem, in plain characters."""
    return re.sub(r"[^\w.\- ]", "_", Path(file_name).stem)[:60].strip() or "upload"


def _parse_upload(files: dict, digest: tuple, data_seed: int) -> dict:
    """Parse the uploaded files into the session's upload record (never raises)."""
    names = {role: re.sub(r"[\x00-\x1f\x7f]", "?", str(f.name))[:120] or role
             for role, f in files.items() if f is not None}
    record = {"digest": digest, "id": hashlib.sha256(repr(digest).encode()).hexdigest()[:12],
              "graph": None, "notes": [], "error": None, "files": names}
    try:
        with st.spinner("Reading your files…"):
            graph, notes = csv_graph.parse_graph(files["edges"], files["features"], files["labels"],
                                              name=_graph_name(names["edges"]), seed=data_seed)
    except csv_graph.UploadError as exc:
        record["error"] = " ".join(str(exc).split())
    except Exception as exc:  # a defect the parser did not foresee: still one line
        record["error"] = f"cannot read the files ({type(exc).__name__}: {exc})".splitlines()[0]
    else:
        record.update(graph=graph, notes=notes)
    return record


def upload_files_text(files: dict) -> str:
    """``edges.csv (+features.csv, labels.csv)``."""
    extra = [files[k] for k in ("features", "labels") if k in files]
    return files.get("edges", "?") + (f" (+{', '.join(extra)})" if extra else "")


__all__ = ["UPLOAD_FILES", "UPLOAD_TYPES", "upload_files_text", "upload_widgets"]
