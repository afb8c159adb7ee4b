"""A UI session cookie replayed by another user's process is refused (session 23, review11).

Browsers send a host's cookies to every port of it, so a process of another user listening on another port of
127.0.0.1 received the UI's session cookie when the signed-in browser visited it (shown with Chromium), and could
replay it: every page, every memory and every whisper prompt. A real server here; the replaying process is a
child that becomes uid 65534 before it connects (root only).
"""

from __future__ import annotations

import http.cookiejar
import os
import re
import signal
import subprocess
import sys
import urllib.parse
import urllib.request

import pytest

from tests.faults.support import MANAGE, child_env
from tests.support.ports import free_port, listening, wait_until

REPLAY = r"""
import encodings.idna, sys, urllib.request, urllib.error
if sys.argv[3] == "nobody":
    import os
    os.setgroups([]); os.setgid(65534); os.setuid(65534)
request = urllib.request.Request(sys.argv[1], headers={"Cookie": sys.argv[2]})
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
try:
    with opener.open(request, timeout=30) as answer:
        print(answer.status, answer.read().decode("utf-8", "replace")[:2000])
except urllib.error.HTTPError as exc:
    print(exc.code, exc.read().decode("utf-8", "replace")[:2000])
"""


@pytest.fixture(scope="module")
def signed_in(tmp_path_factory):
    """A real `ormah serve`, and the session cookie of a sign-in to it."""
    if os.geteuid() != 0:
        pytest.skip("replaying as another user needs root")
    home = tmp_path_factory.mktemp("session") / "home"
    env = child_env(home)
    subprocess.run([sys.executable, MANAGE, "init", "--quiet"], env=env, check=True, timeout=120,
                   capture_output=True)
    port = free_port()
    proc = subprocess.Popen([sys.executable, MANAGE, "serve", "--port", str(port)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)

    try:
        assert wait_until(lambda: listening(port), 90), "server did not start"
        base = f"http://127.0.0.1:{port}"
        jar = http.cookiejar.CookieJar()
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), urllib.request.HTTPCookieProcessor(jar))
        form = opener.open(f"{base}/login/", timeout=30).read().decode()
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form).group(1)
        body = urllib.parse.urlencode({"csrfmiddlewaretoken": token, "username": "ormah",
                                       "password": (home / "ui_password").read_text().strip()}).encode()
        opener.open(urllib.request.Request(f"{base}/login/", data=body, headers={"Referer": f"{base}/login/"}),
                    timeout=30).read()
        cookies = {c.name: c.value for c in jar}
        assert "sessionid" in cookies
        yield base, f"sessionid={cookies['sessionid']}"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _replay(url: str, cookie: str, who: str) -> tuple[int, str]:
    done = subprocess.run([sys.executable, "-c", REPLAY, url, cookie, who], capture_output=True, text=True,
                          timeout=60, cwd="/", check=True)
    status, _, text = done.stdout.partition(" ")
    return int(status), text


def test_the_owner_uses_the_session(signed_in):
    base, cookie = signed_in
    status, text = _replay(f"{base}/whisper/", cookie, "me")
    assert status == 200 and "<html" in text.lower()


@pytest.mark.parametrize("path", ["/whisper/", "/", "/graph/data/", "/admin/", "/api/docs"])
def test_another_users_process_cannot_replay_it(signed_in, path):
    base, cookie = signed_in
    status, text = _replay(f"{base}{path}", cookie, "nobody")
    assert status == 403
    assert "another user" in text or (path.startswith("/api/") and '"error": "forbidden"' in text)  # the API's shape


def test_without_the_cookie_another_user_gets_the_usual_answers(signed_in):
    base, _ = signed_in
    status, _ = _replay(f"{base}/login/", "", "nobody")
    assert status == 200
