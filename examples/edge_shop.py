"""A small web shop that assigns each visitor an arm *inside the application*, with no round trip
to banditkit, and sends its exposures and conversions in bulk once a second.

It is the pattern of docs/serving.md ("Serving from your application"):

- at start, :meth:`banditkit.client.Assigner.from_service` downloads the experiment's
  allocation and keeps it fresh in a background thread (``If-None-Match``: a 304 costs nothing);
- each page view reads the visitor's id from a cookie (a new id for a new visitor), assigns
  an arm (a hash of the id: microseconds, no network; a returning visitor keeps their arm
  through the cookie), renders the page, and queues the exposure;
- ``POST /buy`` queues the visitor's conversion (value 1), ``POST /leave`` a visit that ended
  without one (value 0; without it, the experiment's outcome window scores such a visitor 0
  when it closes);
- a background thread sends what is queued to ``POST /experiments/NAME/events`` once a second;
  a failed send is kept and sent again (the service counts a repeated event once).

The standard library only (``http.server``, ``urllib``) and ``banditkit.client``: the shop does
not import numpy or pandas. Run, with ``banditkit serve`` running and the experiment created::

    python examples/edge_shop.py --service http://127.0.0.1:8000 --name shop --token TOKEN

then open http://127.0.0.1:8080/. ``--load N`` plays N simulated visitors against the shop
instead (each converts with a hidden rate per arm), prints how long assigning took per
request, sends the last events and exits.
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import threading
import time
import urllib.request
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from banditkit.client import Assigner

HIDDEN_RATES = {"control": 0.10, "new-button": 0.12, "new-copy": 0.18}  # --load only


class Events:
    """The exposures and outcomes waiting to be sent, and the thread that sends them."""

    def __init__(self, url: str, name: str, token: str | None) -> None:
        self.address = f"{url.rstrip('/')}/experiments/{name}/events"
        self.token = token
        self.exposures: list[dict] = []
        self.outcomes: list[dict] = []
        self.lock = threading.Lock()
        self.sent = self.failed = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def exposure(self, event: dict) -> None:
        with self.lock:
            self.exposures.append(event)

    def outcome(self, key: str, value: float) -> None:
        with self.lock:
            self.outcomes.append({"key": key, "value": value, "time": time.time()})

    def flush(self) -> None:
        """Send what is queued (in bodies of at most 1,000 events); keep it on failure."""
        with self.lock:
            exposures, outcomes = self.exposures[:500], self.outcomes[:500]
            del self.exposures[:500], self.outcomes[:500]
        if not exposures and not outcomes:
            return
        body = json.dumps({"exposures": exposures, "outcomes": outcomes}).encode()
        request = urllib.request.Request(self.address, data=body, method="POST",
                                         headers={"Content-Type": "application/json"})
        if self.token:
            request.add_header("Authorization", f"Bearer {self.token}")
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                result = json.loads(answer.read())
            self.sent += len(exposures) + len(outcomes)
            if result["refused"]:
                print(f"edge_shop: {result['refused']} event(s) refused, e.g. "
                      f"{result['refusals'][0]}", flush=True)
        except OSError:  # the service is down: keep them, send them again later
            self.failed += 1
            with self.lock:
                self.exposures[:0], self.outcomes[:0] = exposures, outcomes

    def _loop(self) -> None:
        while not self.stop.wait(1.0):
            self.flush()

    def close(self) -> None:
        """Stop the thread and send everything left."""
        self.stop.set()
        self.thread.join()
        for _ in range(100):
            if not self.exposures and not self.outcomes:
                break
            self.flush()


def make_handler(assigner: Assigner, events: Events, timings: list[float]) -> type:
    class Shop(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:  # quiet
            pass

        def _visitor(self) -> tuple[str, bool]:
            for part in self.headers.get("Cookie", "").split(";"):
                name, _, value = part.strip().partition("=")
                if name == "visitor" and value:
                    return value, False
            return uuid.uuid4().hex, True

        def do_GET(self) -> None:
            visitor, new = self._visitor()
            start = time.perf_counter()
            arm = assigner.assign(visitor)  # a hash: no network, no lock held
            exposure = assigner.exposure(visitor, arm)
            timings.append(time.perf_counter() - start)
            events.exposure(exposure)  # the service counts a returning visitor once
            page = (f"<!doctype html><title>Shop</title><h1>Today's offer</h1>"
                    f"<p class='variant'>{arm}</p><form method='post' action='/buy'>"
                    "<button>Buy</button></form>").encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(page)))
            self.send_header("X-Arm", arm)
            if new:
                self.send_header("Set-Cookie", f"visitor={visitor}; Path=/; HttpOnly")
            self.end_headers()
            self.wfile.write(page)

        def do_POST(self) -> None:
            visitor, new = self._visitor()
            if self.path in ("/buy", "/leave") and not new:
                events.outcome(visitor, 1.0 if self.path == "/buy" else 0.0)
            self.send_response(303)
            self.send_header("Location", "/")
            self.send_header("Content-Length", "0")
            self.end_headers()

    return Shop


def load(port: int, visitors: int, seed: int) -> None:
    """Simulated visitors: a page view, then a purchase with the arm's hidden rate, or they
    leave."""
    rng = random.Random(seed)
    for _ in range(visitors):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("GET", "/")
        response = conn.getresponse()
        response.read()
        arm = response.getheader("X-Arm")
        cookie = response.getheader("Set-Cookie").split(";")[0]
        bought = rng.random() < HIDDEN_RATES.get(arm, 0.1)
        conn.request("POST", "/buy" if bought else "/leave",
                     headers={"Cookie": cookie, "Content-Length": "0"})
        conn.getresponse().read()
        conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--service", required=True, help="banditkit serve's URL")
    parser.add_argument("--name", required=True, help="the experiment")
    parser.add_argument("--token", default=None, help="the service's token")
    parser.add_argument("--port", type=int, default=8080, help="the shop's port (0: any)")
    parser.add_argument("--load", type=int, default=0, metavar="N",
                        help="play N simulated visitors, report, and exit")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    assigner = Assigner.from_service(args.service, args.name, args.token)
    events = Events(args.service, args.name, args.token)
    events.thread.start()
    timings: list[float] = []
    server = ThreadingHTTPServer(("127.0.0.1", args.port), make_handler(assigner, events,
                                                                        timings))
    if not args.load:
        print(f"the shop is open on http://127.0.0.1:{server.server_address[1]}/", flush=True)
        server.serve_forever()
        return
    threading.Thread(target=server.serve_forever, daemon=True).start()
    load(server.server_address[1], args.load, args.seed)
    server.shutdown()
    events.close()
    assigner.poller.stop()
    timings.sort()
    print(f"{args.load} visitors; assigning took {1e6 * sum(timings) / len(timings):.1f} µs "
          f"per request on average ({1e6 * timings[len(timings) // 2]:.1f} µs median, "
          f"{1e6 * timings[int(len(timings) * 0.99)]:.1f} µs at the 99th percentile); "
          f"{events.sent} events sent, {events.failed} failed send(s) retried", flush=True)


if __name__ == "__main__":
    main()
