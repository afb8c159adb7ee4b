"""The wheel is a real package: built from the tracked files, installed into a fresh venv outside the checkout, it
initialises a home, serves (web, job cluster, watcher: no manage.py), remembers and recalls over HTTP and shows the UI.

Offline: the wheel is built with --no-build-isolation and installed with --no-index --no-deps; its dependencies
come from the running interpreter's site-packages through a .pth file (the way a wheelhouse would, without copies).
"""

from __future__ import annotations

import http.cookiejar
import json
import os
import re
import signal
import socket
import subprocess
import sys
import sysconfig
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from tests.support.ports import free_port

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]


def sh(*cmd, **kwargs) -> subprocess.CompletedProcess:
    out = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=600, **kwargs)
    assert out.returncode == 0, f"{cmd}: {out.stdout}\n{out.stderr}"
    return out


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """A venv outside the checkout with the freshly built wheel installed; returns its bin/ folder."""
    tmp = tmp_path_factory.mktemp("wheel")
    source = tmp / "src"
    tracked = sh("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", cwd=ROOT).stdout
    for name in filter(None, tracked.split("\0")):
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            (source / name).write_bytes((ROOT / name).read_bytes())
    sh(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
       "--disable-pip-version-check", "-w", tmp / "dist", source)
    wheel = next((tmp / "dist").glob("ormah_memory-*.whl"))
    sh(sys.executable, "-m", "venv", "--without-pip", tmp / "venv")
    venv_python = tmp / "venv" / "bin" / "python"
    sh(sys.executable, "-m", "pip", "--python", venv_python, "install", "--quiet", "--no-deps", "--no-index",
       "--disable-pip-version-check", wheel)
    purelib = Path(sh(venv_python, "-I", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").stdout.strip())
    (purelib / "zz_ormah_test_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return tmp / "venv" / "bin"


def clean_env(home: Path, port: int) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ORMAH_", "DJANGO_")) and k != "PYTHONPATH"}
    return {**env, "ORMAH_HOME": str(home), "ORMAH_PORT": str(port), "ORMAH_LOG_LEVEL": "WARNING"}


def test_the_package_holds_its_code_templates_and_static(installed):
    env = clean_env(installed.parent / "unused-home", free_port())
    where = sh(installed / "python", "-c", "import ormah_site, memory; print(ormah_site.__file__, memory.__file__)",
               cwd="/", env=env).stdout.split()
    assert all(w.startswith(str(installed.parent)) for w in where), where
    package = Path(where[0]).parent
    assert (package / "templates" / "base.html").is_file()
    assert list((package / "static").rglob("*.js"))
    assert not list((installed.parent / "lib").rglob("manage.py"))
    assert sh(installed / "ormah", "--version", cwd="/", env=env).stdout.startswith("ormah ")


def test_init_serve_remember_recall_and_the_ui_from_the_wheel(installed, tmp_path):
    port = free_port()
    home = tmp_path / "home"
    env = clean_env(home, port)
    sh(installed / "ormah", "init", "--quiet", env=env, cwd=tmp_path)
    proc = subprocess.Popen([installed / "ormah", "serve"], env=env, cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.3)
        assert proc.poll() is None, proc.stdout.read()
        base = f"http://127.0.0.1:{port}"
        token = (home / "api_token").read_text().strip()

        def api(path, body):
            request = urllib.request.Request(base + path, data=json.dumps(body).encode(), method="POST", headers={
                "Authorization": f"Bearer {token}", "Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=120) as response:
                return json.loads(response.read())

        node = api("/api/agent/remember", {"content": "The wheel install keeps notes in ORMAH_HOME"})["node"]
        hits = api("/api/agent/recall", {"query": "where does the wheel install keep notes"})["results"]
        assert hits and hits[0]["id"] == node["id"]

        jar = http.cookiejar.CookieJar()
        browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        login = browser.open(base + "/login/", timeout=60).read().decode()
        csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', login).group(1)
        form = urllib.parse.urlencode({"username": "ormah", "password": (home / "ui_password").read_text().strip(),
                                       "csrfmiddlewaretoken": csrf, "next": "/"}).encode()
        page = browser.open(urllib.request.Request(base + "/login/", data=form, headers={"Referer": base + "/login/"}),
                            timeout=60)
        assert page.url.rstrip("/") == base and page.status == 200
        html = page.read().decode()
        assert "The wheel install keeps notes" in html or "<nav" in html
        asset = re.search(r'(?:src|href)="(/static/[^"]+\.(?:js|css))"', html).group(1)
        assert browser.open(base + asset, timeout=60).status == 200

        children = sh("ps", "-ww", "-o", "args=", "--ppid", proc.pid).stdout
        assert "ormah_site.cli admin qcluster" in children and "gunicorn" in children
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        output = proc.communicate(timeout=60)[0]
    assert "manage.py" not in output and "Traceback" not in output, output
