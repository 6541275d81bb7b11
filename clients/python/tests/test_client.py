"""The installed notestream package against a running server (test/e2e/python-client.test.ts runs this).

The server's address and tokens come from NOTESTREAM_TEST_URL, NOTESTREAM_TEST_TOKEN and
NOTESTREAM_TEST_RATE_TOKEN (a second token, whose write budget one test spends). To restart the
server, a test prints "restart" on stdout and reads "ready" from stdin; the runner restarts it on
the same port. The 429 retry rule is tested on a loopback stub: the real server's Retry-After is
the rest of its minute, longer than a test may wait.
"""

from __future__ import annotations

import ast
import http.server
import json
import os
import pathlib
import sys
import threading
import time
import unittest
import uuid
from typing import Any, List, Tuple

import notestream
from notestream import Client, NotestreamError

URL = os.environ.get("NOTESTREAM_TEST_URL", "")
TOKEN = os.environ.get("NOTESTREAM_TEST_TOKEN", "")
RATE_TOKEN = os.environ.get("NOTESTREAM_TEST_RATE_TOKEN", "")


def unique(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:8]}.log"


def restart_server() -> None:
    print("restart", flush=True)
    answer = sys.stdin.readline().strip()
    if answer != "ready":
        raise RuntimeError(f"the runner did not restart the server: {answer!r}")


class Installed(unittest.TestCase):
    def test_the_installed_wheel_is_imported_with_the_service_version_and_its_typing_marker(self) -> None:
        package = pathlib.Path(notestream.__file__).parent
        self.assertIn("site-packages", str(package))
        self.assertEqual(notestream.__version__, os.environ["NOTESTREAM_TEST_VERSION"])
        self.assertTrue((package / "py.typed").is_file())

    def test_every_module_parses_as_python_3_9(self) -> None:
        for source in pathlib.Path(notestream.__file__).parent.glob("*.py"):
            ast.parse(source.read_text(encoding="utf-8"), filename=str(source), feature_version=(3, 9))


