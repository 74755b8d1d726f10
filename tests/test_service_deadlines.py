"""One timer for many deadlines (banditkit/service/deadlines.py), as the queue and body timeouts
use it: each deadline expires at its own time (not before, not much after), one that is
discarded never expires, the timer is armed again for the next one, and the body timeout built
on it answers 408 only for its own cut, not for another cancellation."""

from __future__ import annotations

import asyncio

import pytest

from banditkit.service.bodies import TooSlow, read_body
from banditkit.service.deadlines import Deadlines


def test_each_deadline_expires_at_its_own_time_and_a_discarded_one_never():
    async def main() -> tuple[dict[str, float], int]:
        loop = asyncio.get_running_loop()
        deadlines = Deadlines(0.2)
        start = loop.time()
        fired: dict[str, float] = {}

        def expire(key: str):
            return lambda: fired.setdefault(key, loop.time() - start)

        deadlines.add("a", expire("a"))
        await asyncio.sleep(0.1)
        deadlines.add("b", expire("b"))
        deadlines.add("c", expire("c"))
        deadlines.discard("c")  # finished first: never expires
        await asyncio.sleep(0.05)
        deadlines.add("d", expire("d"))
        await asyncio.sleep(0.4)
        return fired, len(deadlines)

    fired, left = asyncio.run(main())
    assert sorted(fired) == ["a", "b", "d"] and left == 0
    # each at its own deadline (0.2 s after it was added), one timer re-armed for the next
    for key, due in (("a", 0.2), ("b", 0.3), ("d", 0.35)):
        assert due - 0.001 <= fired[key] < due + 0.08, (key, fired)


def test_the_timer_is_armed_again_after_all_expired():
    async def main() -> list[str]:
        deadlines, fired = Deadlines(0.05), []
        deadlines.add(1, lambda: fired.append("first"))
        await asyncio.sleep(0.1)
        deadlines.add(2, lambda: fired.append("second"))  # nothing pending: a new timer
        await asyncio.sleep(0.1)
        return fired

    assert asyncio.run(main()) == ["first", "second"]


def test_deadlines_follow_the_loop_that_serves_them():
    """An app served by one loop, then another (tests do so): the second loop's deadlines
    expire on it."""
    deadlines, fired = Deadlines(0.01), []

    async def main(tag: str) -> None:
        deadlines.add(tag, lambda: fired.append(tag))
        await asyncio.sleep(0.05)

    asyncio.run(main("first"))
    asyncio.run(main("second"))
    assert fired == ["first", "second"]


def _receive_after(seconds: float):
    async def receive() -> dict:
        await asyncio.sleep(seconds)
        return {"type": "http.request", "body": b"{}", "more_body": False}
    return receive


def test_the_body_timeout_on_deadlines_cuts_a_slow_body_and_not_a_fast_one():
    async def main() -> tuple[bytes, BaseException | None]:
        deadlines = Deadlines(0.1)
        fast = await read_body(_receive_after(0.01), "2", 100, 0.1, deadlines)
        try:
            await read_body(_receive_after(1.0), "2", 100, 0.1, deadlines)
        except TooSlow as error:
            return fast, error
        return fast, None

    fast, error = asyncio.run(main())
    assert fast == b"{}"
    assert error is not None and "within 0.1 s (--body-timeout)" in str(error)


def test_another_cancellation_is_not_taken_for_the_body_timeout():
    """A request cancelled for another reason (its client gone, the server stopping) while
    it reads its body stays cancelled: no 408 is made up for it."""
    async def main() -> None:
        deadlines = Deadlines(5.0)
        task = asyncio.ensure_future(read_body(_receive_after(1.0), "2", 100, 5.0, deadlines))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert len(deadlines) == 0  # its deadline went with it

    asyncio.run(main())


def test_a_failing_callback_leaves_the_others_expiring():
    async def main() -> tuple[list[str], list[dict]]:
        loop = asyncio.get_running_loop()
        errors: list[dict] = []
        loop.set_exception_handler(lambda _, context: errors.append(context))
        deadlines, fired = Deadlines(0.05), []

        def fail() -> None:
            raise RuntimeError("broken")

        deadlines.add(1, fail)
        deadlines.add(2, lambda: fired.append("second"))
        await asyncio.sleep(0.15)
        return fired, errors

    fired, errors = asyncio.run(main())
    assert fired == ["second"]
    assert len(errors) == 1 and isinstance(errors[0]["exception"], RuntimeError)
