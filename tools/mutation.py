"""Mutation testing of one core module with mutmut (issue 23; docs/TESTING_MUTATION.md).

Usage:
    python tools/mutation.py MODULE                 # mutate MODULE, run its fast tests per mutant, record
    python tools/mutation.py MODULE run NAME...     # (re)test some mutants (globs allowed)
    python tools/mutation.py MODULE show NAME       # the diff of one mutant
    python tools/mutation.py MODULE summary         # killed / survived / equivalent / timeout
    python tools/mutation.py MODULE survivors       # key and diff of every unjudged surviving mutant
    python tools/mutation.py MODULE retest          # rerun only the survivors (after adding tests)
    python tools/mutation.py MODULE record          # write MODULE's last run into the records and the docs
    python tools/mutation.py [MODULE] check         # fail on judgements naming no current mutant
    python tools/mutation.py docs                   # rewrite the score tables of the docs from the records
    python tools/mutation.py list                   # the configured modules

MODULE is a key of ``tools/mutation.toml``. Each module gets its own mutmut workspace under
``.mutation/MODULE/`` (ignored by git) with a generated ``pyproject.toml`` whose
``[tool.mutmut]`` mutates only that file and selects only that module's test files, so a
module's results persist between runs and a second run retests only changed functions.

Judgements (``[modules.M.equivalent]``, ``[modules.M.out_of_reach]``) are keyed by the
mutant's change, not by mutmut's number (which shifts when a function changes):
``"FUNCTION HASH"``, HASH the first 10 hex digits of the sha256 of the changed lines
(``change`` in the entry, see ``change_text``). A run's outcome is kept in
``tools/mutation-records.toml`` (the survivors by key, the counts, the date, commit and
source hash); the score tables in docs/TESTING.md and docs/TESTING_MUTATION.md are written
from it between ``mutation-scores`` markers, and tests/test_mutation_records.py compares.

Environment: ``MUTATION_JOBS`` (default 1: this project's machine has 2 shared cores),
``MUTMUT`` (the mutmut executable; default: ``.venv-mutation/bin/mutmut`` when present,
else ``mutmut`` on PATH). Install with ``pip install -r requirements-mutation.txt``.
"""
from __future__ import annotations

import datetime
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: mutmut itself depends on toml there
    import toml as tomllib  # type: ignore[no-redef]

REPO = Path(__file__).resolve().parent.parent
CONFIG = REPO / "tools" / "mutation.toml"
RECORDS = REPO / "tools" / "mutation-records.toml"
WORK = REPO / ".mutation"
DOCS = {"TESTING.md": "short", "TESTING_MUTATION.md": "long"}
KINDS = ("equivalent", "out_of_reach")

# mutmut's exit-code meaning (mutmut/stats.py), folded into the columns the doc reports
STATUS = {1: "killed", 3: "killed", 0: "survived", 5: "no tests", 33: "no tests", 34: "skipped",
          36: "timeout", -24: "timeout", 24: "timeout", 152: "timeout", 255: "timeout",
          37: "killed", None: "not checked"}


def load(path: Path = CONFIG) -> dict:
    """A TOML file as a dict (the configuration, or the records)."""
    if not path.is_file():
        return {}
    with open(path, "rb") as f:
        return tomllib.load(f)


