"""A memory full of images renders in time linear in its length (session 23, review11).

The image rule asked, for each image, whether it stood inside a link by counting the link tokens from the start of
its line: 8,000 images (64 KB, under the 64 KiB content limit) took 5.7 s of CPU each time the node page showed
them. The cost is counted here as the lines run in ormah_site/ui/render.py (sys.settrace), not timed.
"""

from __future__ import annotations

import sys

from ormah_site.ui import render


def _lines_run(text: str) -> int:
    count = 0

    def trace(frame, event, arg):
        nonlocal count
        if frame.f_code.co_filename != render.__file__:
            return None
        if event == "line":
            count += 1
        return trace

    sys.settrace(trace)
    try:
        render.markdown_html(text)
    finally:
        sys.settrace(None)
    return count


def test_many_images_cost_lines_in_proportion_to_their_number():
    small, large = _lines_run("![a](b) " * 250), _lines_run("![a](b) " * 1000)
    assert large < 6 * small  # linear: about 4x; counting from the start for each image: about 16x


def test_an_image_inside_a_link_is_still_that_links_name():
    html = render.markdown_html("[![build](b.svg)](ci) ![x](y) [a](b) ![z](w)")
    assert html == ('<p><a href="ci"><span class="image-link">image: build</span></a> '
                    '<a href="y" class="image-link">image: x</a> <a href="b">a</a> '
                    '<a href="w" class="image-link">image: z</a></p>\n')
