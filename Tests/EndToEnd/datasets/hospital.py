"""A third database for the built-in engine, in the style of the Spider benchmark's schemas:
singular lower-case table names, `Capitalised_Snake` columns with `_ID` keys, year columns as
integers, a hospital instead of a shop or a university. Built with a fixed seed; the questions in
`hospital.jsonl` were written before the engine was run on them."""

import random
import sqlite3
from datetime import date, timedelta
from pathlib import Path

QUESTIONS = Path(__file__).with_name("hospital.jsonl")

WARDS = [("North Wing", 1, 24), ("South Wing", 1, 18), ("East Wing", 2, 30), ("West Wing", 2, 12), ("Garden Ward", 3, 20)]
SPECIALTIES = ["Cardiology", "Neurology", "Oncology", "Pediatrics", "Orthopedics", "Dermatology"]
SPECIALTY_COUNTS = [6, 4, 5, 3, 2, 1]  # distinct, so "the most" has one answer
CITIES = ["Boston", "Chicago", "Denver", "Seattle", "Austin", "Portland"]
CITY_WEIGHTS = [34, 22, 17, 12, 9, 6]
FIRST = ["James", "Mary", "John", "Linda", "Robert", "Susan", "Michael", "Karen", "David", "Nancy", "Joseph", "Lisa",
         "Thomas", "Betty", "Daniel", "Helen", "Paul", "Sandra", "Mark", "Donna", "Omar", "Aisha", "Wei", "Yuki"]
LAST = ["Smith", "Jones", "Brown", "Taylor", "Wilson", "Davies", "Evans", "Thomas", "Johnson", "Roberts", "Walker",
        "Wright", "Green", "Hall", "Wood", "Clarke", "Hughes", "Baker", "Turner", "Hill"]


def build(path: str) -> None:
    rng = random.Random(20261123)
    db = sqlite3.connect(path)
    db.executescript("""
        CREATE TABLE ward (Ward_ID INTEGER PRIMARY KEY, Name TEXT, Floor INTEGER, Beds INTEGER);
        CREATE TABLE doctor (Doctor_ID INTEGER PRIMARY KEY, Name TEXT, Specialty TEXT,
            Ward_ID INTEGER REFERENCES ward(Ward_ID), Salary REAL, Hire_Year INTEGER);
        CREATE TABLE patient (Patient_ID INTEGER PRIMARY KEY, Name TEXT, Gender TEXT, Age INTEGER, City TEXT);
        CREATE TABLE admission (Admission_ID INTEGER PRIMARY KEY, Patient_ID INTEGER REFERENCES patient(Patient_ID),
            Doctor_ID INTEGER REFERENCES doctor(Doctor_ID), Admit_Date TEXT, Days_Stayed INTEGER, Cost REAL);
    """)
    db.executemany("INSERT INTO ward (Name, Floor, Beds) VALUES (?, ?, ?)", WARDS)
    doctors, used = [], set()
    for specialty, count in zip(SPECIALTIES, SPECIALTY_COUNTS):
        for _ in range(count):
            while (name := f"Dr. {rng.choice(FIRST)} {rng.choice(LAST)}") in used:
                pass
            used.add(name)
            doctors.append((name, specialty, rng.randrange(1, 6), round(90_000 + rng.random() * 160_000, 2), rng.randrange(2005, 2025)))
    rng.shuffle(doctors)
    db.executemany("INSERT INTO doctor (Name, Specialty, Ward_ID, Salary, Hire_Year) VALUES (?, ?, ?, ?, ?)", doctors)
    patients = []
    for _ in range(160):
        patients.append((f"{rng.choice(FIRST)} {rng.choice(LAST)}", rng.choice(["Female", "Male"]), rng.randrange(1, 95),
                         rng.choices(CITIES, weights=CITY_WEIGHTS)[0]))
    db.executemany("INSERT INTO patient (Name, Gender, Age, City) VALUES (?, ?, ?, ?)", patients)
    admissions = []
    weights = [rng.randrange(1, 10) for _ in doctors]
    for _ in range(420):
        patient = rng.randrange(1, 141)  # the last 20 patients were never admitted
        doctor = rng.choices(range(1, len(doctors) + 1), weights=weights)[0]
        day = date(2022, 1, 1) + timedelta(days=rng.randrange(0, 3 * 365))
        stayed = rng.randrange(1, 15)
        admissions.append((patient, doctor, day.isoformat(), stayed, round(stayed * (800 + rng.random() * 1200), 2)))
    db.executemany("INSERT INTO admission (Patient_ID, Doctor_ID, Admit_Date, Days_Stayed, Cost) VALUES (?, ?, ?, ?, ?)", admissions)
    db.commit()
    db.close()
