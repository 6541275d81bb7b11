"""The one exception the client raises, built from the API's error envelope."""

from __future__ import annotations

import email.utils
import json
import time
from typing import Any, Optional


class NotestreamError(Exception):
    """A request the API refused, or one that got no answer.

    ``status`` is the HTTP status (0 when the server could not be reached), ``code`` the
    envelope's error code (``not_found``, ``validation_failed``, ``rate_limited``, ...),
    ``details`` its details when it has them (for ``validation_failed``, a list of
    ``{"field", "code", "message"}``), and ``retry_after`` the seconds the server asked the
    caller to wait (429 and 507), else None.
    """

    def __init__(self, status: int, code: str, message: str, details: Any = None, retry_after: Optional[float] = None) -> None:
        super().__init__(f"{status} {code}: {message}" if status else f"{code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.details = details
        self.retry_after = retry_after


def parse_retry_after(value: Optional[str]) -> Optional[float]:
    """Retry-After in seconds, from either of its forms (delta-seconds or an HTTP date)."""
    if value is None or value.strip() == "":
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def error_from_answer(status: int, reason: str, retry_after_header: Optional[str], body: bytes) -> NotestreamError:
    """The NotestreamError for an answer with an error status; a body outside the envelope still gives one."""
    retry_after = parse_retry_after(retry_after_header)
    try:
        envelope = json.loads(body.decode("utf-8"))
        err = envelope["error"]
        return NotestreamError(status, str(err["code"]), str(err.get("message", "")), err.get("details"), retry_after)
    except (ValueError, KeyError, TypeError):
        text = body.decode("utf-8", "replace").strip()[:200]
        return NotestreamError(status, f"http_{status}", text or reason, None, retry_after)
