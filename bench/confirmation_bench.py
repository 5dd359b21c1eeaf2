"""What a question before a destroy costs (issue 58): `resource_destroy` of one record, 2026-07-28 era, one client,
one call at a time, release build. Three ways, in turns of 100 calls: with `confirm: true` (no question, the
baseline); asked and confirmed (input-required, then the same call with the sealed state and the answer: two
requests); and the cost of the first half alone (the question). Each destroy removes a record created just before it,
outside the timing. Usage: confirmation_bench.py BINARY OUT_DIR (writes OUT_DIR/confirmation.json)."""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

from demo_server import demo_server

CAN_ASK = {"elicitation": {"form": {}}}
ROUNDS = 3
CALLS = 100


def main() -> None:
    binary, out = sys.argv[1], Path(sys.argv[2])
    with demo_server(binary, "portico-bench-confirm-") as server:

        def call(name: str, arguments: dict, **params) -> dict:
            return server.post("tools/call", {"name": name, "arguments": arguments, **params}, capabilities=CAN_ASK)[1]

        def create() -> int:
            return call("resource_create", {"resource": "Genre", "values": {"Name": "bench doomed"}})["structuredContent"]["data"]["GenreId"]

        yes = {"confirm": {"action": "accept", "content": {"confirm": True}}}
        times: dict[str, list[float]] = {"confirm_argument": [], "asked_and_confirmed": [], "question_only": []}
        for _ in range(ROUNDS):
            for _ in range(CALLS):
                target = {"resource": "Genre", "filterByTk": create()}
                start = time.perf_counter()
                done = call("resource_destroy", {**target, "confirm": True})
                times["confirm_argument"].append(time.perf_counter() - start)
                assert done["structuredContent"]["data"] == 1, done
            for _ in range(CALLS):
                target = {"resource": "Genre", "filterByTk": create()}
                start = time.perf_counter()
                asked = call("resource_destroy", target)
                middle = time.perf_counter()
                done = call("resource_destroy", target, requestState=asked["requestState"], inputResponses=yes)
                end = time.perf_counter()
                times["asked_and_confirmed"].append(end - start)
                times["question_only"].append(middle - start)
                assert done["structuredContent"]["data"] == 1, done
    figures = {name: {"median_ms": statistics.median(v) * 1000, "p90_ms": sorted(v)[int(len(v) * 0.9)] * 1000, "calls": len(v)}
               for name, v in times.items()}
    (out / "confirmation.json").write_text(json.dumps(figures, indent=2))
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
