"""Writes the Chinook sample as a MySQL / MariaDB script, from the SQLite script in ../shared/datasets/chinook/ (its
licence is there): the same tables, names and rows, MySQL's types and quoting, a comment on a table and on a column
(so that introspection of comments can be checked). Usage: python3 chinook_mysql.py [SOURCE] > out.sql, where SOURCE is
Chinook's SQLite script (the default) or a SQLite database file."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

# Types by declared SQLite type; lengths are kept.
TYPES = {"INTEGER": "INT", "NUMERIC": "DECIMAL(10,2)", "DATETIME": "DATETIME"}
COMMENTS = {
    ("Artist", None): "The artists whose albums are sold",
    ("Track", "Milliseconds"): "Length of the track in milliseconds",
}


def source_script(argv: list[str]) -> Path:
    if len(argv) > 1:
        return Path(argv[1])
    # The repository's sibling `shared` directory, wherever the clone is.
    return Path(__file__).resolve().parents[3].parent / "shared" / "datasets" / "chinook" / "Chinook_Sqlite.sql"


def mysql_type(declared: str) -> str:
    upper = declared.upper().replace(" ", "")
    if upper.startswith("NUMERIC("):
        return "DECIMAL" + upper[len("NUMERIC"):]
    if upper.startswith("NVARCHAR") or upper.startswith("VARCHAR"):
        return "VARCHAR" + upper[upper.index("("):] if "(" in upper else "VARCHAR(255)"
    return TYPES.get(upper, "TEXT")


def literal(value) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, (int, float)):
        return repr(value)
    # MySQL reads a backslash in a string as an escape, and a quote ends it.
    return "'" + str(value).replace("\\", "\\\\").replace("'", "''") + "'"


def open_source(path: Path) -> sqlite3.Connection:
    with path.open("rb") as f:
        if f.read(16) == b"SQLite format 3\x00":
            return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    # A script: built in memory, it is small.
    db = sqlite3.connect(":memory:")
    db.executescript(path.read_text(encoding="utf-8-sig"))
    return db


def main() -> None:
    db = open_source(source_script(sys.argv))
    out = sys.stdout
    out.write("SET NAMES utf8mb4;\nSET FOREIGN_KEY_CHECKS = 0;\n")
    tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")]
    for table in tables:
        columns = db.execute(f'PRAGMA table_info("{table}")').fetchall()
        keys = [c[1] for c in sorted(columns, key=lambda c: c[5]) if c[5] > 0]
        lines = []
        for _, name, declared, notnull, _, _ in columns:
            line = f"`{name}` {mysql_type(declared)}" + (" NOT NULL" if notnull or name in keys else "")
            if (table, name) in COMMENTS:
                line += " COMMENT " + literal(COMMENTS[(table, name)])
            lines.append(line)
        lines.append("PRIMARY KEY (" + ", ".join(f"`{k}`" for k in keys) + ")")
        # SQLite numbers the keys from the last declared; they are written in the order declared.
        for fk in sorted(db.execute(f'PRAGMA foreign_key_list("{table}")').fetchall(), key=lambda fk: -fk[0]):
            lines.append(f"FOREIGN KEY (`{fk[3]}`) REFERENCES `{fk[2]}` (`{fk[4]}`)")
        comment = COMMENTS.get((table, None))
        out.write(f"CREATE TABLE `{table}` (\n  " + ",\n  ".join(lines) + "\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4"
                  + (" COMMENT=" + literal(comment) if comment else "") + ";\n")
        rows = db.execute(f'SELECT * FROM "{table}"').fetchall()
        names = ", ".join(f"`{c[1]}`" for c in columns)
        for start in range(0, len(rows), 500):
            values = ",\n".join("(" + ", ".join(literal(v) for v in row) + ")" for row in rows[start:start + 500])
            out.write(f"INSERT INTO `{table}` ({names}) VALUES\n{values};\n")
    out.write("SET FOREIGN_KEY_CHECKS = 1;\n")


if __name__ == "__main__":
    main()
