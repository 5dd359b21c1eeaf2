"""A sixth database for the built-in engine, written after the fifth was passing: a company's
staff in snake_case plural tables with text keys (`dept_no`), a manager kept as a key to the same
table, and a linking table without a key of its own. The questions in `company.jsonl` were written
before the engine was run on them."""

import random
import sqlite3
from datetime import date, timedelta
from pathlib import Path

QUESTIONS = Path(__file__).with_name("company.jsonl")

DEPARTMENTS = [("d01", "Engineering", "Berlin"), ("d02", "Sales", "Madrid"), ("d03", "Research", "Berlin"), ("d04", "Finance", "Vienna"),
               ("d05", "Support", "Porto")]
HEADCOUNT = [26, 17, 12, 7, 4]
FIRST_F = ["Anna", "Laura", "Sofia", "Marta", "Julia", "Elena", "Nina", "Clara", "Eva", "Lea"]
FIRST_M = ["Jonas", "Pablo", "Marco", "Lukas", "Tomas", "Felix", "Hugo", "Ivan", "Oskar", "Rui"]
LAST = ["Weber", "Garcia", "Rossi", "Novak", "Silva", "Berger", "Lopez", "Huber", "Costa", "Meyer", "Ruiz", "Wolf", "Keller", "Santos"]
PROJECTS = [("Atlas", 250_000, "d01"), ("Beacon", 90_000, "d01"), ("Cobalt", 175_000, "d03"), ("Delta", 60_000, "d02"), ("Ember", 320_000, "d03"),
            ("Fjord", 45_000, "d04"), ("Granite", 130_000, "d01"), ("Harbor", 80_000, "d02"), ("Iris", 210_000, "d03")]
ROLES = ["Lead", "Developer", "Analyst", "Reviewer"]


def build(path: str) -> None:
    rng = random.Random(20261126)
    db = sqlite3.connect(path)
    db.executescript("""
        CREATE TABLE departments (dept_no TEXT PRIMARY KEY, dept_name TEXT, location TEXT);
        CREATE TABLE employees (emp_no INTEGER PRIMARY KEY, first_name TEXT, last_name TEXT, gender TEXT, hire_date DATE,
            dept_no TEXT REFERENCES departments(dept_no), salary REAL, manager_no INTEGER REFERENCES employees(emp_no));
        CREATE TABLE projects (project_id INTEGER PRIMARY KEY, title TEXT, budget REAL, dept_no TEXT REFERENCES departments(dept_no),
            start_date DATE);
        CREATE TABLE assignments (emp_no INTEGER REFERENCES employees(emp_no), project_id INTEGER REFERENCES projects(project_id),
            hours INTEGER, role TEXT);
    """)
    db.executemany("INSERT INTO departments VALUES (?, ?, ?)", DEPARTMENTS)
    employees = []
    for (dept, _, _), count in zip(DEPARTMENTS, HEADCOUNT):
        head = len(employees) + 1
        for n in range(count):
            female = rng.random() < 0.5
            hired = date(2010, 1, 1) + timedelta(days=rng.randrange(0, 14 * 365))
            employees.append((rng.choice(FIRST_F if female else FIRST_M), rng.choice(LAST), "Female" if female else "Male", hired.isoformat(), dept,
                              round(38_000 + rng.random() * 70_000, 2), None if n == 0 else head))
    db.executemany("INSERT INTO employees (first_name, last_name, gender, hire_date, dept_no, salary, manager_no) VALUES (?, ?, ?, ?, ?, ?, ?)",
                   employees)
    projects = [(title, budget, dept, (date(2021, 1, 1) + timedelta(days=rng.randrange(0, 4 * 365))).isoformat()) for title, budget, dept in PROJECTS]
    db.executemany("INSERT INTO projects (title, budget, dept_no, start_date) VALUES (?, ?, ?, ?)", projects)
    assignments = set()
    for _ in range(120):
        emp = rng.randrange(1, len(employees) - 5)  # the last few employees work on no project
        project = rng.randrange(1, len(PROJECTS) + 1)
        if (emp, project) in assignments:
            continue
        assignments.add((emp, project))
        db.execute("INSERT INTO assignments VALUES (?, ?, ?, ?)", (emp, project, rng.randrange(5, 400), rng.choice(ROLES)))
    db.commit()
    db.close()