def toml_value(v) -> str:
    """A TOML literal for a str, bool, number or list of str (json's spelling fits those)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    return json.dumps(v, ensure_ascii=False)


# ------------------------------------------------------------------ keys: a mutant by its change
def change_text(diff: str) -> str:
    """The lines a mutant changes, each stripped and marked ``-``/``+``, one per line: the
    part of mutmut's diff that names the mutation (indentation and the hunk's line numbers
    move when code around it changes; the change itself does not)."""
    lines = [line for line in diff.splitlines() if line[:1] in "+-" and line[:3] not in ("---", "+++")]
    return "\n".join(line[0] + line[1:].strip() for line in lines)


def function_of(mutant: str) -> str:
    """``depth_table`` or ``EdgeSampler.layer_counts`` from mutmut's names
    ``dropedge_explorer.studies.cells.x_depth_table__mutmut_117`` and
    ``dropedge_core.samplers.xǁEdgeSamplerǁlayer_counts__mutmut_9``."""
    mangled = mutant.rpartition(".")[2].partition("__mutmut_")[0]
    if mangled.startswith("xǁ"):
        return ".".join(mangled[2:].split("ǁ"))
    return mangled[2:] if mangled.startswith("x_") else mangled


def judgement_key(function: str, change: str, occurrence: int = 1) -> str:
    """``FUNCTION HASH`` (``#N`` appended for the N-th mutant of one function making the
    same change, counted in source order: the only case the change alone cannot tell apart)."""
    digest = hashlib.sha256(change.encode("utf-8")).hexdigest()[:10]
    return f"{function} {digest}" + (f" #{occurrence}" if occurrence > 1 else "")


def keyed(changes: dict[str, str]) -> dict[str, tuple[str, str]]:
    """``{mutmut name: (key, change)}`` from ``{mutmut name: change}`` in mutmut's (source) order."""
    seen: dict[tuple[str, str], int] = {}
    out = {}
    for name, change in changes.items():
        fn = function_of(name)
        seen[fn, change] = seen.get((fn, change), 0) + 1
        out[name] = (judgement_key(fn, change, seen[fn, change]), change)
    return out


def source_hash(name: str, cfg: dict) -> str:
    """The sha256 of MODULE's source file: a record or a key cache holds for this text only."""
    return hashlib.sha256((REPO / cfg["modules"][name]["source"]).read_bytes()).hexdigest()[:16]


_GENERATE = r'''
import json, sys
from difflib import unified_diff
from pathlib import Path
import libcst as cst
from mutmut.mutation.file_mutation import mutate_file_contents
from mutmut.utils.format_utils import get_mutant_name, mangled_name_from_mutant_name
from mutmut.utils.format_utils import orig_function_and_class_names_from_key
src = sys.argv[1]  # relative: mutmut names a mutant after its module path
mutated = mutate_file_contents(src, Path(sys.argv[2]).read_text(encoding="utf-8"))
defs = {}  # parsed once: mutmut's get_diff_for_mutant(source=...) reparses the file per mutant
for node in cst.parse_module(mutated.code).body:
    body = node.body.body if isinstance(node, cst.ClassDef) else [node]
    defs.update({f.name.value: f for f in body if isinstance(f, cst.FunctionDef)})
def code(f, name):
    return cst.Module([f.with_changes(name=cst.Name(name))]).code.strip().split("\n")
out = {}
for short in mutated.mutant_names:
    short = short.rpartition(".")[2]
    orig = defs[mangled_name_from_mutant_name(short) + "__mutmut_orig"]
    name = orig_function_and_class_names_from_key(short)[0]
    out[get_mutant_name(Path(src), short)] = "\n".join(unified_diff(
        code(orig, name), code(defs[short], name), lineterm=""))
print(json.dumps(out))
'''


#: The two packages mutmut copies and mutates, as the workspace names them: the library's
#: folder library/ is linked as src/ there, because mutmut names a mutant after its file's
#: path with only ./, src/ or source/ stripped (under library/ its names would be
#: ``library.dropedge_core...`` while the tests import ``dropedge_core``); the tests find the
#: mutated copy first through pytest's ``pythonpath`` (pyproject.toml's, library/ made src/)
SOURCE_PATHS = ["src", "dropedge_explorer"]
#: workspace name -> the checkout's folder
LINKED = {"src": "library"}


def in_workspace(source: str) -> str:
    """A module's source path as the workspace has it (``library/`` is ``src/`` there)."""
    return "src/" + source.removeprefix("library/") if source.startswith("library/") else source


def shown_source(source: str) -> str:
    """A module's source as the score tables name it: its package and path
    (``dropedge_core/samplers.py``, ``dropedge_explorer/training/trainer.py``)."""
    return source.removeprefix("library/")


