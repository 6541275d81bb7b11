"""The API's records as typed dictionaries: what each call returns is the JSON the API sent."""

from __future__ import annotations

from typing import Any, List, Optional, TypedDict


class Line(TypedDict):
    """One line of a stream: its text (no trailing LF), when it was appended, and its cursor."""

    text: str
    at: str
    cursor: str


class Lines(TypedDict):
    """A page of lines, oldest first; ``cursor`` continues after the last one."""

    lines: List[Line]
    cursor: str


class AppendResult(TypedDict):
    """What an append answers: the stream's id and size, and whether this call created it."""

    id: str
    filename: Optional[str]
    created: bool
    byte_size: int
    bytes_remaining: Optional[int]
    storage_used: int
    storage_cap: Optional[int]
    dropped_bytes: int
    updated_at: str


class Note(TypedDict, total=False):
    """A note record (the commonest fields; the API sends more, all kept). ``plain_body`` comes with a single note."""

    id: str
    kind: str
    format: str
    filename: Optional[str]
    title: str
    folder_id: Optional[str]
    byte_size: int
    created_at: str
    updated_at: str
    last_write_at: str
    plain_body: str
    webhook_url: Optional[str]
    alert_email: Optional[str]
    expected_interval_seconds: Optional[int]
    deadman_status: str
    retention: str
    retention_days: Optional[int]


class Deleted(TypedDict):
    """The answer to a delete."""

    id: str
    deleted: bool


class Folder(TypedDict):
    """A folder, with how many notes it holds."""

    id: str
    name: str
    note_count: int
    created_at: str
    updated_at: str


class SearchHit(TypedDict, total=False):
    """A search result: the note's id, title and filename, and a snippet with ``**`` around matches."""

    id: str
    kind: str
    filename: Optional[str]
    title: str
    folder_id: Optional[str]
    snippet: str
    snippet_parts: List[Any]
    updated_at: str
