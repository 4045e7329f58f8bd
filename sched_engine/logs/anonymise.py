"""A trace uploaded to be kept as SWF: read (in its time zone), its names anonymised if asked, written as SWF.

The pages call :func:`swf_of_upload` on the bytes of an upload before
anything is stored. Anonymised, the real names never reach the upload store:
users, groups and accounts become ``u_<hash>``/``g_<hash>``/``a_<hash>``
with the salt ``python -m sched_engine convert --anonymise`` uses (one per
data directory, :func:`.convert_command.site_salt`), so an upload and a file
converted on the command line name the same user alike. A log read in a
time zone other than UTC is kept as SWF too: its times no longer depend on
the zone it was read in.
"""

from __future__ import annotations

import io
import os
import tempfile
from pathlib import Path

from ..batch.traces import Workload, read_workload
from ..core.errors import ScenarioError
from .convert_command import site_salt
from .stream import read_log_path
from .swf_writer import write_swf


def swf_of_upload(data: bytes, *, source: str, timezone: str = "UTC", skip_malformed: bool = False,
                  anonymise: bool = False, salt: bytes | None = None,
                  scratch: str | Path | None = None) -> tuple[bytes, Workload]:
    """The SWF text (UTF-8) of a trace file's bytes, names anonymised with ``salt`` if asked, and the workload read.

    Any readable trace (a resource manager's log, read in ``timezone``; SWF,
    GWF, CSV) is accepted; gzip too. The bytes pass through a private file in
    ``scratch`` (default: the system's temporary directory), removed at once.
    A trace without a job that ran is refused naming the file.
    """
    handle, name = tempfile.mkstemp(prefix=".anonymise-", dir=scratch)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        workload = read_log_path(name, source=source, timezone=timezone, skip_malformed=skip_malformed, compact=True)
        if workload is None:
            workload = read_workload(name, source=source, skip_malformed=skip_malformed, timezone=timezone)
    finally:
        Path(name).unlink(missing_ok=True)
    if workload.jobs.empty:
        said = "; ".join(workload.notes) or "no job"
        raise ScenarioError("", f"nothing to keep: no job in the file ran ({said})", source=source)
    text = io.StringIO()
    write_swf(workload, text, source=source, timezone=timezone, anonymise=anonymise,
              salt=(salt or site_salt()) if anonymise else None)
    return text.getvalue().encode(), workload