def current_mutants(name: str, cfg: dict) -> dict[str, tuple[str, str]]:
    """``{mutmut name: (key, change)}`` of every mutant mutmut makes of MODULE's source now.
    Generated without running a test (seconds), cached per source hash in the workspace."""
    # a workspace of its own: a run in progress must keep its module's workspace as it is
    ws = WORK / "keys"
    ws.mkdir(parents=True, exist_ok=True)
    settings = {"source_paths": SOURCE_PATHS, **cfg.get("mutmut", {})}
    text = "[tool.mutmut]\n" + "".join(f"{k} = {toml_value(v)}\n" for k, v in settings.items())
    (ws / "pyproject.toml").write_text(text, encoding="utf-8")
    cache = ws / f"{name}.json"
    digest = source_hash(name, cfg)
    if cache.is_file():
        cached = json.loads(cache.read_text(encoding="utf-8"))
        if cached.get("source") == digest:
            return {k: tuple(v) for k, v in cached["mutants"].items()}
    source = cfg["modules"][name]["source"]
    generate = [mutmut_python(), "-c", _GENERATE, in_workspace(source), str(REPO / source)]
    diffs = json.loads(subprocess.run(generate, cwd=ws, check=True, capture_output=True, text=True).stdout)
    mutants = keyed({k: change_text(d) for k, d in diffs.items()})
    cache.write_text(json.dumps({"source": digest, "mutants": mutants}, ensure_ascii=False), encoding="utf-8")
    return mutants


# ------------------------------------------------------------------ judgements and their check
def judgements(module: dict) -> dict[str, tuple[str, str, str]]:
    """``{key: (kind, change, why)}`` of a module's ``equivalent`` and ``out_of_reach`` tables."""
    return {key: (kind, entry["change"], entry["why"])
            for kind in KINDS for key, entry in module.get(kind, {}).items()}


def entry_problems(module: dict) -> list[str]:
    """Entries whose key does not hash their own ``change`` (edited by hand): they would
    judge some other mutant, or none."""
    problems = []
    for key, (_, change, _) in judgements(module).items():
        function, _, rest = key.partition(" ")
        occurrence = int(rest.partition("#")[2] or 1)
        if judgement_key(function, change, occurrence) != key:
            problems.append(f"{key}: the key is not the hash of its change {change!r}")
    return problems


def stale_judgements(judged: dict[str, tuple[str, str, str]], current: set[str]) -> list[str]:
    """The judged keys that name no current mutant (its code changed or went away: re-judge)."""
    return sorted(k for k in judged if k not in current)


def killed_judgements(judged: dict[str, tuple[str, str, str]], record: dict) -> list[str]:
    """Judged keys the record shows killed: a judgement must not excuse a mutant a test tells
    apart (only meaningful for a record of the current source)."""
    survivors = record.get("survivors", {})
    return sorted(k for k in judged if k not in survivors)


def check(names: list[str], cfg: dict) -> int:
    """Exit status 1, naming them, when a judgement names no current mutant, does not hash
    its change, or excuses a mutant the module's current record shows killed."""
    records, bad = load(RECORDS), 0
    for name in names:
        module = cfg["modules"][name]
        judged = judgements(module)
        problems = entry_problems(module)
        current = {key for key, _ in current_mutants(name, cfg).values()}
        problems += [f"{k}: names no current mutant (stale: re-judge) — {judged[k][2]}"
                     for k in stale_judgements(judged, current)]
        record = records.get(name, {})
        if record.get("source") == source_hash(name, cfg):
            problems += [f"{k}: killed in the recorded run: remove the judgement"
                         for k in killed_judgements(judged, record) if k in current]
        else:  # judgements of killed mutants show only against a run of this code
            what = "no record" if not record else "a record from before the records began" if record.get(
                "legacy") else "a record of other code"
            print(f"{name}: {what}: killed mutants' judgements unchecked (python tools/mutation.py {name})")
        for problem in problems:
            print(f"{name}: {problem}")
        bad += len(problems)
    print(f"check: {bad} problem(s) in {len(names)} module(s)")
    return 1 if bad else 0