class AgainstTheServer(unittest.TestCase):
    client: Client

    @classmethod
    def setUpClass(cls) -> None:
        if not URL or not TOKEN:
            raise unittest.SkipTest("NOTESTREAM_TEST_URL and NOTESTREAM_TEST_TOKEN are not set")
        cls.client = Client(URL, TOKEN, timeout=10)

    def test_append_creates_the_stream_once_and_lines_reads_the_newest_or_after_a_cursor(self) -> None:
        name = unique("append")
        first = self.client.append(name, "one\ntwo")
        self.assertTrue(first["created"])
        self.assertEqual(first["filename"], name)
        second = self.client.append(name, "three", status="ok")
        self.assertFalse(second["created"])
        self.assertEqual(second["id"], first["id"])
        page = self.client.lines(name, last=2)
        self.assertEqual([line["text"] for line in page["lines"]], ["two", "three"])
        everything = self.client.lines(name, last=10)["lines"]
        after_one = self.client.lines(name, cursor=everything[0]["cursor"], limit=1)
        self.assertEqual([line["text"] for line in after_one["lines"]], ["two"])
        self.assertEqual(after_one["cursor"], everything[1]["cursor"])

    def test_an_append_repeated_with_its_idempotency_key_is_written_once(self) -> None:
        name = unique("idem")
        key = uuid.uuid4().hex
        a = self.client.append(name, "once", idempotency_key=key)
        b = self.client.append(name, "once", idempotency_key=key)
        self.assertEqual(a, b)
        self.assertEqual([line["text"] for line in self.client.lines(name)["lines"]], ["once"])

    def test_follow_yields_new_lines_and_resumes_after_a_server_restart_without_repeats_or_gaps(self) -> None:
        name = unique("follow")
        self.client.append(name, "before")
        seen: List[str] = []
        done = threading.Event()
        failure: List[BaseException] = []
        follower = self.client.follow(name)

        def consume() -> None:
            try:
                for line in follower:
                    seen.append(line["text"])
                    if line["text"] == "gap 2":
                        break
            except BaseException as e:  # reported by the test thread
                failure.append(e)
            finally:
                done.set()

        threading.Thread(target=consume, daemon=True).start()
        self.client.append(name, "live")
        self.wait_until(lambda: "live" in seen or done.is_set(), "the live line")
        restart_server()
        # Two lines in one append: resuming from anything but the last id seen loses or repeats one.
        self.client.append(name, "gap 1\ngap 2")
        self.assertTrue(done.wait(15), f"follow stopped at {seen}")
        self.assertEqual(failure, [])
        self.assertEqual(seen, ["live", "gap 1", "gap 2"])

    def test_follow_of_a_stream_that_does_not_exist_raises_404_at_once(self) -> None:
        with self.assertRaises(NotestreamError) as caught:
            self.client.follow(unique("never"))
        self.assertEqual((caught.exception.status, caught.exception.code), (404, "not_found"))

    def test_notes_are_created_read_changed_moved_listed_and_deleted(self) -> None:
        folder = self.client.folders.create(f"folder {uuid.uuid4().hex[:8]}")
        note = self.client.notes.create("Runbook", "step 1")
        self.assertEqual(note["kind"], "editable")
        self.assertEqual(self.client.notes.get(note["id"])["plain_body"], "step 1")
        changed = self.client.notes.update(note["id"], title="Runbook v2", plain_body="step 1\nstep 2")
        self.assertEqual(changed["title"], "Runbook v2")
        moved = self.client.notes.move(note["id"], folder["id"])
        self.assertEqual(moved["folder_id"], folder["id"])
        in_folder = self.client.notes.list(folder_id=folder["id"])
        self.assertEqual([n["id"] for n in in_folder], [note["id"]])
        self.assertEqual([f["note_count"] for f in self.client.folders.list() if f["id"] == folder["id"]], [1])
        self.assertEqual(self.client.notes.move(note["id"], None)["folder_id"], None)
        self.assertEqual(self.client.notes.delete(note["id"]), {"id": note["id"], "deleted": True})
        with self.assertRaises(NotestreamError) as caught:
            self.client.notes.get(note["id"])
        self.assertEqual(caught.exception.status, 404)
        self.client.folders.delete(folder["id"])
        self.assertNotIn(folder["id"], [f["id"] for f in self.client.folders.list()])

    def test_search_finds_an_appended_line(self) -> None:
        name = unique("search")
        word = "zebra" + uuid.uuid4().hex[:6]
        self.client.append(name, f"deploy {word} done")
        hits: List[Any] = []
        deadline = time.monotonic() + 5
        while not hits and time.monotonic() < deadline:
            hits = self.client.search(word)
            time.sleep(0.1)
        self.assertEqual([hit["filename"] for hit in hits], [name])
        self.assertIn(f"**{word}**", hits[0]["snippet"])

    def test_an_unknown_note_raises_not_found_with_status_404(self) -> None:
        with self.assertRaises(NotestreamError) as caught:
            self.client.notes.get("note_doesnotexist")
        e = caught.exception
        self.assertEqual((e.status, e.code, e.retry_after), (404, "not_found", None))
        self.assertTrue(e.message)

    def test_an_invalid_filename_raises_validation_failed_naming_the_field(self) -> None:
        with self.assertRaises(NotestreamError) as caught:
            self.client.append(" leading space.log", "x")
        e = caught.exception
        self.assertEqual((e.status, e.code), (422, "validation_failed"))
        self.assertIsInstance(e.details, list)
        self.assertEqual(e.details[0]["field"], "filename")

    def test_the_servers_429_carries_code_and_retry_after(self) -> None:
        # No retries: the server's Retry-After is the rest of its minute.
        client = Client(URL, RATE_TOKEN, timeout=10, max_retries=0)
        note = client.notes.create("Counter", "0")
        with self.assertRaises(NotestreamError) as caught:
            for i in range(500):
                client.notes.update(note["id"], title=f"Counter {i}")
        e = caught.exception
        self.assertEqual((e.status, e.code), (429, "rate_limited"))
        self.assertIsNotNone(e.retry_after)
        self.assertGreater(e.retry_after or 0, 0)

    def test_an_unreachable_server_raises_with_status_0(self) -> None:
        with self.assertRaises(NotestreamError) as caught:
            Client("http://127.0.0.1:1", TOKEN, timeout=2).notes.list()
        self.assertEqual((caught.exception.status, caught.exception.code), (0, "unreachable"))

    def wait_until(self, condition: Any, what: str) -> None:
        deadline = time.monotonic() + 10
        while not condition():
            if time.monotonic() > deadline:
                self.fail(f"timed out waiting for {what}")
            time.sleep(0.02)


class Stub(http.server.BaseHTTPRequestHandler):
    """Answers each request with the next of `answers` (status, Retry-After), then 200 `{"ok": true}`."""

    answers: List[Tuple[int, str]] = []
    requests: List[float] = []

    def do_GET(self) -> None:
        Stub.requests.append(time.monotonic())
        if Stub.answers:
            status, retry_after = Stub.answers.pop(0)
            body = json.dumps({"error": {"code": "rate_limited", "message": "slow down"}}).encode()
            self.send_response(status)
            self.send_header("Retry-After", retry_after)
        else:
            body = b'{"ok": true}'
            self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class RateLimitRetries(unittest.TestCase):
    def setUp(self) -> None:
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Stub)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        Stub.requests = []

    def tearDown(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def test_a_429_is_retried_after_its_retry_after(self) -> None:
        Stub.answers = [(429, "1")]
        self.assertEqual(Client(self.url, "nst_x").search("x"), {"ok": True})
        self.assertEqual(len(Stub.requests), 2)
        self.assertGreaterEqual(Stub.requests[1] - Stub.requests[0], 0.95)

    def test_a_fourth_429_in_a_row_is_raised_with_its_retry_after(self) -> None:
        Stub.answers = [(429, "0")] * 4
        with self.assertRaises(NotestreamError) as caught:
            Client(self.url, "nst_x").search("x")
        e = caught.exception
        self.assertEqual((e.status, e.code, e.retry_after), (429, "rate_limited", 0))
        self.assertEqual(len(Stub.requests), 4)


if __name__ == "__main__":
    unittest.main()
