"""A scripted local HTTP server for the client's unit tests."""

import hashlib
import hmac
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, List, Optional, Tuple
from urllib.parse import parse_qsl, urlsplit

# An answer: (status, headers, body) or a callable deciding it from the request; "drop" closes the
# connection without answering; ("stall", event) answers nothing until `event` is set.
Answer = Any


class Recorded:
    def __init__(self, method: str, target: str, headers: Dict[str, str], body: bytes) -> None:
        self.method = method
        self.target = target
        parts = urlsplit(target)
        self.path = parts.path
        self.query = dict(parse_qsl(parts.query, keep_blank_values=True))
        self.raw_query = parts.query
        self.headers = headers
        self.body = body

    def json(self) -> Any:
        return json.loads(self.body.decode("utf-8"))

    def signature_ok(self, secret: str) -> bool:
        canonical = "\n".join((self.headers["x-mr-timestamp"], self.method, self.path,
                               hashlib.sha256(self.body).hexdigest()))
        mac = hmac.new(secret.encode(), canonical.encode(), hashlib.sha256).hexdigest()
        return hmac.compare_digest("v1=" + mac, self.headers.get("x-mr-signature", ""))


def ok(data: Any, status: int = 200, headers: Optional[Dict[str, str]] = None) -> Tuple[int, Dict[str, str], bytes]:
    return status, dict(headers or {}), json.dumps({"ok": True, "data": data}).encode()


def fail(status: int, code: str, headers: Optional[Dict[str, str]] = None, **extra: Any) -> Tuple[int, Dict[str, str], bytes]:
    error = {"code": code, "message": code.replace("_", " "), "requestId": "req-%d" % status}
    error.update(extra)
    return status, dict(headers or {}), json.dumps({"ok": False, "error": error}).encode()


class StubServer:
    def __init__(self) -> None:
        self.requests: List[Recorded] = []
        self._answers: List[Answer] = []
        self.default: Optional[Callable[[Recorded], Answer]] = None
        self._lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                rec = Recorded(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                with stub._lock:
                    stub.requests.append(rec)
                    answer = stub._answers.pop(0) if stub._answers else None
                if answer is None and stub.default is not None:
                    answer = stub.default(rec)
                if callable(answer):
                    answer = answer(rec)
                if answer is None:
                    answer = fail(500, "internal_error")
                if answer == "drop":
                    self.close_connection = True
                    return
                if isinstance(answer, tuple) and answer[0] == "stall":
                    answer[1].wait(10)
                    self.close_connection = True
                    return
                status, headers, payload = answer
                self.send_response(status)
                headers.setdefault("Content-Type", "application/json")
                headers.setdefault("X-Request-Id", "req-%d" % len(stub.requests))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = _handle
            do_POST = _handle

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]
        self._thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()

    def script(self, *answers: Answer) -> None:
        with self._lock:
            self._answers.extend(answers)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