# ------------------------------------------------------------------ records and counts
def run_record(name: str, cfg: dict) -> dict:
    """The record of MODULE's last mutmut run: totals, every mutant not killed by key with
    its status, the date, the commit and the source hash it was run on."""
    meta = WORK / name / "mutants" / (in_workspace(cfg["modules"][name]["source"]) + ".meta")
    if not meta.is_file():
        sys.exit(f"no results for {name!r} yet: run python tools/mutation.py {name}")
    # mutmut numbers the mutants of the code it ran on: after an edit they are other mutants
    if (REPO / cfg["modules"][name]["source"]).stat().st_mtime > meta.stat().st_mtime:
        sys.exit(f"{name}: its source changed after the last run: rerun python tools/mutation.py {name}")
    codes = json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"]
    mutants = current_mutants(name, cfg)
    status = {k: STATUS.get(code, "suspicious") for k, code in codes.items()}
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO,
                            capture_output=True, text=True).stdout.strip()
    return {"run": datetime.date.today().isoformat(), "commit": commit, "source": source_hash(name, cfg),
            "tests": cfg["modules"][name]["tests"],
            "mutants": len(codes), "killed": sum(s in ("killed", "timeout") for s in status.values()),
            "timeout": sum(s == "timeout" for s in status.values()),
            "survivors": dict(sorted((mutants[k][0], s) for k, s in status.items()
                                     if s not in ("killed", "timeout")))}


def counts(record: dict, module: dict) -> dict[str, int]:
    """A record's columns under the current judgements: a survivor judged equivalent or out
    of reach counts as such, a skipped or not checked one as such, any other as not killed.
    A record from before the records (``legacy``) carries its columns as they were."""
    if record.get("legacy"):
        return {k: record[k] for k in ("mutants", "killed", "timeout", "equivalent", "out_of_reach",
                                       "not_killed", "not_checked")}
    judged = judgements(module)
    out = {"mutants": record["mutants"], "killed": record["killed"], "timeout": record["timeout"],
           "equivalent": 0, "out_of_reach": 0, "not_killed": 0, "not_checked": 0, "skipped": 0}
    for key, status in record.get("survivors", {}).items():
        column = judged[key][0] if key in judged else {"not checked": "not_checked",
                                                       "skipped": "skipped"}.get(status, "not_killed")
        out[column] += 1
    return out


def score(c: dict[str, int]) -> tuple[float, float]:
    """killed / (mutants − equivalent − skipped), and the same without the out-of-reach ones."""
    judged = c["mutants"] - c["equivalent"] - c.get("skipped", 0)
    reachable = judged - c["out_of_reach"]
    return 100.0 * c["killed"] / max(judged, 1), 100.0 * c["killed"] / max(reachable, 1)


def when(name: str, record: dict, cfg: dict) -> str:
    """The run's date and commit, and whether the source has changed since (not rerun)."""
    if record.get("legacy"):
        return f"{record['run']}, before the records: **not rerun** since"
    now = "" if record["source"] == source_hash(name, cfg) else ": **source changed since, not rerun**"
    if record.get("tests", cfg["modules"][name]["tests"]) != cfg["modules"][name]["tests"]:
        now += ": **test selection changed since, not rerun**"
    return f"{record['run']} at {record['commit']}{now}"


def table(cfg: dict, records: dict, style: str) -> str:
    """The score table of the docs (``short`` for TESTING.md, ``long`` for TESTING_MUTATION.md)."""
    head = ["module", "mutants", "killed", "equivalent", "out of reach", "not killed", "not checked",
            "score: all / reachable", "run"]
    if style == "long":
        head[3:3] = ["(of which timeout)"]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, module in cfg["modules"].items():
        if name not in records:
            rows.append(f"| {shown_source(module['source'])} |" + " — |" * (len(head) - 2)
                        + " no record yet |")
            continue
        c = counts(records[name], module)
        all_, reach = score(c)
        cells = [shown_source(module["source"]), c["mutants"], c["killed"], c["equivalent"],
                 c["out_of_reach"], c["not_killed"], c["not_checked"], f"{all_:.1f}% / {reach:.1f}%",
                 when(name, records[name], cfg)]
        if style == "long":
            cells[3:3] = [c["timeout"]]
        rows.append("| " + " | ".join(str(x) for x in cells) + " |")
    return "\n".join(rows)


BEGIN = ("<!-- mutation-scores: generated by `python tools/mutation.py docs` "
         "from tools/mutation-records.toml -->")
END = "<!-- /mutation-scores -->"


def docs_text(text: str, block: str) -> str:
    """``text`` with the part between the markers replaced by ``block``."""
    pattern = re.compile(re.escape(BEGIN) + r"\n.*?\n" + re.escape(END), re.S)
    if not pattern.search(text):
        raise ValueError("no mutation-scores markers")
    return pattern.sub(lambda _: f"{BEGIN}\n{block}\n{END}", text)


