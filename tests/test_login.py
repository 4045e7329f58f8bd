"""Optional login: off by default; with a users file or a proxy's header, nothing is served to a stranger."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from werkzeug.security import check_password_hash, generate_password_hash

from app import create_app
from components.pages import scenario as scenario_page
from components.services.login import UsersFileError, read_users
from tests.support.dash_client import CONFIG, split_output

ROOT = Path(__file__).resolve().parents[1]
HTML = {"Accept": "text/html,application/xhtml+xml"}


def callback_body(client) -> dict:
    dependencies = client.get("/_dash-dependencies").get_json()
    dependency = next(d for d in dependencies if {"id": scenario_page.ids.HASH, "property": "data"} in d["inputs"])
    outputs = split_output(dependency["output"])
    return {"output": dependency["output"], "outputs": outputs if dependency["output"].startswith("..") else outputs[0],
            "inputs": [{**i, "value": None} for i in dependency["inputs"]],
            "state": [{**s, "value": None} for s in dependency["state"]],
            "changedPropIds": [f"{scenario_page.ids.HASH}.data"]}


def end_id(client) -> str:
    return json.loads(CONFIG.search(client.get("/", headers=HTML).get_data(as_text=True)).group(1))["end_id"]


@pytest.fixture
def users_file(tmp_path):
    path = tmp_path / "users"
    path.write_text(f"# the team\nada:{generate_password_hash('analytical engine')}\n\n"
                    f"grace:{generate_password_hash('cobol')}\n")
    return path


@pytest.fixture
def guarded(tmp_path, users_file, monkeypatch):
    monkeypatch.setenv("SCHEDSCOPE_USERS", str(users_file))
    monkeypatch.delenv("SCHEDSCOPE_USER_HEADER", raising=False)
    return create_app(tmp_path / "data").server.test_client()


def test_without_settings_nothing_asks_for_a_login(tmp_path, monkeypatch):
    monkeypatch.delenv("SCHEDSCOPE_USERS", raising=False)
    monkeypatch.delenv("SCHEDSCOPE_USER_HEADER", raising=False)
    client = create_app(tmp_path / "data").server.test_client()
    assert client.get("/", headers=HTML).status_code == 200
    assert 'name="password"' not in client.get("/login").get_data(as_text=True)   # just a path of the app


@pytest.mark.parametrize("path", ["/", "/batch", "/scenario/" + "ab" * 32, "/workspace?x=1"])
def test_a_page_without_a_user_goes_to_the_login_and_back(guarded, path):
    response = guarded.get(path, headers=HTML)
    assert response.status_code == 302 and response.headers["Location"].startswith("/login?next=")
    form = guarded.get(response.headers["Location"])
    assert form.status_code == 200 and 'name="password"' in form.get_data(as_text=True)
    signed_in = guarded.post("/login", data={"name": "ada", "password": "analytical engine", "next": path})
    assert signed_in.status_code == 302 and signed_in.headers["Location"] == path
    # Signed in, the page itself answers (a permalink to nothing says so with a 404, not with the login).
    assert guarded.get(path, headers=HTML).status_code == (404 if path.startswith("/scenario/") else 200)


@pytest.mark.parametrize("path, method", [("/_dash-layout", "GET"), ("/_dash-dependencies", "GET"),
                                          ("/_dash-update-component", "POST"), ("/download/" + "ab" * 32 + "/jobs.csv",
                                                                                "GET"),
                                          ("/export/figure.pdf", "POST"), ("/assets/style.css", "GET")])
def test_everything_else_is_a_401_without_a_user(guarded, path, method):
    response = guarded.open(path, method=method, json={} if method == "POST" else None)
    assert response.status_code == 401


def test_a_wrong_password_or_an_unknown_name_is_refused_in_one_log_line(guarded, caplog):
    for name, password in (("ada", "wrong"), ("nobody", "analytical engine"), ("", "")):
        response = guarded.post("/login", data={"name": name, "password": password})
        assert response.status_code == 401 and "Wrong name or password" in response.get_data(as_text=True)
    assert sum("failed login" in r.getMessage() for r in caplog.records) == 3
    assert guarded.get("/", headers=HTML).status_code == 302


def test_callbacks_run_for_a_signed_in_user_and_stop_after_logout(guarded):
    guarded.post("/login", data={"name": "grace", "password": "cobol"})
    body = callback_body(guarded)
    assert guarded.post(f"/_dash-update-component?endId={end_id(guarded)}", json=body).status_code == 200
    cookie = guarded.get_cookie("session")
    assert cookie.http_only and cookie.same_site == "Lax"
    assert guarded.get("/logout").headers["Location"] == "/login"
    assert guarded.post("/_dash-update-component", json=body).status_code == 401


def test_a_user_removed_from_the_file_is_signed_out(guarded, users_file):
    guarded.post("/login", data={"name": "grace", "password": "cobol"})
    assert guarded.get("/", headers=HTML).status_code == 200
    users_file.write_text(f"ada:{generate_password_hash('analytical engine')}\n# grace left\n")
    assert guarded.get("/", headers=HTML).status_code == 302


def test_a_users_file_broken_while_serving_lets_nobody_in(guarded, users_file):
    guarded.post("/login", data={"name": "grace", "password": "cobol"})
    users_file.write_text("grace\n")
    for path in ("/", "/login", "/_dash-layout"):
        assert guarded.get(path, headers=HTML).status_code == 503
    users_file.unlink()
    assert guarded.get("/", headers=HTML).status_code == 503


@pytest.mark.parametrize("target", ["//evil.example/", "https://evil.example/", "/\\evil.example", "javascript:x",
                                    "/\x0dSet-Cookie:x"])
def test_the_login_never_sends_anyone_to_another_site(guarded, target):
    response = guarded.post("/login", data={"name": "ada", "password": "analytical engine", "next": target})
    assert response.status_code == 302 and response.headers["Location"] == "/"


def test_a_session_from_another_data_directory_is_not_accepted(tmp_path, users_file, monkeypatch, guarded):
    """Sessions are signed with the data directory's server key: a cookie signed elsewhere is worthless."""
    monkeypatch.setenv("SCHEDSCOPE_USERS", str(users_file))
    elsewhere = create_app(tmp_path / "other").server.test_client()
    elsewhere.post("/login", data={"name": "ada", "password": "analytical engine"})
    guarded.set_cookie("session", elsewhere.get_cookie("session").value)
    assert guarded.get("/", headers=HTML).status_code == 302


