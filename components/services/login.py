"""Optional login: a file of users and password hashes, or a user name set by a trusted reverse proxy.

Without either setting the app is single-user, as it always was: nothing
asks for a login. With one of them, every request but the login page's
needs a signed-in user:

``SCHEDSCOPE_USERS``
    A file of ``name:password hash`` lines (``#`` starts a comment), hashes as
    Werkzeug's ``generate_password_hash`` writes them; make a line with
    ``python -m components.services.login NAME`` (it asks for the password).
    ``/login`` checks a name and password and keeps the user in Flask's
    session cookie (signed with the server key, HttpOnly, SameSite=Lax);
    ``/logout`` forgets it. The file is read again when it changes, so a
    removed user is signed out at their next request.
``SCHEDSCOPE_USER_HEADER``
    The name of a request header (e.g. ``X-Forwarded-User``) that the reverse
    proxy in front of the app sets to the user it authenticated. The app
    trusts it as it comes: use it only when nothing but that proxy can reach
    the app, and the proxy overwrites the header on every request.

A page asked for without a user is redirected to ``/login`` (with the page to
return to); any other request (callbacks, downloads, scripts) is answered 401.

:func:`current_user` names the signed-in user of the request -- or, in a
background run, the user who started it: the job managers carry the name
in the job's callback context (``custom_data``, Dash's public way to pass
data to a background callback; see :class:`components.services.jobs.CarryUser`).
With no login it is ``None``, and the app is single-user.
"""

from __future__ import annotations

import functools
import getpass
import html
import logging
import os
import secrets
import sys
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from dash import callback_context
from dash.exceptions import MissingCallbackContextException
from flask import Flask, Response, current_app, has_request_context, redirect, request, session
from werkzeug.security import check_password_hash, generate_password_hash

log = logging.getLogger(__name__)

USERS_ENV = "SCHEDSCOPE_USERS"
HEADER_ENV = "SCHEDSCOPE_USER_HEADER"
LOGIN, LOGOUT = "/login", "/logout"
SESSION_USER = "user"
#: The Flask config entry naming the login in force: "users", "header", or absent (single-user).
MODE_CONFIG, HEADER_CONFIG = "SCHEDSCOPE_LOGIN", "SCHEDSCOPE_USER_HEADER"
#: The key of a background job's ``custom_data`` that names the user who started it.
JOB_USER = "schedscope_user"


class UsersFileError(ValueError):
    """The users file cannot be read or has a line that is not ``name:hash``."""


def read_users(path: Path) -> dict[str, str]:
    """``{name: password hash}`` of a users file; raises :class:`UsersFileError` naming the file and line."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsersFileError(f"{USERS_ENV}: cannot read {path} ({exc})") from None
    users = {}
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, colon, password_hash = line.partition(":")
        if not colon or not name.strip() or "$" not in password_hash:
            raise UsersFileError(f"{USERS_ENV}: {path} line {number} is not 'name:password hash'")
        users[name.strip()] = password_hash.strip()
    return users


@dataclass
class UsersFile:
    """The users file, read again whenever its modification time changes."""

    path: Path
    _stamp: int | None = None
    _users: dict[str, str] = field(default_factory=dict)

    def users(self) -> dict[str, str]:
        try:
            stamp = self.path.stat().st_mtime_ns
        except OSError as exc:
            raise UsersFileError(f"{USERS_ENV}: cannot read {self.path} ({exc})") from None
        if stamp != self._stamp:
            self._users, self._stamp = read_users(self.path), stamp
        return self._users

    def check(self, name: str, password: str) -> bool:
        known = self.users().get(name)
        matches = check_password_hash(known or _unknown_user_hash(), password)
        return known is not None and matches


@functools.cache
def _unknown_user_hash() -> str:
    """A hash checked when the name is unknown, so that a wrong name takes as long as a wrong password."""
    return generate_password_hash(secrets.token_hex(16))


def install(server: Flask, environ=None) -> None:
    """Ask for a login on ``server`` when ``SCHEDSCOPE_USERS`` or ``SCHEDSCOPE_USER_HEADER`` is set."""
    environ = os.environ if environ is None else environ
    header = environ.get(HEADER_ENV, "").strip()
    users_path = environ.get(USERS_ENV, "").strip()
    if header:
        server.config.update({MODE_CONFIG: "header", HEADER_CONFIG: header})
        server.before_request(lambda: _require_header(header))
    elif users_path:
        users = UsersFile(Path(users_path))
        users.users()   # a missing or malformed file stops the server at start, naming the line
        server.config.update({MODE_CONFIG: "users", "SESSION_COOKIE_HTTPONLY": True, "SESSION_COOKIE_SAMESITE": "Lax"})
        server.before_request(_require_session(users))
        server.add_url_rule(LOGIN, "login", _login_view(users), methods=["GET", "POST"])
        server.add_url_rule(LOGOUT, "logout", _logout, methods=["GET", "POST"])


def enabled(server: Flask) -> bool:
    """Whether ``server`` asks for a login (then every item has owners; see :mod:`.access`)."""
    return bool(server.config.get(MODE_CONFIG))


def current_user() -> str | None:
    """The user a background run was started by, else the request's signed-in user; None without a login."""
    try:
        carried = callback_context.custom_data.get(JOB_USER)
    except (MissingCallbackContextException, LookupError):   # not in a callback (a page, a download)
        carried = None
    if carried:
        return carried
    if not has_request_context():
        return None
    mode = current_app.config.get(MODE_CONFIG)
    if mode == "header":
        return request.headers.get(current_app.config[HEADER_CONFIG]) or None
    if mode == "users":
        return session.get(SESSION_USER)
    return None


