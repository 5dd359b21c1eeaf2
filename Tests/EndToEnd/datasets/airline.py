"""A fourth database for the built-in engine, written after the third was passing: an airline in
plain lower-case singular names, with the traps real schemas have — two keys from one table to
another (a flight's source and destination airports), a boolean column, a year kept in a column not
called "year", dates of birth instead of ages. The questions in `airline.jsonl` were written before
the engine was run on them; some of them should be refused."""

import random
import sqlite3
from datetime import date, timedelta
from pathlib import Path

QUESTIONS = Path(__file__).with_name("airline.jsonl")

AIRPORTS = [
    ("FRA", "Frankfurt Airport", "Frankfurt", "Germany", 364), ("MUC", "Munich Airport", "Munich", "Germany", 1487),
    ("CDG", "Charles de Gaulle Airport", "Paris", "France", 392), ("NRT", "Narita International Airport", "Tokyo", "Japan", 141),
    ("HND", "Haneda Airport", "Tokyo", "Japan", 35), ("DEN", "Denver International Airport", "Denver", "United States", 5431),
    ("JFK", "John F. Kennedy International Airport", "New York", "United States", 13), ("YYC", "Calgary International Airport", "Calgary", "Canada", 3557),
    ("LIS", "Lisbon Airport", "Lisbon", "Portugal", 374), ("MEX", "Mexico City International Airport", "Mexico City", "Mexico", 7316),
]
AIRLINES = [
    ("Lufthansa", "Germany", 1953, 290, 0), ("Air France", "France", 1933, 220, 0), ("Japan Airlines", "Japan", 1951, 160, 0),
    ("Condor", "Germany", 1955, 57, 1), ("WestJet", "Canada", 1996, 180, 1), ("TAP Air Portugal", "Portugal", 1945, 99, 0),
    ("Volaris", "Mexico", 2005, 123, 1), ("Frontier Airlines", "United States", 1994, 136, 1), ("Skyward Express", "Germany", 2012, 8, 1),
]
FLIGHT_WEIGHTS = [30, 22, 14, 9, 17, 6, 11, 19, 0]  # the last airline has no flights
FIRST = ["Anna", "Ben", "Carla", "David", "Elif", "Farid", "Greta", "Hugo", "Ines", "Jonas", "Keiko", "Luis", "Mona", "Nils",
         "Olga", "Pedro", "Rita", "Sven", "Tara", "Umar", "Vera", "Wim", "Xenia", "Yann", "Zoe", "Aiko", "Bruno", "Amir"]
LAST = ["Becker", "Dupont", "Sato", "Silva", "Garcia", "Novak", "Larsen", "Moreau", "Costa", "Ito", "Weber", "Lopez", "Smith",
        "Tremblay", "Kowalski", "Haddad", "Okoro", "Fischer", "Russo", "Kim"]
NATIONALITIES = ["Germany", "France", "Japan", "Canada", "Portugal", "Mexico", "United States", "Brazil", "Italy"]
CLASSES = ["Economy", "Business", "First"]


def build(path: str) -> None:
    rng = random.Random(20261124)
    db = sqlite3.connect(path)
    db.executescript("""
        CREATE TABLE airport (code TEXT PRIMARY KEY, name TEXT, city TEXT, country TEXT, elevation INTEGER);
        CREATE TABLE airline (airline_id INTEGER PRIMARY KEY, name TEXT, country TEXT, founded INTEGER, fleet_size INTEGER,
            is_low_cost BOOLEAN);
        CREATE TABLE flight (flight_id INTEGER PRIMARY KEY, flight_no TEXT, airline_id INTEGER REFERENCES airline(airline_id),
            source_airport TEXT REFERENCES airport(code), dest_airport TEXT REFERENCES airport(code), departure DATE,
            distance INTEGER, price REAL);
        CREATE TABLE passenger (passenger_id INTEGER PRIMARY KEY, first_name TEXT, last_name TEXT, nationality TEXT, birth_date DATE);
        CREATE TABLE booking (booking_id INTEGER PRIMARY KEY, passenger_id INTEGER REFERENCES passenger(passenger_id),
            flight_id INTEGER REFERENCES flight(flight_id), seat_class TEXT, booked_on DATE, fare REAL);
    """)
    db.executemany("INSERT INTO airport VALUES (?, ?, ?, ?, ?)", AIRPORTS)
    db.executemany("INSERT INTO airline (name, country, founded, fleet_size, is_low_cost) VALUES (?, ?, ?, ?, ?)", AIRLINES)
    flights = []
    codes = [a[0] for a in AIRPORTS]
    for n in range(150):
        airline = rng.choices(range(1, len(AIRLINES) + 1), weights=FLIGHT_WEIGHTS)[0]
        source, dest = rng.sample(codes, 2)
        day = date(2023, 1, 1) + timedelta(days=rng.randrange(0, 2 * 365))
        distance = rng.randrange(300, 11000)
        flights.append((f"{AIRLINES[airline - 1][0][:2].upper()}{100 + n}", airline, source, dest, day.isoformat(), distance,
                        round(60 + distance * (0.05 + rng.random() * 0.1), 2)))
    db.executemany("INSERT INTO flight (flight_no, airline_id, source_airport, dest_airport, departure, distance, price) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?)", flights)
    passengers = []
    for _ in range(120):
        born = date(1940, 1, 1) + timedelta(days=rng.randrange(0, 65 * 365))
        passengers.append((rng.choice(FIRST), rng.choice(LAST), rng.choice(NATIONALITIES), born.isoformat()))
    db.executemany("INSERT INTO passenger (first_name, last_name, nationality, birth_date) VALUES (?, ?, ?, ?)", passengers)
    bookings = []
    for _ in range(500):
        flight = rng.randrange(1, len(flights) + 1)
        seat = rng.choices(CLASSES, weights=[80, 15, 5])[0]
        day = date(2023, 1, 1) + timedelta(days=rng.randrange(0, 2 * 365))
        fare = round(flights[flight - 1][6] * {"Economy": 1, "Business": 2.5, "First": 4}[seat] * (0.8 + rng.random() * 0.4), 2)
        bookings.append((rng.randrange(1, 111), flight, seat, day.isoformat(), fare))
    db.executemany("INSERT INTO booking (passenger_id, flight_id, seat_class, booked_on, fare) VALUES (?, ?, ?, ?, ?)", bookings)
    db.commit()
    db.close()
