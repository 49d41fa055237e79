"""The line lists' caches of drawn lines, as the cyclic collector sees them. At 10,000 queries the worst `]`
presses (60-120 ms, against a median of ~22) were full collections walking what the collector could see since
the first screen's freeze, most of it the three lists' cached lines: each a Strip with seven small caches of its
own and its Segments, 2048 lines a list. And each line the cache let go stayed until such a collection: drawn
with `crop_extend(0, width)` on a strip already `width` long, the strip was its own crop and cached itself."""

from __future__ import annotations

import gc

from textual.strip import Strip

from ragdiff.app.widgets.line_list import LINE_CACHE
from ragdiff.app.widgets.query_list import QueryList
from ragdiff.app.widgets.ranked_list import RankedList

from test_app_keys import send_keys
from test_app_pilot import sample_app

SIZE = (140, 40)


def _lists(app):
    return [app.query_one(QueryList), *app.query(RankedList)]


async def test_a_line_evicted_from_a_list_cache_is_freed_at_once_not_at_a_collection(sample_runs, settled):
    app = sample_app(sample_runs)
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        await send_keys(pilot, *["right_square_bracket"] * 4, "tab", "j", "j")
        await settled(pilot)
        gc.collect()
        was_on = gc.isenabled()
        gc.disable()
        try:
            cached = {id(widget._cache.get(key)) for widget in _lists(app) for key in widget._cache.keys()}
            for widget in _lists(app):  # evicted as use evicts them: new lines pushed in until the old are out
                for n in range(LINE_CACHE):
                    widget._cache[("filler", n)] = Strip([])
            gc.set_debug(gc.DEBUG_SAVEALL)
            gc.collect()
            in_cycles = [o for o in gc.garbage if isinstance(o, Strip) and id(o) in cached]
        finally:
            gc.set_debug(0)
            gc.garbage.clear()
            if was_on:
                gc.enable()
        assert len(cached) > 30  # the three lists' lines on screen at least
        assert in_cycles == [], f"{len(in_cycles)} of {len(cached)} evicted lines were garbage only a collection frees"


async def test_a_list_keeps_a_few_screens_of_lines_not_thousands(sample_runs, settled):
    """Enough for what is drawn again (the rows a k change or a closed screen exposes, the query `[` goes back
    to), bounded by screens: what a tall terminal shows of the three lists times eight at most."""
    app = sample_app(sample_runs)
    async with app.run_test(size=(200, 60)) as pilot:
        await settled(pilot)
        rows = max(widget.scrollable_content_region.height for widget in _lists(app))
        assert rows >= 30
        assert LINE_CACHE <= 8 * rows
        await send_keys(pilot, *["right_square_bracket", "plus", "minus"] * 20)
        await settled(pilot)
        assert all(len(widget._cache) <= LINE_CACHE for widget in _lists(app))
        assert max(len(widget._cache) for widget in _lists(app)) > rows  # lines are kept: the cache is used