def _require_header(header: str):
    if not request.headers.get(header):
        log.warning("refused %s %s: no %s header from the proxy", request.method, request.path, header)
        return Response(f"Sign in through the site's proxy (no {header} header).", status=401,
                        mimetype="text/plain")
    return None


def _require_session(users: UsersFile):
    def check():
        try:
            known = users.users()
        except UsersFileError as exc:   # removed or broken while serving: nobody is let in until it is fixed
            log.error("%s; every request is refused until it is readable", exc)
            return Response("Sign-in is unavailable: the server's list of users cannot be read.", status=503,
                            mimetype="text/plain")
        if request.path == LOGIN:
            return None
        user = session.get(SESSION_USER)
        if user is not None and user in known:
            return None
        session.pop(SESSION_USER, None)
        if request.method == "GET" and "text/html" in request.headers.get("Accept", ""):
            return redirect(f"{LOGIN}?next={quote(request.full_path.rstrip('?'))}")
        return Response("Sign in first (/login).", status=401, mimetype="text/plain")
    return check


def _safe_next(target: str | None) -> str:
    """A page of this app to go back to: a local path, never another site (``//host``, ``/\\host``, schemes)."""
    if not target or not target.startswith("/") or target.startswith(("//", "/\\")) or any(
            ord(ch) < 32 for ch in target):
        return "/"
    return target


def _login_view(users: UsersFile):
    def login():
        target = _safe_next(request.values.get("next"))
        if request.method == "GET":
            return _login_page(target, "")
        name, password = request.form.get("name", ""), request.form.get("password", "")
        if name and users.check(name, password):
            session.clear()
            session[SESSION_USER] = name
            return redirect(target)
        log.warning("failed login for %r from %s", name[:80], request.remote_addr)
        return _login_page(target, "Wrong name or password."), 401
    return login


def _logout():
    session.clear()
    return redirect(LOGIN)


def _login_page(target: str, message: str) -> Response:
    """The sign-in form; its empty icon keeps the browser from asking for /favicon.ico, which answers 401."""
    note = f'<p class="error">{html.escape(message)}</p>' if message else ""
    page = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>schedscope: sign in</title><link rel="icon" href="data:,">
<style>body{{font-family:sans-serif;max-width:22rem;margin:4rem auto}}label{{display:block;margin:.6rem 0}}
input{{width:100%}}.error{{color:#b00020}}</style></head>
<body><h1>schedscope</h1>{note}
<form method="post" action="{LOGIN}">
<input type="hidden" name="next" value="{html.escape(target)}">
<label>Name <input name="name" autocomplete="username" required autofocus></label>
<label>Password <input name="password" type="password" autocomplete="current-password" required></label>
<button type="submit">Sign in</button></form></body></html>"""
    return Response(page, mimetype="text/html")


def main(argv: list[str]) -> int:
    """``python -m components.services.login NAME``: print a users-file line for NAME (asks for the password)."""
    if len(argv) != 1 or ":" in argv[0] or not argv[0].strip():
        sys.stderr.write("usage: python -m components.services.login NAME   (a name without ':')\n")
        return 2
    password = getpass.getpass(f"password for {argv[0]}: ")
    if password != getpass.getpass("again: "):
        sys.stderr.write("the passwords differ\n")
        return 1
    sys.stdout.write(f"{argv[0]}:{generate_password_hash(password)}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
