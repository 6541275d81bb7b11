"""HTTP for the client: one JSON request with the API's retry rule, and the raw event stream."""

from __future__ import annotations

import http.client
import json
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Callable, Dict, Mapping, Optional

from .errors import NotestreamError, error_from_answer

Query = Mapping[str, Any]


class Transport:
    """Sends requests to ``<url>/api/v1`` with the token; a 429 waits its Retry-After and tries again."""

    def __init__(self, url: str, token: str, timeout: float, max_retries: int, user_agent: str, sleep: Callable[[float], None] = time.sleep) -> None:
        self.base = url.rstrip("/") + "/api/v1"
        self.token = token
        self.timeout = timeout
        self.max_retries = max_retries
        self.user_agent = user_agent
        self.sleep = sleep

    def url(self, path: str, query: Optional[Query] = None) -> str:
        """The full address of an API path, with the query's set values."""
        params = {k: str(v).lower() if isinstance(v, bool) else v for k, v in (query or {}).items() if v is not None}
        return self.base + path + ("?" + urllib.parse.urlencode(params) if params else "")

    def headers(self, extra: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
        h = {"Authorization": f"Bearer {self.token}", "User-Agent": self.user_agent, "Accept": "application/json"}
        h.update(extra or {})
        return h

    def request(self, method: str, path: str, query: Optional[Query] = None, body: Any = None, headers: Optional[Mapping[str, str]] = None) -> Any:
        """One API call: the decoded JSON answer, or NotestreamError. A 429 is retried after its Retry-After, at most max_retries times."""
        data = None if body is None else json.dumps(body).encode("utf-8")
        extra = dict(headers or {})
        if data is not None:
            extra["Content-Type"] = "application/json"
        url = self.url(path, query)
        attempt = 0
        while True:
            req = urllib.request.Request(url, data=data, method=method, headers=self.headers(extra))
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                    raw = resp.read()
                    return json.loads(raw.decode("utf-8")) if raw else None
            except urllib.error.HTTPError as e:
                err = refusal(e)
                if self.retry_later(err, attempt):
                    attempt += 1
                    continue
                raise err from None
            except (urllib.error.URLError, http.client.HTTPException, OSError) as e:
                reason = getattr(e, "reason", e)
                raise NotestreamError(0, "unreachable", f"cannot reach {self.base}: {reason}") from e

    def retry_later(self, err: NotestreamError, retries: int) -> bool:
        """Whether ``err`` is a 429 that may be retried after ``retries`` retries; if so, waits its Retry-After first."""
        if err.status != 429 or retries >= self.max_retries:
            return False
        # Without a Retry-After (the API always sends one) wait a second, not zero.
        self.sleep(1.0 if err.retry_after is None else err.retry_after)
        return True

    def open_events(self, path: str, last_event_id: str) -> http.client.HTTPResponse:
        """Opens a follow (Server-Sent Events) after ``last_event_id``; raises HTTPError or URLError as urllib does."""
        headers = self.headers({"Accept": "text/event-stream", "Last-Event-ID": last_event_id})
        req = urllib.request.Request(self.url(path), headers=headers)
        # The server sends a heartbeat every 25 s: a read that waits longer than this means the connection is gone.
        resp: http.client.HTTPResponse = urllib.request.urlopen(req, timeout=max(self.timeout, 60.0))
        return resp


def refusal(e: urllib.error.HTTPError) -> NotestreamError:
    """The NotestreamError for an answer with an error status."""
    return error_from_answer(e.code, str(e.reason), e.headers.get("Retry-After"), e.read())
