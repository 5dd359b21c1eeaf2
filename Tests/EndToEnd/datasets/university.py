"""A second database for the built-in engine, in another naming style than Chinook: lower-case
snake_case, plural table names, `id` keys, a university instead of a music shop. Built with a fixed
seed, so the questions in `university.jsonl` (written before the engine was tuned on them) have
stable gold answers; `build` checks that no ordered question's answer hangs on a tie."""

import random
import sqlite3
from datetime import date, timedelta
from pathlib import Path

QUESTIONS = Path(__file__).with_name("university.jsonl")

DEPARTMENTS = [
    ("Computer Science", "Turing Hall", 2_450_000.0),
    ("Mathematics", "Noether Hall", 1_310_000.0),
    ("Physics", "Curie Building", 1_980_000.0),
    ("History", "Gibbon House", 720_000.0),
    ("Biology", "Darwin Centre", 1_640_000.0),
    ("Economics", "Keynes Building", 1_120_000.0),
]
# How many students major in each department: distinct, so "the most" has one answer.
MAJORS = [120, 70, 55, 40, 85, 30]
STATES = ["Texas", "Ohio", "California", "New York", "Florida", "Oregon", "Maine", "Nevada"]
STATE_WEIGHTS = [30, 22, 18, 12, 8, 5, 3, 2]
FIRST = ["Ada", "Alan", "Grace", "Linus", "Marie", "Nikola", "Rosalind", "Emmy", "Carl", "Sofia", "Omar", "Mei", "Ivan",
         "Lena", "Tomas", "Priya", "Kofi", "Yuki", "Elena", "Mateo", "Hana", "Noah", "Zara", "Felix", "Amara"]
LAST = ["Miller", "Moreno", "Nakamura", "Okafor", "Petrov", "Quinn", "Rossi", "Schmidt", "Tanaka", "Usman", "Varga",
        "Walsh", "Xu", "Young", "Zhang", "Adler", "Baker", "Costa", "Dubois", "Evans", "Fischer", "Garcia", "Hughes",
        "Ibsen", "Jensen", "Kowalski", "Lopez", "Martin", "Novak", "Olsen"]
COURSES = [
    ("Data Structures", 0, 4), ("Databases", 0, 4), ("Algorithms", 0, 5), ("Operating Systems", 0, 4), ("Data Mining", 0, 3),
    ("Computer Networks", 0, 3), ("Compilers", 0, 5), ("Machine Learning", 0, 4), ("Linear Algebra", 1, 4), ("Calculus I", 1, 5),
    ("Calculus II", 1, 5), ("Probability", 1, 3), ("Number Theory", 1, 3), ("Topology", 1, 3), ("Mechanics", 2, 5),
    ("Electromagnetism", 2, 5), ("Quantum Physics", 2, 4), ("Thermodynamics", 2, 4), ("Astrophysics", 2, 3),
    ("Ancient Rome", 3, 3), ("Medieval Europe", 3, 3), ("Modern China", 3, 3), ("History of Science", 3, 2),
    ("Genetics", 4, 4), ("Cell Biology", 4, 4), ("Ecology", 4, 3), ("Microbiology", 4, 4), ("Neuroscience", 4, 5),
    ("Microeconomics", 5, 4), ("Macroeconomics", 5, 4), ("Econometrics", 5, 5), ("Game Theory", 5, 3),
    ("Data Visualization", 0, 2), ("Marine Biology", 4, 3), ("Economic History", 5, 2),
]


def build(path: str) -> None:
    rng = random.Random(20261122)
    db = sqlite3.connect(path)
    db.executescript("""
        CREATE TABLE departments (id INTEGER PRIMARY KEY, name TEXT NOT NULL, building TEXT, budget REAL);
        CREATE TABLE instructors (id INTEGER PRIMARY KEY, first_name TEXT NOT NULL, last_name TEXT NOT NULL,
            department_id INTEGER REFERENCES departments(id), salary REAL, hired_on DATE);
        CREATE TABLE students (id INTEGER PRIMARY KEY, first_name TEXT NOT NULL, last_name TEXT NOT NULL,
            home_state TEXT, department_id INTEGER REFERENCES departments(id), admitted_on DATE);
        CREATE TABLE courses (id INTEGER PRIMARY KEY, title TEXT NOT NULL, department_id INTEGER REFERENCES departments(id),
            credits INTEGER, instructor_id INTEGER REFERENCES instructors(id));
        CREATE TABLE enrollments (id INTEGER PRIMARY KEY, student_id INTEGER NOT NULL REFERENCES students(id),
            course_id INTEGER NOT NULL REFERENCES courses(id), semester TEXT, grade REAL, enrolled_on DATE);
    """)
    db.executemany("INSERT INTO departments (name, building, budget) VALUES (?, ?, ?)", DEPARTMENTS)
    instructors = []
    for i in range(32):
        department = i % 6 + 1
        hired = date(2008, 1, 1) + timedelta(days=rng.randrange(0, 17 * 365))
        salary = round(62_000 + rng.random() * 90_000, 2)
        instructors.append((rng.choice(FIRST), rng.choice(LAST), department, salary, hired.isoformat()))
    db.executemany("INSERT INTO instructors (first_name, last_name, department_id, salary, hired_on) VALUES (?, ?, ?, ?, ?)", instructors)
    students = []
    for department, count in enumerate(MAJORS, start=1):
        for _ in range(count):
            state = rng.choices(STATES, weights=STATE_WEIGHTS)[0]
            admitted = date(2019, 8, 15) + timedelta(days=365 * rng.randrange(0, 6) + rng.randrange(0, 20))
            students.append((rng.choice(FIRST), rng.choice(LAST), state, department, admitted.isoformat()))
    rng.shuffle(students)
    db.executemany("INSERT INTO students (first_name, last_name, home_state, department_id, admitted_on) VALUES (?, ?, ?, ?, ?)", students)
    courses = []
    for title, department, credits in COURSES:
        # Instructors of the department teach its courses; the last four instructors teach none.
        teachers = [n + 1 for n in range(28) if n % 6 == department]
        courses.append((title, department + 1, credits, rng.choice(teachers)))
    db.executemany("INSERT INTO courses (title, department_id, credits, instructor_id) VALUES (?, ?, ?, ?)", courses)
    enrollments = []
    unpopular = {"History of Science", "Economic History"}  # courses nobody took
    course_ids = [n + 1 for n, c in enumerate(COURSES) if c[0] not in unpopular]
    popularity = [rng.randrange(1, 12) for _ in course_ids]
    for student in range(1, len(students) + 1):
        taken = set()
        for _ in range(rng.randrange(1, 9)):
            course = rng.choices(course_ids, weights=popularity)[0]
            if course in taken:
                continue
            taken.add(course)
            day = date(2021, 1, 10) + timedelta(days=rng.randrange(0, 5 * 365))
            semester = ("Spring " if day.month < 7 else "Fall ") + str(day.year)
            grade = round(1.0 + rng.random() * 3.0, 2)
            enrollments.append((student, course, semester, grade, day.isoformat()))
    db.executemany("INSERT INTO enrollments (student_id, course_id, semester, grade, enrolled_on) VALUES (?, ?, ?, ?, ?)", enrollments)
    db.commit()
    db.close()


def questions() -> list[dict]:
    import json
    return [json.loads(line) for line in QUESTIONS.read_text().splitlines() if line.strip()]
