"""``python -m sched_engine convert IN --out OUT``: a site's own files in the formats the engines read.

What ``OUT`` ends with chooses the conversion:

* ``.swf`` -- any readable workload (Slurm ``sacct``, PBS, SGE/UGE, LSF, or
  SWF/GWF/CSV) as Standard Workload Format (:mod:`.swf_writer`);
  ``--timezone`` names the zone of times written without one (``sacct``) and
  of the header; ``--anonymise`` replaces users and groups by salted hashes,
  the salt kept in the data directory (``$SCHEDSCOPE_DATA``, default
  ``data/``, file :data:`SALT_FILE`) so every file converted there agrees;
* ``.machines`` -- the hardware of a ``slurm.conf`` or of ``sinfo -N -o "%N %c %m %P"``;
* ``.json`` -- the organisation tree of a ``sacctmgr``/``sshare`` dump; with ``--anonymise`` its users and
  accounts get the stand-ins an anonymised log's jobs have (same salt), so the two still match.

A log whose jobs never ran (only queued or running ones), an unknown file,
or a bad record exits with status 2 and one line saying so.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
from pathlib import Path
from typing import Callable
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ..batch.traces import Workload, parse_workload, sniff_format
from ..core.errors import ScenarioError
from ..core.io import read_text
from . import kinds, reader
from .stream import read_log_path
from .swf_writer import write_swf

SALT_FILE = "anonymise.salt"
SUFFIXES = (".swf", ".machines", ".json")
WORKLOAD_FORMATS = ("swf", "swf-ext", "gwf", "csv")


def add_convert_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("input", help="a site's file: an accounting log, slurm.conf or sinfo output, sacctmgr/sshare dump")
    parser.add_argument("--out", required=True, help="OUT.swf (jobs), OUT.machines (hardware) or OUT.json (organisation)")
    parser.add_argument("--timezone", default="UTC", help="time zone of the log's clock, e.g. Europe/Prague (default UTC)")
    parser.add_argument("--anonymise", action="store_true",
                        help="replace users, groups and accounts (of a log or an organisation) by stable salted hashes")
    parser.add_argument("--format", default="auto",
                        help="the log's kind when it cannot be told from the file (auto, swf, gwf, csv, sacct, pbs, sge, lsf)")
    parser.add_argument("--skip-malformed", action="store_true", help="skip malformed records and count them")


def data_directory() -> Path:
    """The data directory the app uses: ``$SCHEDSCOPE_DATA``, else ``data``."""
    return Path(os.environ.get("SCHEDSCOPE_DATA", "data"))


def site_salt(directory: Path | None = None) -> bytes:
    """The salt of anonymised names, made once (32 random bytes, hex) and kept in the data directory."""
    path = (directory or data_directory()) / SALT_FILE
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        fresh = path.with_suffix(f".{os.getpid()}.tmp")
        fresh.write_text(secrets.token_hex(32) + "\n", encoding="ascii")
        fresh.chmod(0o600)
        if not path.exists():
            fresh.replace(path)
        else:
            fresh.unlink()
    salt = path.read_text(encoding="ascii").strip()
    if len(salt) < 16:
        raise ScenarioError("", "the anonymisation salt is too short: remove the file to make a new one", source=str(path))
    return salt.encode("ascii")


def read_log(text: str, fmt: str, *, source: str, timezone: str, skip_malformed: bool) -> Workload:
    """A workload of any readable kind; resource-manager logs read in ``timezone``."""
    kind = sniff_format(source, text) if fmt == "auto" else fmt
    log_reader = reader(kind)
    if log_reader is not None:
        return log_reader.parse(text, source=source, timezone=timezone, skip_malformed=skip_malformed)
    if kind not in WORKLOAD_FORMATS:
        known = ", ".join(("auto", *WORKLOAD_FORMATS, *kinds()))
        raise ScenarioError("format", f"unknown log kind {kind!r} (known: {known})", source=source)
    return parse_workload(text, kind, source=source, skip_malformed=skip_malformed)


def _checked_zone(name: str) -> str:
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ScenarioError("--timezone", f"unknown time zone {name!r} (a tz database name, e.g. Europe/Prague)") \
            from None
    return name


def _write_atomically(path: Path, write: Callable) -> None:
    """Write through a temporary file beside ``path`` and rename it, so a failure leaves no half file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with temporary.open("w", encoding="utf-8", newline="\n") as stream:
            write(stream)
        temporary.replace(path)
    finally:
        temporary.unlink(missing_ok=True)