def write_docs(cfg: dict) -> None:
    """Rewrite both docs' score tables from the records and the current judgements."""
    records = load(RECORDS)
    for doc, style in DOCS.items():
        path = REPO / "docs" / doc
        text = docs_text(path.read_text(encoding="utf-8"), table(cfg, records, style))
        path.write_text(text, encoding="utf-8")


def dump_records(records: dict) -> str:
    """The records as TOML: one table per module, its survivors as a sub-table."""
    lines = ["# Written by `python tools/mutation.py MODULE record` after each run: do not edit.",
             "# survivors: every mutant not killed, by judgement key (tools/mutation.toml),",
             "# with mutmut's status."]
    for name, record in records.items():
        lines += ["", f"[{name}]"]
        lines += [f"{k} = {toml_value(v)}" for k, v in record.items() if k != "survivors"]
        if "survivors" in record:
            lines += ["", f"[{name}.survivors]"]
            lines += [f"{toml_value(k)} = {toml_value(v)}" for k, v in record["survivors"].items()]
    return "\n".join(lines) + "\n"


def record(name: str, cfg: dict) -> None:
    """Keep MODULE's last run in the records and rewrite the docs' tables."""
    records = load(RECORDS)
    records[name] = run_record(name, cfg)
    RECORDS.write_text(dump_records(records), encoding="utf-8")
    write_docs(cfg)


# ------------------------------------------------------------------ mutmut
def real_folder(ws: Path, folder: Path) -> None:
    """Make ``ws / folder`` a real folder (each level of it) holding links to the checkout's
    entries, where it was a link to the checkout's folder: a file then written there stays in
    the workspace."""
    here = ws
    for part in folder.parts:
        here = here / part
        if here.is_symlink():
            target = here.resolve()
            here.unlink()
            here.mkdir()
            for f in target.iterdir():
                if f.name != "__pycache__":
                    (here / f.name).symlink_to(f)
        elif not here.exists():
            here.mkdir()


def workspace(name: str, cfg: dict) -> Path:
    """``.mutation/NAME/``: links to the package and the tests, and a pyproject.toml that
    configures mutmut for this module only (mutmut reads its settings from the cwd)."""
    module = cfg["modules"][name]
    # the module's follow-up file (mutation.toml's `follow_up`, named by what it tests) is
    # always in the selection (an empty stand-in until it exists): mutmut starts over when the
    # selection changes, but keeps its verdicts when only the tests do, so `retest` can rerun
    # the survivors against new tests
    core = Path(module.get("follow_up", f"tests/test_follow_up_{name}.py"))
    tests = list(dict.fromkeys([*module["tests"], str(core)]))
    ws = WORK / name
    ws.mkdir(parents=True, exist_ok=True)
    for part in (*SOURCE_PATHS, *cfg.get("mutmut", {}).get("also_copy", [])):
        link = ws / part
        if not link.is_symlink():
            link.symlink_to(REPO / LINKED.get(part, part))
    tests_dir = ws / "tests"  # links to the checkout's test files and folders, refreshed every call
    if tests_dir.is_symlink():
        tests_dir.unlink()
    shutil.rmtree(tests_dir, ignore_errors=True)
    tests_dir.mkdir()
    for f in (REPO / "tests").iterdir():
        if f.name != "__pycache__":
            (tests_dir / f.name).symlink_to(f)
    if not (REPO / core).exists():  # written in the workspace only, never through a link into the checkout
        real_folder(ws, core.parent)
        (ws / core).write_text('"""Stand-in: no core tests yet."""\n', encoding="utf-8")
    settings = {"source_paths": SOURCE_PATHS, "only_mutate": [in_workspace(module["source"])],
                "pytest_add_cli_args_test_selection": tests, **cfg.get("mutmut", {})}
    with open(REPO / "pyproject.toml", "rb") as f:
        pytest_ini = tomllib.load(f)["tool"]["pytest"]["ini_options"]
    lines = ["# generated by tools/mutation.py from tools/mutation.toml: edit that file", "[tool.mutmut]"]
    lines += [f"{k} = {toml_value(v)}" for k, v in settings.items()]
    lines += ["", "[tool.pytest.ini_options]"]
    as_linked = {folder: name for name, folder in LINKED.items()}
    pytest_ini["pythonpath"] = [as_linked.get(p, p) for p in pytest_ini.get("pythonpath", [])]
    lines += [f"{k} = {toml_value(v)}" for k, v in pytest_ini.items() if k != "testpaths"]
    (ws / "pyproject.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return ws


def mutmut() -> str:
    """The mutmut executable (``$MUTMUT``, the project's ``.venv-mutation``, or PATH's)."""
    local = REPO / ".venv-mutation" / "bin" / "mutmut"
    exe = os.environ.get("MUTMUT") or (str(local) if local.is_file() else shutil.which("mutmut"))
    if not exe:
        sys.exit("mutmut not found: pip install -r requirements-mutation.txt (or set MUTMUT)")
    return exe


def mutmut_python() -> str:
    """The interpreter mutmut is installed in (its libraries generate the keys)."""
    python = Path(mutmut()).resolve().parent / "python"
    return str(python) if python.is_file() else sys.executable


def summary(name: str, cfg: dict) -> dict:
    """Print MODULE's counts and score from its last run under the current judgements, and
    every unjudged survivor by key and mutmut name; return the survivors' mutmut names."""
    rec = run_record(name, cfg)
    c = counts(rec, cfg["modules"][name])
    all_, reach = score(c)
    print(f"{name}: " + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in c.items()))
    print(f"score (killed + timeout) / non-equivalent: {all_:.1f}%; "
          f"without the out-of-reach ones: {reach:.1f}%")
    judged = judgements(cfg["modules"][name])
    by_key = {key: mutant for mutant, (key, _) in current_mutants(name, cfg).items()}
    open_ = [(key, status) for key, status in rec["survivors"].items() if key not in judged]
    for key, status in open_:
        print(f"    {status}: {key}  ({by_key[key]})")
    return {"counts": c, "survivors": [by_key[k] for k, _ in open_]}


