"""Headless Chromium driven over the DevTools protocol on a pipe, with the stdlib only.

``--remote-debugging-pipe`` makes Chromium read commands from fd 3 and write replies to fd 4,
each a JSON message ended by a NUL byte: no port, no websocket library. A test opens a page,
evaluates JavaScript in it (so the measuring code is the test's, not the page's), moves the
real mouse, and takes screenshots. :meth:`Browser.close` ends the browser it started (and
kills it if it does not go), and the context manager always calls it.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import select
import shutil
import signal
import struct
import subprocess
import time
import zlib
from pathlib import Path
from types import TracebackType
from typing import Any

CHROMIUM = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)
SKIP_REASON = "headless Chromium is not installed (Debian: apt-get install -y chromium)"
#: How every test runs Chromium: headless, offline, nothing from the user's profile, 1:1 pixels.
BASE_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--hide-scrollbars",
    "--force-device-scale-factor=1",
)


class BrowserError(RuntimeError):
    """The browser went away, timed out, or a script in the page threw."""


class Browser:
    def __init__(self, profile: Path, width: int = 1400, height: int = 900) -> None:
        assert CHROMIUM is not None, SKIP_REASON
        self.profile, self.width, self.height = profile, width, height
        self.proc: subprocess.Popen[bytes] | None = None
        self.counter = 0
        self.buffer = b""
        self.session = ""

    def __enter__(self) -> Browser:
        commands_r, self.commands = os.pipe()
        self.replies, replies_w = os.pipe()

        def wire() -> None:  # in the child: fd 3 = commands, fd 4 = replies
            os.dup2(commands_r, 3)
            os.dup2(replies_w, 4)

        args = [
            str(CHROMIUM),
            *BASE_ARGS,
            "--remote-debugging-pipe",
            f"--window-size={self.width},{self.height}",
            f"--user-data-dir={self.profile}",
            "about:blank",
        ]
        env = {"HOME": str(self.profile.parent), "PATH": "/usr/bin:/bin"}
        self.proc = subprocess.Popen(
            args,
            pass_fds=(3, 4),
            preexec_fn=wire,
            start_new_session=True,  # its own process group: close() can end every helper process
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        os.close(commands_r)
        os.close(replies_w)
        try:
            targets = self.call("Target.getTargets", session=False)["targetInfos"]
            page = next(t["targetId"] for t in targets if t["type"] == "page")
            self.session = self.call("Target.attachToTarget", {"targetId": page, "flatten": True}, session=False)[
                "sessionId"
            ]
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def call(
        self, method: str, params: dict[str, Any] | None = None, *, session: bool = True, timeout: float = 60
    ) -> Any:
        self.counter += 1
        message: dict[str, Any] = {"id": self.counter, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self.session
        os.write(self.commands, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            while b"\0" in self.buffer:
                raw, self.buffer = self.buffer.split(b"\0", 1)
                reply = json.loads(raw)
                if reply.get("id") == self.counter:
                    if "error" in reply:
                        raise BrowserError(f"{method}: {reply['error']}")
                    return reply.get("result", {})
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.replies], [], [], left)[0]:
                raise BrowserError(f"{method}: no reply in {timeout} s")
            chunk = os.read(self.replies, 1 << 16)
            if not chunk:
                raise BrowserError(f"{method}: the browser went away")
            self.buffer += chunk

    def eval(self, expression: str) -> Any:
        """The value of ``expression`` in the page (JSON-able), promises awaited."""
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in result:
            detail = result["exceptionDetails"]
            raise BrowserError(str(detail.get("exception", {}).get("description") or detail.get("text")))
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 30) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            value = self.eval(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise BrowserError(f"timed out waiting for {expression}")
            time.sleep(0.05)

    def open(self, url: str) -> None:
        """Load ``url`` afresh and wait until the graph page says it is ready (or has errors)."""
        self.call("Page.navigate", {"url": "about:blank"})
        self.wait_for("location.href === 'about:blank' && document.readyState === 'complete'")
        self.call("Page.navigate", {"url": url})
        self.wait_for(
            "document.readyState === 'complete' && !!document.getElementById('rg-status') && "
            "(document.getElementById('rg-status').dataset.ready === '1' || "
            "document.getElementById('rg-status').dataset.errors !== '0')"
        )

    def mouse(self, kind: str, x: float, y: float, clicks: int = 0) -> None:
        params: dict[str, Any] = {"type": kind, "x": x, "y": y}
        if clicks:
            params.update(button="left", clickCount=clicks)
        self.call("Input.dispatchMouseEvent", params)

    def screenshot(self, path: Path) -> Path:
        path.write_bytes(base64.b64decode(self.call("Page.captureScreenshot", {"format": "png"})["data"]))
        return path

    def close(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        with contextlib.suppress(BrowserError, OSError):
            self.call("Browser.close", session=False, timeout=10)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        with contextlib.suppress(ProcessLookupError):  # helpers normally leave with the browser; make sure
            os.killpg(proc.pid, signal.SIGKILL)
        for fd in (self.commands, self.replies):
            with contextlib.suppress(OSError):
                os.close(fd)


def cli_screenshot(profile: Path, url: str, path: Path, width: int, height: int) -> subprocess.CompletedProcess[str]:
    """Chromium's own ``--screenshot`` of ``url`` (the page as a person first sees it)."""
    assert CHROMIUM is not None, SKIP_REASON
    args = [
        str(CHROMIUM),
        *BASE_ARGS,
        f"--user-data-dir={profile}",
        "--virtual-time-budget=5000",
        f"--window-size={width},{height}",
        f"--screenshot={path}",
        url,
    ]
    env = {"HOME": str(profile.parent), "PATH": "/usr/bin:/bin"}
    return subprocess.run(args, capture_output=True, text=True, timeout=90, env=env, check=False)


def read_png(path: Path) -> tuple[int, int, int, bytes]:
    """(width, height, bytes per pixel, raw unfiltered pixel rows) of an 8-bit RGB/RGBA PNG."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, color = struct.unpack(">IIBB", header[:10])
    assert depth == 8 and color in (2, 6), f"unexpected PNG format depth={depth} color={color}"
    bpp = 3 if color == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    out = bytearray()
    prev = bytearray(stride)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + a) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + b) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + ((a + b) >> 1)) & 0xFF
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        out += line
        prev = line
    return width, height, bpp, bytes(out)
