"""The thin client's ids: one with a slash can match no route, so it is refused before the call, in the API's words."""

from __future__ import annotations

import pytest

from ormah_site.cli.client import ApiError
from ormah_site.cli.thin import _ref


def test_an_id_with_a_slash_is_refused_in_the_api_s_words_not_as_a_missing_route():
    with pytest.raises(ApiError) as refused:
        _ref("../../etc/passwd")
    assert refused.value.message == "'../../etc/passwd' is not a node id or an id prefix of at least 4 hex characters"
    assert _ref(" d2f4a6e7 ") == "d2f4a6e7"
