"""A local server that speaks the OpenAI chat-completions wire protocol with scripted replies.

It stands for an external LLM API (the only fake the tests use): Portico sends it real HTTP
requests at `<base>/chat/completions`; each request is recorded, and the reply is whatever the
test's responder returns for the request's messages.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable


class FakeLLM:
    def __init__(self, responder: Callable[[list[dict]], str | tuple[int, dict]], key: str | None = None, model: str = "fake-sql-1"):
        self.responder = responder
        self.key = key
        self.model = model
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                fake.requests.append(body)
                fake.headers.append(dict(self.headers))
                if self.path.rstrip("/") != "/v1/chat/completions":
                    return self.send(404, {"error": {"message": f"no route {self.path}", "type": "invalid_request_error"}})
                if fake.key and self.headers.get("Authorization") != f"Bearer {fake.key}":
                    return self.send(401, {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error", "code": "invalid_api_key"}})
                answer = fake.responder(body["messages"])
                if isinstance(answer, tuple):
                    return self.send(*answer)
                self.send(200, {
                    "id": f"chatcmpl-{len(fake.requests)}", "object": "chat.completion", "created": int(time.time()), "model": body.get("model"),
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": answer}, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
                })

            def send(self, status: int, payload: dict):
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def last_user_message(self, index: int = -1) -> str:
        return [m for m in self.requests[index]["messages"] if m["role"] == "user"][-1]["content"]

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def question_of(messages: list[dict]) -> str:
    """The question being asked: the last user message that is a question (not a correction)."""
    for message in reversed(messages):
        if message["role"] == "user" and message["content"].startswith("Question: "):
            return message["content"][len("Question: "):]
    return ""
