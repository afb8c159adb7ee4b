"""The UI's markdown: images in a memory are shown as links, so a screen never fetches what a memory names."""

from __future__ import annotations

from ormah_site.ui.render import markdown_html


def test_an_image_is_a_link_to_it_named_by_its_alt_text():
    html = markdown_html('See ![the *build* <badge>](https://ci.example/badge.svg "CI") and ![](docs/img/star.png).')
    assert "<img" not in html
    assert '<a href="https://ci.example/badge.svg" class="image-link">image: the build &lt;badge&gt;</a>' in html
    assert '<a href="docs/img/star.png" class="image-link">image: docs/img/star.png</a>' in html


def test_an_inline_data_image_keeps_only_its_name():
    html = markdown_html("![pixel](data:image/png;base64,iVBORw0KGgo=) and ![x](javascript:alert(1))")
    assert "<img" not in html and 'href="data:' not in html and "image: pixel" in html
    assert 'href="javascript' not in html


def test_a_linked_image_is_the_links_name_never_a_link_inside_it():
    # A README's badge, [![build](badge.svg)](ci): an <a> inside the link's <a> is not HTML; the browser closes the
    # outer link at the inner one, so the CI link was empty and "image: build" led to the badge's file (review10)
    html = markdown_html("[![build](https://ci.example/badge.svg)](https://ci.example/runs)")
    assert html.count("<a ") == 1
    assert '<a href="https://ci.example/runs"><span class="image-link">image: build</span></a>' in html


def test_an_inline_data_image_without_alt_text_is_not_its_data():
    html = markdown_html("![](data:image/png;base64," + "A" * 4000 + ")")
    assert "AAAA" not in html and "image-link" in html
