"""Splits Spider train's 137 databases into five fixed folds (issue 55), written to
bench/spider-folds.json: {"folds": {"<db>": 1..5}}. A database's fold is the SHA-256 of its
name modulo five, so the split depends on nothing but the names. Folds 1-4 are studied; fold 5
is the unseen check: run it (`portico eval --folds bench/spider-folds.json --unseen-fold 5`
prints only its totals), never read its questions or its failures.

    python3 bench/spider_folds.py ../shared/datasets/spider-train
"""

import hashlib
import json
import sys
from pathlib import Path

folder = Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/datasets/spider-train")
names = sorted(p.stem for p in folder.glob("*.sqlite"))
folds = {name: int(hashlib.sha256(name.encode()).hexdigest(), 16) % 5 + 1 for name in names}
out = Path(__file__).resolve().parent / "spider-folds.json"
out.write_text(json.dumps({"unseen": 5, "folds": folds}, indent=1, sort_keys=True) + "\n")
counts = {f: sum(1 for v in folds.values() if v == f) for f in range(1, 6)}
print(f"{len(names)} databases: " + ", ".join(f"fold {f}: {n}" for f, n in counts.items()))