def survivors(name: str, cfg: dict) -> None:
    """Key, change and reason-to-be of every unjudged survivor, for judging it."""
    mutants = current_mutants(name, cfg)
    for mutant in summary(name, cfg)["survivors"]:
        key, change = mutants[mutant]
        print(f"\n# {key}  ({mutant})\n{change}")


def main(argv: list[str]) -> int:
    """The command line (see the module's docstring)."""
    cfg = load()
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    if argv[0] == "list":
        for name, module in cfg["modules"].items():
            print(f"{name:14s} {module['source']}  <- {' '.join(module['tests'])}")
        return 0
    if argv[0] == "docs":
        write_docs(cfg)
        return 0
    if argv[0] == "check":
        return check(list(cfg["modules"]), cfg)
    name, rest = argv[0], argv[1:] or ["run"]
    if name not in cfg["modules"]:
        print(f"unknown module {name!r}; one of: {', '.join(cfg['modules'])}", file=sys.stderr)
        return 2
    if rest[0] in ("summary", "survivors", "record", "check"):
        if rest[0] == "check":
            return check([name], cfg)
        {"summary": summary, "survivors": survivors, "record": record}[rest[0]](name, cfg)
        return 0
    ws = workspace(name, cfg)
    if rest[0] == "retest":  # the survivors again, e.g. after new tests were added
        rest = ["run", *summary(name, cfg)["survivors"]]
    env = dict(os.environ)
    data = REPO.parent / "shared" / "data"  # tests/conftest.py looks beside the checkout, not the workspace
    if "DROPEDGE_DATA" not in env and data.is_dir():
        env["DROPEDGE_DATA"] = str(data)
    env.setdefault("OMP_NUM_THREADS", "1")
    cmd = [mutmut(), *rest]
    if rest[0] == "run":
        cmd[2:2] = ["--max-children", env.get("MUTATION_JOBS", "1")]
    code = subprocess.call(cmd, cwd=ws, env=env)
    if rest[0] == "run" and code == 0:
        record(name, cfg)
        summary(name, cfg)
    return code


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except BrokenPipeError:  # `... summary | head`
        sys.exit(0)
