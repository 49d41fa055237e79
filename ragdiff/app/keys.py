"""Keys handled in the order they arrive, each one whole before the next (see ragdiff.app.app's docstring).

Both apps (review and judge) derive from `OrderedKeysApp`: every key is counted, offered first to
`take_key` (a search line being typed into takes the letters before any binding sees them), and then
goes to Textual's priority bindings, which run as the key arrives.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from textual import events
from textual.app import App
from textual.binding import Binding

from ragdiff.core import vocab


def key(*args, **kwargs) -> Binding:
    """A binding that runs as its key arrives (priority), not after the key has bubbled through the DOM."""
    return Binding(*args, **kwargs, priority=True)


# the key of each judgment kind, the same on the review screen and in the judging queue
LABEL_KEYS = ((vocab.GOLD, "g"), (vocab.EVIDENCE, "e"), (vocab.NOT_RELEVANT, "x"))


def label_keys(action: str, prefix: str, tooltips: dict[str, str]) -> list[Binding]:
    """g, e, x: `action('gold')` and so on, ids `prefix.gold` and so on, each with its tooltip."""
    return [key(letter, f"{action}('{kind}')", vocab.word(kind), id=f"{prefix}.{kind}", tooltip=tooltips[kind])
            for kind, letter in LABEL_KEYS]


# Keys that leave the app (Textual's own: ctrl+q quits, ctrl+c says how to): never held for a screen still being
# made, so quitting while the judging queue is built acts at once rather than when it is done
def binding_keys(bindings, *actions: str) -> frozenset[str]:
    """Every key of the `bindings` whose action is one of `actions` (a binding's key may list several)."""
    return frozenset(k.strip() for b in bindings if b.action in actions for k in b.key.split(","))


QUIT_KEYS = binding_keys(App.BINDINGS, "quit", "help_quit")


class OrderedKeysApp(App[int]):
    def __init__(self) -> None:
        super().__init__()
        self.keys_seen = 0  # keys received (a grade digit refines a `g` only as the very next key)
        self.keys_done = 0  # keys whose action has run (tests that type fast wait on it)
        # keys and pastes waiting for a screen still being made (hold_keys), in arrival order
        self._held: list[events.Key | events.Paste] | None = None
        self._call_off: tuple[frozenset[str], Callable[[], None]] | None = None  # hold_keys' close keys

    async def on_event(self, event: events.Event) -> None:
        if self._held is not None and isinstance(event, events.MouseEvent) and not event.is_forwarded:
            return  # dropped, not held: aimed at the screen below, it means nothing on the screen being made
        if isinstance(event, (events.Key, events.Paste)) and not event.is_forwarded:
            if self._held is not None and not (isinstance(event, events.Key) and event.key in QUIT_KEYS):
                if not self._held and self._call_off and isinstance(event, events.Key) \
                        and event.key in self._call_off[0]:
                    self._called_off()
                    return
                self._held.append(event)  # a paste waits with the keys: it is typing too, in its place
                return
            if isinstance(event, events.Key):
                await self._take_key_event(event)
                return
            if self.take_paste(event.text):
                return
        await super().on_event(event)

    async def _take_key_event(self, event: events.Key) -> None:
        self.keys_seen += 1
        try:
            if not self.take_key(event):
                await super().on_event(event)
        finally:
            self.keys_done += 1

    # ---- keys for a screen that is still being made (the judging queue built in a worker) -----------------

    def hold_keys(self, close_keys: frozenset[str] = frozenset(), call_off: Callable[[], None] | None = None) -> None:
        """From now on keys and pastes wait, in arrival order, until `release_keys` (they are meant for a screen
        a worker is still making: acting on the screen below, `x` would mark the review's chunk instead, a paste
        would go to the review's search line). The quit keys (QUIT_KEYS) are never held. Nor is one of the new
        screen's `close_keys` typed before any other key: it closes that screen before it opens, at once —
        `call_off()`, and the keys after it act on the screen below, as they would once the screen had opened
        and closed (after another key it is held in its place: then it is that screen's, e.g. a letter in its
        search line). Mouse events are dropped meanwhile: a click aimed at the screen below, replayed on the new
        one, would land on whatever is drawn there."""
        if self._held is None:
            self._held = []
            self._call_off = (close_keys, call_off) if call_off is not None else None

    @property
    def holding_keys(self) -> bool:
        return self._held is not None

    def _called_off(self) -> None:
        """A close key with nothing held before it: taken (counted as a key acted on), no longer holding."""
        _, call_off = self._call_off
        self._held = self._call_off = None
        self.keys_seen += 1
        self.keys_done += 1
        call_off()

    async def release_keys(self) -> None:
        """The held keys and pastes, each whole and in order, on the screen now up; keys arriving meanwhile queue
        behind them (this runs inside one message handler, so the app takes no other message until it ends)."""
        held, self._held, self._call_off = self._held or [], None, None
        for event in held:
            if isinstance(event, events.Key):
                await self._take_key_event(event)
            elif not self.take_paste(event.text):
                await super().on_event(event)

    def drop_held_keys(self) -> int:
        """Forget the held keys and pastes (the screen they were meant for could not be made); how many keys."""
        held, self._held, self._call_off = self._held or [], None, None
        keys = sum(isinstance(event, events.Key) for event in held)
        self.keys_seen += keys
        self.keys_done += keys
        return keys

    def take_key(self, event: events.Key) -> bool:
        """True when the key was taken (typed into a search line); the active screen may take it too."""
        taker = getattr(self.screen, "take_key", None)
        return bool(taker and taker(event))

    def take_paste(self, text: str) -> bool:
        taker = getattr(self.screen, "take_paste", None)
        return bool(taker and taker(text))


def paste_into(text: str, pasted: str) -> str:
    """A paste typed onto a search line's `text` where the cursor is (its end): each run of white space, a line
    break included, is one space, kept at either end so the pasted words stay apart from the words there."""
    return text + re.sub(r"\s+", " ", pasted)


def edit_line(text: str, event: events.Key) -> tuple[str, str | None]:
    """A one-line editor for a search line: (new text, what ended it: "enter" | "escape" | "leave" | None).

    "leave": tab, shift+tab, up or down end the line (keeping the text) and then do what they usually do.
    """
    name = event.key
    if name in ("enter", "escape"):
        return text, name
    if name == "backspace":
        return text[:-1], None
    if name in ("ctrl+u", "ctrl+w"):
        return "", None
    if name in ("tab", "shift+tab", "down", "up"):
        return text, "leave"
    if event.character is not None and len(event.character) == 1 and event.character.isprintable():
        return text + event.character, None
    return text, None
