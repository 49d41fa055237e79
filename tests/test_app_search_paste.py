"""A paste into the review's search line (`/`) is typing: it lands where the cursor is, after the text already
there, and its white space (a line break included) stays one space, so pasted words never run into the words
typed before them. The review dropped the paste's white space at either end: `/refund` then a paste of
" window" searched for "refundwindow"."""

from __future__ import annotations

import pytest

from ragdiff.app.keys import paste_into

from test_app_judge_building import post_paste
from test_app_keys import keys_taken, post_keys
from test_app_pilot import lesson_app

SIZE = (140, 40)


@pytest.mark.parametrize("typed, pastes, searched", [
    ("refund", [" window\nfor", " ebooks"], "refund window for ebooks"),
    ("refund ", ["window", "\tfor\n\n", "ebooks"], "refund window for ebooks"),
    ("", ["who approves\r\n", "expenses"], "who approves expenses"),
])
async def test_a_paste_goes_on_from_the_search_text_typed_before_it(lesson, settled, typed, pastes, searched):
    app = lesson_app(lesson)
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        start = app.keys_done
        keys = ["slash", *(("space" if c == " " else c) for c in typed)]
        # the keys and the pastes in one go, as a fast typist's arrive; then a last key to wait for
        post_keys(app, *keys)
        for text in pastes:
            post_paste(app, text)
        post_keys(app, "enter")
        await keys_taken(pilot, start + len(keys) + 1)
        await settled(pilot)
        assert app.search == searched
        assert app.visible_ids == [q for q in app.model.visible() if searched in app.model.rows[q].text]
        assert len(app.visible_ids) == 1  # each search names one of the lesson's queries


def test_paste_into_keeps_the_words_apart():
    assert paste_into("refund", " window") == "refund window"
    assert paste_into("refund", "window") == "refundwindow"  # a paste with no space goes on from the cursor
    assert paste_into("q", "2 \n\n 9\n") == "q2 9 "
    assert paste_into("", "") == ""
