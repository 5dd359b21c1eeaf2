"""A fifth database for the built-in engine, written after the fourth was passing: a web shop in
camelCase with plural PascalCase tables, a price kept twice (the product's list price and the price
paid on each order line), an order status, a stock flag. The questions in `shop.jsonl` were written
before the engine was run on them."""

import random
import sqlite3
from datetime import date, timedelta
from pathlib import Path

QUESTIONS = Path(__file__).with_name("shop.jsonl")

PRODUCTS = [
    ("Trail Shoes", "Footwear", 89.0, 1), ("Road Shoes", "Footwear", 119.0, 1), ("Hiking Boots", "Footwear", 159.0, 0),
    ("Rain Jacket", "Clothing", 129.0, 1), ("Fleece", "Clothing", 59.0, 1), ("Base Layer", "Clothing", 39.0, 1),
    ("Wool Socks", "Clothing", 15.0, 1), ("Headlamp", "Gear", 35.0, 1), ("Tent", "Gear", 329.0, 0), ("Sleeping Bag", "Gear", 189.0, 1),
    ("Water Filter", "Gear", 45.0, 1), ("Trekking Poles", "Gear", 79.0, 1), ("Energy Bars", "Food", 12.5, 1), ("Camp Stove", "Gear", 99.0, 1),
]
CITIES = ["Leeds", "Bristol", "Glasgow", "Cardiff", "Belfast", "York"]
CITY_WEIGHTS = [31, 24, 18, 13, 9, 5]
FIRST = ["Amelia", "Oliver", "Isla", "George", "Ava", "Harry", "Mia", "Jack", "Ivy", "Leo", "Freya", "Oscar", "Rosie", "Arthur"]
LAST = ["Clarke", "Patel", "Murphy", "Evans", "Khan", "Reid", "Lewis", "Bell", "Shaw", "Ward", "Kerr", "Doyle"]
STATUSES = ["delivered", "shipped", "cancelled", "pending"]


def build(path: str) -> None:
    rng = random.Random(20261125)
    db = sqlite3.connect(path)
    db.executescript("""
        CREATE TABLE Customers (customerId INTEGER PRIMARY KEY, fullName TEXT, email TEXT, city TEXT, signupDate DATE);
        CREATE TABLE Products (productId INTEGER PRIMARY KEY, productName TEXT, category TEXT, listPrice REAL, inStock BOOLEAN);
        CREATE TABLE Orders (orderId INTEGER PRIMARY KEY, customerId INTEGER REFERENCES Customers(customerId), orderDate DATE,
            status TEXT);
        CREATE TABLE OrderItems (orderItemId INTEGER PRIMARY KEY, orderId INTEGER REFERENCES Orders(orderId),
            productId INTEGER REFERENCES Products(productId), quantity INTEGER, unitPrice REAL);
    """)
    customers, names = [], set()
    for _ in range(90):
        while (name := f"{rng.choice(FIRST)} {rng.choice(LAST)}") in names:
            pass
        names.add(name)
        signup = date(2022, 1, 1) + timedelta(days=rng.randrange(0, 3 * 365))
        customers.append((name, name.lower().replace(" ", ".") + "@example.org", rng.choices(CITIES, weights=CITY_WEIGHTS)[0], signup.isoformat()))
    db.executemany("INSERT INTO Customers (fullName, email, city, signupDate) VALUES (?, ?, ?, ?)", customers)
    db.executemany("INSERT INTO Products (productName, category, listPrice, inStock) VALUES (?, ?, ?, ?)", PRODUCTS)
    orders, items = [], []
    for n in range(300):
        customer = rng.randrange(1, 81)  # the last ten customers never ordered
        day = date(2023, 1, 1) + timedelta(days=rng.randrange(0, 2 * 365))
        orders.append((customer, day.isoformat(), rng.choices(STATUSES, weights=[60, 20, 12, 8])[0]))
        for product in rng.sample([p for p in range(1, len(PRODUCTS) + 1) if p != 13], rng.randrange(1, 4)):  # nobody buys energy bars
            price = round(PRODUCTS[product - 1][2] * rng.choice([1.0, 1.0, 0.9, 0.8]), 2)
            items.append((n + 1, product, rng.randrange(1, 4), price))
    db.executemany("INSERT INTO Orders (customerId, orderDate, status) VALUES (?, ?, ?)", orders)
    db.executemany("INSERT INTO OrderItems (orderId, productId, quantity, unitPrice) VALUES (?, ?, ?, ?)", items)
    db.commit()
    db.close()
