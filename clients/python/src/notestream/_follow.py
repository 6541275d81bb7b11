"""Following a stream: Server-Sent Events, resumed with Last-Event-ID after any drop."""

from __future__ import annotations

import http.client
import json
import urllib.error
from typing import IO, Iterator, List, Optional, Tuple

from ._transport import Transport, refusal
from .records import Line

FIRST_BACKOFF = 0.25
MAX_BACKOFF = 5.0


def events(stream: IO[bytes]) -> Iterator[Tuple[Optional[str], str]]:
    """The (id, data) of each complete event in an event-stream body; comments and partial events are skipped."""
    event_id: Optional[str] = None
    data: List[str] = []
    while True:
        raw = stream.readline()
        if not raw:
            return
        line = raw.decode("utf-8").rstrip("\r\n")
        if line == "":
            if data:
                yield event_id, "\n".join(data)
            event_id, data = None, []
        elif line.startswith(":"):
            continue
        elif line.startswith("id:"):
            event_id = line[3:].lstrip(" ")
        elif line.startswith("data:"):
            value = line[5:]
            data.append(value[1:] if value.startswith(" ") else value)


def follow_lines(transport: Transport, path: str, cursor: str) -> Iterator[Line]:
    """Yields each line after ``cursor`` as it is appended, forever.

    A dropped connection, a server restart or a 5xx is retried with a growing pause (0.25 s up
    to 5 s), resuming with Last-Event-ID from the last line yielded, so no line is repeated or
    skipped. A 429 (too many open follows) waits its Retry-After, at most ``max_retries`` times
    in a row; any other refusal raises NotestreamError.
    """
    last_id = cursor
    backoff = FIRST_BACKOFF
    refused = 0
    while True:
        try:
            resp = transport.open_events(path, last_id)
        except urllib.error.HTTPError as e:
            err = refusal(e)
            if transport.retry_later(err, refused):
                refused += 1
                continue
            if e.code < 500:
                raise err from None
            resp = None
        except (urllib.error.URLError, http.client.HTTPException, OSError):
            resp = None  # The server is restarting or the network blinked.
        if resp is not None:
            refused = 0
            backoff = FIRST_BACKOFF
            try:
                with resp:
                    for event_id, data in events(resp):
                        if event_id is None:
                            continue
                        payload = json.loads(data)
                        last_id = event_id
                        yield Line(text=payload["text"], at=payload["at"], cursor=event_id)
            except (http.client.HTTPException, OSError):
                pass  # A dropped connection: resume below from the last line yielded.
        transport.sleep(backoff)
        backoff = min(backoff * 2, MAX_BACKOFF)
