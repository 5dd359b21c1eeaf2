"""A seventh database for the built-in engine, written for "the engine reads English": a
wholesaler's stock in a style no other set uses — names glued together in lower case
(`stockitem`, `unitprice`, `hourlyrate`, `qtyonhand`), common abbreviations (`qty`, `amt`, `dob`,
`no`, `lvl`, `whid`, `supp`) and keys named after them. The questions in `warehouse.jsonl` are in
everyday words ("vendors", "employees", "shipped", "date of birth") and were written before the
engine was run on them."""

import random
import sqlite3
from datetime import date, timedelta
from pathlib import Path

QUESTIONS = Path(__file__).with_name("warehouse.jsonl")

WAREHOUSES = [("North Depot", "Lyon", 42_000, "2009-04-01"), ("Harbour Store", "Marseille", 65_000, "2014-09-15"),
              ("East Hub", "Strasbourg", 28_000, "2017-03-20"), ("Central Stock", "Paris", 80_000, "2012-01-10"),
              ("South Yard", "Toulouse", 35_000, "2021-06-01")]
SUPPLIERS = [("Nordlicht GmbH", "Germany", "+49 30 5550101", "sales@nordlicht.example"),
             ("Velo Ricambi", "Italy", "+39 02 5550202", "ordini@veloricambi.example"),
             ("Atlantic Parts", "Portugal", "+351 21 5550303", "info@atlanticparts.example"),
             ("Rheinrad AG", "Germany", "+49 221 5550404", "kontakt@rheinrad.example"),
             ("Torino Cicli", "Italy", "+39 011 5550505", "vendite@torinocicli.example"),
             ("Iberia Bikes", "Spain", "+34 91 5550606", "hola@iberiabikes.example")]
ITEMS = [("Brake pads", "Brakes", 12.5, 1, 40), ("Disc rotor 160mm", "Brakes", 34.0, 4, 20), ("Chain lube 100ml", "Care", 7.9, 3, 60),
         ("Chain 11-speed", "Drivetrain", 41.0, 2, 25), ("Cassette 11-32", "Drivetrain", 68.0, 2, 15), ("Derailleur hanger", "Frame", 18.0, 5, 30),
         ("Inner tube 29in", "Wheels", 6.5, 1, 120), ("Tyre 29x2.2", "Wheels", 52.0, 4, 35), ("Spoke set", "Wheels", 24.0, 6, 20),
         ("Saddle Comfort", "Contact", 59.0, 5, 12), ("Handlebar tape", "Frame", 15.0, 2, 40), ("Pedals flat", "Contact", 45.0, 6, 18),
         ("Cleaning kit", "Care", 29.0, 3, 10), ("Torque wrench", "Tools", 89.0, 1, 5)]
DEPARTMENTS = ["Receiving", "Picking", "Dispatch", "Office"]
FIRST = ["Camille", "Louis", "Chloe", "Hugo", "Manon", "Lucas", "Ines", "Jules", "Lea", "Nathan", "Emma", "Theo", "Sarah", "Noah"]
LAST = ["Martin", "Bernard", "Dubois", "Thomas", "Robert", "Richard", "Petit", "Durand", "Leroy", "Moreau", "Simon", "Laurent"]


def build(path: str) -> None:
    rng = random.Random(20261127)
    db = sqlite3.connect(path)
    db.executescript("""
        CREATE TABLE warehouse (whid INTEGER PRIMARY KEY, whname TEXT, cityname TEXT, sqft INTEGER, opendate DATE);
        CREATE TABLE supplier (suppid INTEGER PRIMARY KEY, suppname TEXT, countryname TEXT, phoneno TEXT, contactemail TEXT);
        CREATE TABLE stockitem (itemno INTEGER PRIMARY KEY, itemdesc TEXT, categoryname TEXT, unitprice REAL,
            suppid INTEGER REFERENCES supplier(suppid), reorderlvl INTEGER);
        CREATE TABLE stocklevel (whid INTEGER REFERENCES warehouse(whid), itemno INTEGER REFERENCES stockitem(itemno),
            qtyonhand INTEGER, lastcountdate DATE);
        CREATE TABLE staffmember (staffno INTEGER PRIMARY KEY, fullname TEXT, dob DATE, deptname TEXT, hourlyrate REAL,
            whid INTEGER REFERENCES warehouse(whid));
        CREATE TABLE shipment (shipno INTEGER PRIMARY KEY, itemno INTEGER REFERENCES stockitem(itemno),
            whid INTEGER REFERENCES warehouse(whid), qty INTEGER, amt REAL, shipdate DATE);
    """)
    db.executemany("INSERT INTO warehouse (whname, cityname, sqft, opendate) VALUES (?, ?, ?, ?)", WAREHOUSES)
    db.executemany("INSERT INTO supplier (suppname, countryname, phoneno, contactemail) VALUES (?, ?, ?, ?)", SUPPLIERS)
    db.executemany("INSERT INTO stockitem (itemdesc, categoryname, unitprice, suppid, reorderlvl) VALUES (?, ?, ?, ?, ?)", ITEMS)
    for wh in range(1, len(WAREHOUSES) + 1):
        for item in range(1, len(ITEMS) + 1):
            if rng.random() < 0.8:
                counted = date(2026, 1, 1) + timedelta(days=rng.randrange(0, 300))
                db.execute("INSERT INTO stocklevel VALUES (?, ?, ?, ?)", (wh, item, rng.randrange(0, 400), counted.isoformat()))
    names = set()
    staff = []
    for n in range(40):
        while (name := f"{rng.choice(FIRST)} {rng.choice(LAST)}") in names:
            pass
        names.add(name)
        born = date(1962, 1, 1) + timedelta(days=rng.randrange(0, 40 * 365))
        staff.append((name, born.isoformat(), DEPARTMENTS[n % 4] if n < 36 else "Receiving", round(14 + rng.random() * 16, 2),
                      rng.randrange(1, len(WAREHOUSES) + 1)))
    db.executemany("INSERT INTO staffmember (fullname, dob, deptname, hourlyrate, whid) VALUES (?, ?, ?, ?, ?)", staff)
    shipped_items = list(range(1, len(ITEMS)))  # the torque wrench (the last item) is never shipped
    for _ in range(160):
        item = rng.choice(shipped_items)
        qty = rng.randrange(1, 50)
        day = date(2024, 1, 1) + timedelta(days=rng.randrange(0, 3 * 365))
        db.execute("INSERT INTO shipment (itemno, whid, qty, amt, shipdate) VALUES (?, ?, ?, ?, ?)",
                   (item, rng.randrange(1, len(WAREHOUSES) + 1), qty, round(qty * ITEMS[item - 1][2], 2), day.isoformat()))
    db.commit()
    db.close()