def convert_log(source_path: Path, out: Path, args: argparse.Namespace, log: Callable[[str], None]) -> int:
    name = source_path.name
    zone = _checked_zone(args.timezone)
    workload = None
    if args.format == "auto" or reader(args.format) is not None:   # a log streams from its file
        workload = read_log_path(source_path, args.format, source=name, timezone=zone,
                                 skip_malformed=args.skip_malformed, compact=True)
    if workload is None:
        workload = read_log(read_text(source_path, source=name), args.format, source=name, timezone=zone,
                            skip_malformed=args.skip_malformed)
    if workload.jobs.empty:
        said = "; ".join(workload.notes) or f"{workload.dropped:,} jobs never ran"
        raise ScenarioError("", f"nothing to convert: no job in the file ran ({said})", source=name)
    salt = site_salt() if args.anonymise else None
    written: list[int] = []
    _write_atomically(out, lambda stream: written.append(
        write_swf(workload, stream, source=name, timezone=args.timezone, anonymise=args.anonymise, salt=salt)))
    for note in workload.notes:
        log(note)
    log(f"wrote {out}: {written[0]:,} jobs")
    return 0


def convert_hardware(source_path: Path, out: Path, log: Callable[[str], None]) -> int:
    from .slurm_conf import read_sinfo, read_slurm_conf

    name = source_path.name
    text = read_text(source_path, source=name)
    is_conf = any(line.strip().lower().startswith(("nodename", "partitionname")) for line in text.splitlines())
    machines = (read_slurm_conf if is_conf else read_sinfo)(text, source=name)
    _write_atomically(out, lambda stream: stream.write(machines))
    log(f"wrote {out}: the hardware of {'slurm.conf' if is_conf else 'sinfo'} output {name}")
    return 0


def convert_organisation(source_path: Path, out: Path, log: Callable[[str], None], anonymise: bool = False) -> int:
    """The organisation tree as JSON; ``anonymise``: its users and accounts named as an anonymised log's are."""
    from .accounts import anonymised_tree, read_accounts

    name = source_path.name
    tree = read_accounts(read_text(source_path, source=name), source=name)
    if anonymise:
        tree = anonymised_tree(tree, site_salt())
    _write_atomically(out, lambda stream: json.dump(tree, stream, indent=1, ensure_ascii=False))
    log(f"wrote {out}: the organisation of {name}")
    return 0


def run_convert(args: argparse.Namespace, log: Callable[[str], None] = print) -> int:
    """The ``convert`` command; returns the exit status (bad input raises a :class:`ScenarioError`)."""
    source_path, out = Path(args.input), Path(args.out)
    suffix = out.suffix.lower()
    if suffix not in SUFFIXES:
        raise ScenarioError("--out", f"cannot tell what to write from {out.name!r}: end it in {', '.join(SUFFIXES)}")
    try:
        if suffix == ".swf":
            return convert_log(source_path, out, args, log)
        if suffix == ".machines":
            return convert_hardware(source_path, out, log)
        return convert_organisation(source_path, out, log, anonymise=args.anonymise)
    except ScenarioError:
        raise
    except (ValueError, KeyError) as exc:   # a reader's own slip on odd input still names the file
        raise ScenarioError("", f"cannot be read ({exc})", source=source_path.name) from None
