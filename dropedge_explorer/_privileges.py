"""What a PostgreSQL role may do in a database, read from the catalog only: what
:func:`dropedge_explorer.databases.inspect` keeps as ``Contents.grants``, and
:func:`missing_privilege`, the one line of what a given use lacks (``CREATE`` on the
schema for a table to be made, ownership for a table to be altered, the four row
privileges and ``USAGE`` on serial ids' sequences for the tables there).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import sqlalchemy as sa

if TYPE_CHECKING:  # the type only: databases imports this module
    from dropedge_explorer.databases import Contents

#: What writing rows takes on each table a store or storage writes (no ALTER, no CREATE).
ROW_PRIVILEGES = ("SELECT", "INSERT", "UPDATE", "DELETE")


@dataclass(frozen=True)
class Grants:
    """What the session's role may do in a server database, read from the catalog (the
    schema new tables go to: ``current_schema()``, where :func:`inspect` looks).

    Attributes:
        role: the session's role; ``schema``: the schema (``None``: the search path names
            none that exists).
        usage: ``USAGE`` on the schema; ``create``: ``CREATE`` on it (to create tables).
        lacking: per table, the :data:`ROW_PRIVILEGES` the role lacks.
        owners: per table, its owner; ``owned``: the tables the role may ``ALTER`` (it owns
            them or has the privileges of their owner).
        sequences: per table, its sequences (serial ids) without ``USAGE`` (no ``INSERT``).
    """

    role: str
    schema: str | None
    usage: bool
    create: bool
    lacking: dict[str, tuple[str, ...]]
    owners: dict[str, str]
    owned: frozenset[str]
    sequences: dict[str, tuple[str, ...]]


def server_writable(conn: sa.Connection, grants: Grants) -> bool:
    """Not a standby, not read-only by default, and allowed to create tables or to write
    every one there is (:func:`missing_privilege` says what a given use lacks)."""
    standby, read_only = conn.exec_driver_sql(
        "SELECT pg_is_in_recovery(), current_setting('default_transaction_read_only') = 'on'").one()
    write = bool(grants.lacking) and not any(grants.lacking.values())
    return bool(not standby and not read_only and grants.usage and (grants.create or write))


def server_grants(conn: sa.Connection) -> Grants:
    """The role's privileges in the current schema, from the catalog only. Each privilege is
    asked alone: ``has_table_privilege(t, 'INSERT,UPDATE')`` is true when *any* is held."""
    role, schema, usage, create = conn.exec_driver_sql(
        "SELECT current_user, current_schema(), has_schema_privilege(current_schema(), 'USAGE'), "
        "has_schema_privilege(current_schema(), 'CREATE')").one()
    asks = ", ".join(f"has_table_privilege(c.oid, '{p}')" for p in ROW_PRIVILEGES)
    tables = conn.exec_driver_sql(
        f"SELECT c.relname, pg_get_userbyid(c.relowner), pg_has_role(c.relowner, 'USAGE'), {asks} "
        "FROM pg_class c WHERE c.relnamespace = to_regnamespace(current_schema()) "
        "AND c.relkind IN ('r', 'p')").all()
    sequences: dict[str, tuple[str, ...]] = {}
    for table, sequence in conn.exec_driver_sql(  # serial and identity columns' sequences
            "SELECT t.relname, s.relname FROM pg_class s JOIN pg_depend d ON d.objid = s.oid "
            "AND d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass "
            "JOIN pg_class t ON t.oid = d.refobjid WHERE s.relkind = 'S' "
            "AND t.relnamespace = to_regnamespace(current_schema()) "
            "AND CASE WHEN s.relkind = 'S' THEN NOT has_sequence_privilege(s.oid, 'USAGE') END "
            "ORDER BY 1, 2").all():  # CASE: the planner may ask before it filters on relkind
        sequences[table] = (*sequences.get(table, ()), sequence)
    lacking = {t[0]: tuple(p for p, held in zip(ROW_PRIVILEGES, t[3:]) if not held) for t in tables}
    return Grants(role=role, schema=schema, usage=bool(usage), create=bool(create), lacking=lacking,
                  owners={t[0]: t[1] for t in tables}, owned=frozenset(t[0] for t in tables if t[2]),
                  sequences=sequences)


def missing_privilege(contents: Contents, tables: tuple[str, ...] | list[str],
                      alter: tuple[str, ...] | list[str] = ()) -> str | None:
    """What the role lacks to use a server database as a store that keeps ``tables``
    (created when missing: ``CREATE`` on the schema) and adds columns to those in ``alter``
    (ownership); the tables there need :data:`ROW_PRIVILEGES` (and ``USAGE`` on their
    sequences). ``None`` when nothing is lacking, and for a file (its mode says).

    Example: ``"CREATE on schema 'public' (to create the tables claims, runs)"``.
    """
    grants = contents.grants
    if grants is None:
        return None
    if grants.schema is None:
        return "a schema to create tables in (the search_path names none that exists)"
    if not grants.usage:
        return f"USAGE on schema {grants.schema!r}"
    absent = sorted(set(tables) - set(contents.tables))
    if absent and not grants.create:
        shown = ", ".join(absent[:4]) + (f", ... ({len(absent)} tables)" if len(absent) > 4 else "")
        return f"CREATE on schema {grants.schema!r} (to create the tables {shown})"
    unowned = sorted(set(alter) - grants.owned)
    if unowned:
        return (f"ownership of table {unowned[0]!r} (owned by {grants.owners.get(unowned[0])!r}; an "
                "upgrade adds columns to it)")
    for table in sorted(set(tables) & set(grants.lacking)):
        if grants.lacking[table]:
            return f"{', '.join(grants.lacking[table])} on table {table!r}"
        if grants.sequences.get(table):
            return f"USAGE on sequence {grants.sequences[table][0]!r} (ids of table {table!r})"
    return None


