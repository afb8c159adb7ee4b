"""A local LLM named by the wildcard address (http://0.0.0.0:11434, as OLLAMA_HOST=0.0.0.0 is often written) is on
this machine too: reached directly, never through HTTP_PROXY, which would be handed every memory a job sends
(session 23, review12; maintenance.llm.openai took only loopback names for local)."""

from __future__ import annotations

import os

import pytest

from tests.security.recorder import recorded
from tests.security.test_no_proxy import _llm, proxy  # noqa: F401 (proxy is a fixture)


@pytest.mark.parametrize("host", ["0.0.0.0", "[::]"])
def test_a_local_llm_at_the_wildcard_address_is_reached_direct(proxy, host):  # noqa: F811
    from pydantic import BaseModel

    from maintenance.errors import LLMUnavailable

    llm = _llm(f"http://{host}:{os.environ['ORMAH_PORT']}/v1")
    with pytest.raises(LLMUnavailable):
        llm.complete_json(system="s", user="memory text: the staging password is hunter2", schema=BaseModel)
    llm.close()
    assert recorded(proxy) == ""
