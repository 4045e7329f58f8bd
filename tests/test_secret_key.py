"""The server's secret key: one private file per data directory, the same for every process, restart and Redis state."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from app import create_app
from components.services.secret_key import FILE_NAME, KEY_TEXT, server_secret

ROOT = Path(__file__).resolve().parents[1]


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_the_key_is_made_once_private_and_kept(tmp_path):
    key = server_secret(tmp_path)
    path = tmp_path / FILE_NAME
    assert KEY_TEXT.fullmatch(key)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert server_secret(tmp_path) == key
    assert [p.name for p in tmp_path.iterdir() if not p.name.startswith(".")] == [FILE_NAME]


def test_apps_over_one_data_directory_sign_with_one_key_across_restarts(tmp_path):
    first = create_app(tmp_path / "data")
    key = first.server.secret_key
    assert KEY_TEXT.fullmatch(key)
    assert first._get_signing_secret() == key.encode()   # what Dash signs background-callback handles with
    restarted = create_app(tmp_path / "data")
    assert restarted._get_signing_secret() == key.encode()


def test_with_redis_down_at_start_every_process_still_signs_with_the_same_key(tmp_path, monkeypatch):
    """Without the key file, Dash would fall back to a random key per process while Redis is unreachable: a
    background run started through one gunicorn worker could then not be polled through another."""
    monkeypatch.setenv("REDIS_URL", f"redis://127.0.0.1:{closed_port()}/0")
    one, two = create_app(tmp_path / "data"), create_app(tmp_path / "data")
    assert one._get_signing_secret() == two._get_signing_secret() == server_secret(tmp_path / "data").encode()


@pytest.mark.parametrize("planted", ["not a key", "ab" * 31, "", "\x80\x04pickle"])
def test_a_file_that_holds_no_key_is_replaced(tmp_path, planted, caplog):
    (tmp_path / FILE_NAME).write_bytes(planted.encode("latin-1"))
    key = server_secret(tmp_path)
    assert KEY_TEXT.fullmatch(key) and (tmp_path / FILE_NAME).read_text().strip() == key
    assert stat.S_IMODE((tmp_path / FILE_NAME).stat().st_mode) == 0o600
    assert sum("a new key replaces it" in r.getMessage() for r in caplog.records) == 1


def test_a_symlink_in_place_of_the_key_is_replaced_and_its_target_untouched(tmp_path):
    target = tmp_path / "elsewhere"
    target.write_text("ab" * 32)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / FILE_NAME).symlink_to(target)
    key = server_secret(tmp_path / "data")
    assert key != "ab" * 32 and not (tmp_path / "data" / FILE_NAME).is_symlink()
    assert target.read_text() == "ab" * 32


def test_a_key_file_others_can_read_is_made_private(tmp_path):
    key = server_secret(tmp_path)
    os.chmod(tmp_path / FILE_NAME, 0o644)
    assert server_secret(tmp_path) == key
    assert stat.S_IMODE((tmp_path / FILE_NAME).stat().st_mode) == 0o600


def test_processes_starting_at_once_agree_on_one_key(tmp_path):
    code = ("import sys; from components.services.secret_key import server_secret; "
            "print(server_secret(sys.argv[1]))")
    starts = [subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], cwd=ROOT, stdout=subprocess.PIPE,
                               text=True) for _ in range(6)]
    keys = {start.communicate(timeout=60)[0].strip() for start in starts}
    assert len(keys) == 1 and KEY_TEXT.fullmatch(keys.pop())
