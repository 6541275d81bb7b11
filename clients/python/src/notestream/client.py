"""The client: ``Client(url, token)`` and its notes and folders."""

from __future__ import annotations

import importlib.metadata
import urllib.parse
from typing import Any, Dict, Iterator, List, Optional, cast

from ._follow import follow_lines
from ._transport import Transport
from .records import AppendResult, Deleted, Folder, Line, Lines, Note, SearchHit

try:
    VERSION = importlib.metadata.version("notestream")
except importlib.metadata.PackageNotFoundError:  # imported from a source checkout, not installed
    VERSION = "0+source"


def _by_filename(filename: str) -> str:
    return "/notes/by-filename/" + urllib.parse.quote(filename, safe="")


def _note(note_id: str) -> str:
    return "/notes/" + urllib.parse.quote(note_id, safe="")


class Notes:
    """Notes: list, read, create, change, move and delete (``client.notes``)."""

    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def list(self, limit: Optional[int] = None, offset: Optional[int] = None, folder_id: Optional[str] = None, kind: Optional[str] = None) -> List[Note]:
        """One page of notes, newest first, without their bodies; ``kind`` is ``"stream"`` or ``"editable"``."""
        return cast(List[Note], self._t.request("GET", "/notes", {"limit": limit, "offset": offset, "folder_id": folder_id, "kind": kind}))

    def get(self, note_id: str) -> Note:
        """The note with that id, with its ``plain_body``."""
        return cast(Note, self._t.request("GET", _note(note_id)))

    def get_by_filename(self, filename: str) -> Note:
        """The stream with that filename, with its ``plain_body``."""
        return cast(Note, self._t.request("GET", _by_filename(filename)))

    def create(self, title: str, plain_body: str = "", folder_id: Optional[str] = None) -> Note:
        """Creates an editable plain-text note."""
        note: Dict[str, Any] = {"title": title, "plain_body": plain_body}
        if folder_id is not None:
            note["folder_id"] = folder_id
        return cast(Note, self._t.request("POST", "/notes", body={"note": note}))

    def update(self, note_id: str, **fields: Any) -> Note:
        """Changes the given fields (``title``, ``plain_body`` of an editable note, ``folder_id``, ``webhook_url``, ...)."""
        return cast(Note, self._t.request("PATCH", _note(note_id), body={"note": fields}))

    def move(self, note_id: str, folder_id: Optional[str]) -> Note:
        """Moves the note into a folder, or out of any with ``None``."""
        return self.update(note_id, folder_id=folder_id)

    def delete(self, note_id: str) -> Deleted:
        """Deletes the note (into the trash)."""
        return cast(Deleted, self._t.request("DELETE", _note(note_id)))


class Folders:
    """Folders: list, create, rename and delete (``client.folders``)."""

    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def list(self) -> List[Folder]:
        """Every folder, with how many notes each holds."""
        return cast(List[Folder], self._t.request("GET", "/folders"))

    def create(self, name: str) -> Folder:
        """Creates a folder; a name already taken raises NotestreamError 409 ``conflict``."""
        return cast(Folder, self._t.request("POST", "/folders", body={"folder": {"name": name}}))

    def rename(self, folder_id: str, name: str) -> Folder:
        """Renames the folder."""
        return cast(Folder, self._t.request("PATCH", "/folders/" + urllib.parse.quote(folder_id, safe=""), body={"folder": {"name": name}}))

    def delete(self, folder_id: str) -> Deleted:
        """Deletes the folder; its notes stay, unfiled."""
        return cast(Deleted, self._t.request("DELETE", "/folders/" + urllib.parse.quote(folder_id, safe="")))


class Client:
    """A client for one notestream server and token.

    ``url`` is the server's address (``https://notes.example.com``), ``token`` an API token
    (``nst_...``), ``timeout`` the seconds one request may take. A 429 is retried after its
    Retry-After, at most ``max_retries`` (3) times; any refusal raises NotestreamError.
    """

    def __init__(self, url: str, token: str, timeout: float = 30, max_retries: int = 3) -> None:
        self._t = Transport(url, token, timeout, max_retries, f"notestream-python/{VERSION}")
        self.notes = Notes(self._t)
        self.folders = Folders(self._t)

    def append(self, filename: str, text: str, status: Optional[str] = None, idempotency_key: Optional[str] = None) -> AppendResult:
        """Appends ``text`` (one or more lines) to the stream, creating it on first use.

        ``status`` (``"ok"``, ``"fail"``, ``"start"``) signals a job's run to the dead-man's
        switch; with ``idempotency_key`` a retried append is written once.
        """
        body: Dict[str, Any] = {"text": text}
        if status is not None:
            body["status"] = status
        headers = {} if idempotency_key is None else {"Idempotency-Key": idempotency_key}
        return cast(AppendResult, self._t.request("POST", _by_filename(filename) + "/append", body=body, headers=headers))

    def lines(self, filename: str, last: Optional[int] = None, cursor: Optional[str] = None, limit: Optional[int] = None) -> Lines:
        """The stream's newest ``last`` lines (default 100), or up to ``limit`` lines after ``cursor``, oldest first."""
        return cast(Lines, self._t.request("GET", _by_filename(filename) + "/lines", {"last": last, "cursor": cursor, "limit": limit}))

    def follow(self, filename: str, cursor: Optional[str] = None) -> Iterator[Line]:
        """A generator of the stream's lines as they are appended: after ``cursor``, or from now.

        It never ends by itself: a dropped connection or a server restart is retried, resuming
        after the last line yielded, so no line comes twice or goes missing. Stop by leaving the
        loop (``break``) or calling ``close()``. A stream that does not exist raises at once.
        """
        path = _by_filename(filename) + "/lines"
        if cursor is None:
            # The end of the stream now, as a cursor: a drop before the first line then loses nothing.
            cursor = self.lines(filename, last=1)["cursor"]
        return follow_lines(self._t, path, cursor)

    def search(self, q: str, limit: Optional[int] = None, offset: Optional[int] = None) -> List[SearchHit]:
        """Notes and streams whose text matches ``q``, best first, each with a snippet."""
        return cast(List[SearchHit], self._t.request("GET", "/search", {"q": q, "limit": limit, "offset": offset}))