def test_behind_a_proxy_its_header_names_the_user(tmp_path, monkeypatch):
    monkeypatch.setenv("SCHEDSCOPE_USER_HEADER", "X-Forwarded-User")
    monkeypatch.delenv("SCHEDSCOPE_USERS", raising=False)
    client = create_app(tmp_path / "data").server.test_client()
    assert client.get("/", headers=HTML).status_code == 401
    assert client.get("/", headers={**HTML, "X-Forwarded-User": "ada"}).status_code == 200
    form = client.get("/login", headers={"X-Forwarded-User": "ada"}).get_data(as_text=True)
    assert 'name="password"' not in form   # the proxy signs people in, not the app


@pytest.mark.parametrize("text, line", [("ada\n", 1), ("# ok\nada:plain-password\n", 2), (":x$y\n", 1)])
def test_a_malformed_users_file_stops_the_server_naming_the_line(tmp_path, monkeypatch, text, line):
    (tmp_path / "users").write_text(text)
    with pytest.raises(UsersFileError, match=f"line {line} is not 'name:password hash'"):
        read_users(tmp_path / "users")
    monkeypatch.setenv("SCHEDSCOPE_USERS", str(tmp_path / "users"))
    with pytest.raises(UsersFileError):
        create_app(tmp_path / "data")


def test_the_command_writes_a_line_for_the_users_file():
    made = subprocess.run([sys.executable, "-c", "import getpass, sys; getpass.getpass = lambda prompt='': 'pw'; "
                           "from components.services.login import main; sys.exit(main(['linus']))"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    name, _, password_hash = made.stdout.strip().partition(":")
    assert name == "linus" and check_password_hash(password_hash, "pw")
