"""notestream: a typed client for notestream's HTTP API, on the standard library alone.

    from notestream import Client
    client = Client("http://localhost:8080", "nst_...")
    client.append("deploy.log", "release 1.4 out")
    for line in client.follow("deploy.log"):
        print(line["text"])
"""

from .client import VERSION as __version__
from .client import Client, Folders, Notes
from .errors import NotestreamError
from .records import AppendResult, Deleted, Folder, Line, Lines, Note, SearchHit

__all__ = ["Client", "Notes", "Folders", "NotestreamError", "AppendResult", "Deleted", "Folder", "Line", "Lines", "Note", "SearchHit", "__version__"]
