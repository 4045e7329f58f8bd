"""A chart-rendering process: one Kaleido browser, kept open, drawing the figures the web server sends it.

Started by :class:`components.services.render_pool.RenderPool` as
``python -m components.services.render_worker``; it reads requests on its
standard input and answers on its standard output, one at a time, so one
Chromium serves every render of this process (starting one takes seconds,
a small chart then draws in a fraction of one). The web server kills the
process, browser included, when a render passes its deadline.

Framing, both ways: a 4-byte big-endian length, then that many bytes. A
request is JSON ``{"figure": {...}, "opts": {format, width, height,
scale}}``; an answer is one status byte (:data:`DRAWN` then the image, or
:data:`FAILED` then the error's text in UTF-8). With no request for
:data:`IDLE_S` seconds, the process ends by itself (and its browser with it).

The browser gets no MathJax (it would come from a CDN) and an unreachable
proxy: whatever a figure names, no request leaves for another host.
"""

from __future__ import annotations

import asyncio
import json
import os
import select
import struct
import sys

HEADER = struct.Struct(">I")
DRAWN, FAILED = b"\x00", b"\x01"
#: Seconds without a request after which the process (and its browser) ends.
IDLE_S = 300.0
#: Where the browser sends web requests: a closed port (discard), so none reaches any host.
UNREACHABLE_PROXY = "127.0.0.1:9"


def read_frame(stream, idle_s: float | None = None) -> bytes | None:
    """The next framed message from ``stream`` (a binary file), or None at its end or after ``idle_s`` of silence."""
    if idle_s is not None and not select.select([stream], [], [], idle_s)[0]:
        return None
    header = stream.read(HEADER.size)
    if len(header) < HEADER.size:
        return None
    (length,) = HEADER.unpack(header)
    body = stream.read(length)
    return body if len(body) == length else None


def write_frame(stream, data: bytes) -> None:
    stream.write(HEADER.pack(len(data)) + data)
    stream.flush()


async def serve(requests, answers, idle_s: float = IDLE_S) -> None:
    """Draw each request from ``requests`` with one browser, answering on ``answers``, until either ends."""
    import kaleido  # here: the web server imports this module's framing without loading Kaleido

    loop = asyncio.get_running_loop()
    async with kaleido.Kaleido(n=1, timeout=None, mathjax=False, proxy_server=UNREACHABLE_PROXY) as browser:
        while (message := await loop.run_in_executor(None, read_frame, requests, idle_s)) is not None:
            try:
                request = json.loads(message)
                image = await browser.calc_fig(request["figure"], opts=request["opts"])
                answer = DRAWN + image
            except Exception as exc:  # noqa: BLE001 -- the web server reports it; this process keeps serving
                answer = FAILED + f"{exc.__class__.__name__}: {exc}"[:500].encode("utf-8", "replace")
            write_frame(answers, answer)


def main() -> None:
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())   # nothing else written to stdout can break the framing
    asyncio.run(serve(sys.stdin.buffer, answers))


if __name__ == "__main__":
    main()
