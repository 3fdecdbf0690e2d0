"""A protocol-level Streamlit client: one browser tab spoken over the app's own websocket,
without a browser — the load of many students at the cost of a few coroutines.

It speaks what Streamlit's frontend speaks (``/_stcore/stream``, the ``streamlit``
subprotocol, ``BackMsg`` / ``ForwardMsg`` protos): a :class:`Tab` asks for a script run of a
page with a query string, reads the deltas it gets back (the widgets' ids by their keys,
the texts of alerts, markdown and progress bars), and — as the frontend does — reruns a
fragment every ``interval`` seconds when the server asks for it (``auto_rerun``), so a Live
training page polls as it does in a browser. A click is a rerun with the button's trigger;
a slider move is a rerun with its new value (the other widgets keep theirs on the server).

    tab = Tab("http://localhost:8501", "live_training", "dataset=karate&lt_epochs=20")
    await tab.open()
    await tab.click("lt_start")
"""
from __future__ import annotations

import asyncio
import time

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

#: Element kinds whose text a :class:`Tab` keeps (and the field that holds it).
TEXT_FIELDS = {"alert": "body", "markdown": "body", "progress": "text", "heading": "body"}


class Tab:
    """One simulated browser tab on ``page`` (its URL path) with ``query`` (its query string).

    Attributes:
        widgets (dict): widget key -> id, from the deltas so far.
        texts (list[str]): the texts of the last full or fragment run's alerts, markdown,
            headings and progress bars.
        seen (set[str]): every such text seen since :meth:`open`.
        log (list[tuple[float, str]]): each such text with when it came (``time.monotonic()``).
        errors (list[str]): the messages of exceptions the page showed.
        runs (int): script runs finished (fragment runs included).
    """

    def __init__(self, url: str, page: str, query: str = ""):
        self.url, self.page, self.query = url, page, query
        self.widgets: dict[str, str] = {}
        self.texts: list[str] = []
        self.seen: set[str] = set()
        self.log: list[tuple[float, str]] = []
        self.errors: list[str] = []
        self.runs = 0
        self._finished = asyncio.Event()
        self._lock = asyncio.Lock()  # one script run asked for at a time, as the frontend does
        self._auto: dict[str, tuple[float, asyncio.Task]] = {}  # fragment -> its run_every timer
        self._announced: set[str] = set()  # fragments with run_every declared by this run
        self._ws = None
        self._reader = None

    async def open(self) -> None:
        """Connect and run the page once (its first render)."""
        self._ws = await websockets.connect(
            self.url.replace("http", "ws", 1) + "/_stcore/stream", subprotocols=["streamlit"],
            origin=self.url, max_size=None, ping_interval=None)
        self._reader = asyncio.create_task(self._read())
        await self.rerun()

    async def close(self) -> None:
        for fragment in list(self._auto):
            self._cancel(fragment)
        if self._ws is not None:
            await self._ws.close()
        if self._reader is not None:
            self._reader.cancel()

    async def rerun(self, states: list[WidgetState] | None = None, fragment_id: str = "",
                    auto: bool = False) -> float:
        """One script run (of ``fragment_id`` alone when given) with ``states``; the seconds
        it took, from the request to its ``script_finished``."""
        async with self._lock:
            msg = BackMsg()
            client = msg.rerun_script
            client.query_string, client.page_name = self.query, self.page
            client.widget_states.widgets.extend(states or [])
            if fragment_id:
                client.fragment_id, client.is_auto_rerun = fragment_id, auto
            self._finished.clear()
            self.texts = []
            t0 = time.monotonic()
            await self._ws.send(msg.SerializeToString())
            await self._finished.wait()
            return time.monotonic() - t0

    async def click(self, key: str) -> float:
        """Press the button ``key`` (a trigger, as the frontend sends it)."""
        return await self.rerun([WidgetState(id=self.widgets[key], trigger_value=True)])

    async def slide(self, key: str, value: float) -> float:
        """Move the slider ``key`` to ``value``."""
        state = WidgetState(id=self.widgets[key])
        state.double_array_value.data.append(float(value))
        return await self.rerun([state])

    def saw(self, words: str) -> bool:
        return any(words in text for text in self.seen)

    def first(self, words: str) -> float | None:
        """When a text with ``words`` first came (``None``: never)."""
        return next((t for t, text in self.log if words in text), None)

    async def _read(self) -> None:
        async for data in self._ws:
            msg = ForwardMsg()
            msg.ParseFromString(data)
            kind = msg.WhichOneof("type")
            if kind == "new_session":
                self._announced = set()
            elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
                self._element(msg.delta.new_element)
            elif kind == "auto_rerun":
                self._schedule(msg.auto_rerun.fragment_id, msg.auto_rerun.interval)
            elif kind == "stop_auto_rerun":
                for fragment in msg.stop_auto_rerun.fragment_ids:
                    self._cancel(fragment)
            elif kind == "script_finished":
                if msg.script_finished == ForwardMsg.FINISHED_SUCCESSFULLY:  # a full run: the fragments
                    for fragment in set(self._auto) - self._announced:  # it did not declare stop
                        self._cancel(fragment)
                self.runs += 1
                self._finished.set()

    def _schedule(self, fragment: str, interval: float) -> None:
        """The frontend's timer for a fragment's ``run_every`` (one per fragment)."""
        self._announced.add(fragment)
        if fragment in self._auto and self._auto[fragment][0] == interval:
            return
        self._cancel(fragment)
        self._auto[fragment] = (interval, asyncio.create_task(self._every(interval, fragment)))

    def _cancel(self, fragment: str) -> None:
        if fragment in self._auto:
            self._auto.pop(fragment)[1].cancel()

    def _element(self, element) -> None:
        kind = element.WhichOneof("type")
        inner = getattr(element, kind)
        if kind == "exception":
            self.errors.append(f"{inner.type}: {inner.message}")
        if kind in TEXT_FIELDS:
            text = getattr(inner, TEXT_FIELDS[kind])
            self.texts.append(text)
            if text not in self.seen:
                self.seen.add(text)
                self.log.append((time.monotonic(), text))
        widget_id = getattr(inner, "id", "")
        if isinstance(widget_id, str) and widget_id.startswith("$$ID-"):
            self.widgets[widget_id.rsplit("-", 1)[-1]] = widget_id

    async def _every(self, interval: float, fragment: str) -> None:
        while True:
            await asyncio.sleep(interval)
            await self.rerun(fragment_id=fragment, auto=True)
