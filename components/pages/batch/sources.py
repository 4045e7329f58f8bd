"""Where the page's files come from: shipped samples and earlier uploads, as draft references and dropdown choices.

A draft refers to a file by reference -- a shipped sample by name or an
upload by its stored name ``<sha256>.<kind>`` -- never by a path the browser
could choose; :func:`ref_path` resolves one.
"""

from __future__ import annotations

from pathlib import Path

from sched_engine import ScenarioError
from sched_engine.batch import file_sha256, workload_for
from sched_engine.logs import checked_timezone

from ...services.saved_items import CLUSTERS as SAVED_CLUSTERS
from ...services.saved_items import saved_choices
from ...services.uploads import UploadError, upload_choices

SAMPLE_TRACES = {
    "hpc2n-excerpt.swf": "sample_traces/hpc2n-excerpt.swf",
    "cerit-sc-2013-slice.swf": "sample_traces/cerit-sc-2013-slice.swf",
}
SAMPLE_MACHINES = {
    "hpc2n-excerpt.machines": "sample_traces/hpc2n-excerpt.machines",
    "metacentrum-2009.machines": "sample_traces/metacentrum-2009.machines",
    "cerit-sc-2013.machines": "sample_traces/cerit-sc-2013.machines",
}
SAMPLE_FAILURES = {"metacentrum-2009.failures": "sample_traces/metacentrum-2009.failures"}


def sample_ref(kind: str, name: str) -> dict:
    return {"source": "sample", "kind": kind, "name": name, "label": name}


def ref_path(ref: dict, uploads) -> str:
    """The file behind a draft reference: a shipped sample by name, or a stored upload."""
    if ref.get("source") == "sample":
        table = {"trace": SAMPLE_TRACES, "machines": SAMPLE_MACHINES, "failures": SAMPLE_FAILURES}[ref["kind"]]
        if ref.get("name") not in table:
            raise ScenarioError(ref["kind"], f"unknown sample {ref.get('name')!r}")
        return table[ref["name"]]
    try:
        return str(uploads.path_of(ref.get("name")))
    except UploadError as exc:
        raise ScenarioError(ref.get("kind", "upload"), f"{ref.get('label', 'upload')}: {exc}") from None


UPLOADED = "upload:"


def trace_choices(uploads) -> list[dict]:
    """The workload dropdown: shipped samples, then traces uploaded earlier (the workspace), newest first."""
    samples = [{"label": name, "value": name} for name in SAMPLE_TRACES]
    return samples + upload_choices(uploads, "trace", value_prefix=UPLOADED)


def trace_choice_ref(value: str, uploads) -> dict:
    """The draft reference for a dropdown value (a sample name or ``upload:<stored name>``)."""
    if not value.startswith(UPLOADED):
        return sample_ref("trace", value)
    name = value[len(UPLOADED):]
    entry = next((e for e in uploads.listing() if e["name"] == name), {})
    zone = entry.get("timezone") if entry.get("timezone") not in (None, "UTC") else None   # its times' zone
    return {"source": "upload", "kind": "trace", "name": name, "label": entry.get("label", name),
            **({"timezone": str(zone)} if zone else {}),
            **({"skip_malformed": True} if entry.get("skip_malformed") else {})}   # as it was uploaded


SAMPLE_PREFIX = "sample:"


def cluster_choices(uploads) -> list[dict]:
    """The cluster-definition dropdown: shipped .machines files, saved definitions, uploaded .machines files."""
    samples = [{"label": name, "value": SAMPLE_PREFIX + name} for name in SAMPLE_MACHINES]
    saved = [{**option, "value": UPLOADED + option["value"]} for option in saved_choices(uploads, SAVED_CLUSTERS)]
    return samples + saved + upload_choices(uploads, "machines", value_prefix=UPLOADED)


def failure_choices(uploads) -> list[dict]:
    """The failure-trace dropdown: shipped .failures files, then earlier uploads."""
    samples = [{"label": name, "value": SAMPLE_PREFIX + name} for name in SAMPLE_FAILURES]
    return samples + upload_choices(uploads, "failures", value_prefix=UPLOADED)


def choice_ref(value: str, kind: str, uploads) -> dict:
    """The draft reference for a ``sample:<name>`` or ``upload:<stored name>`` dropdown value."""
    if value.startswith(SAMPLE_PREFIX):
        return sample_ref(kind, value[len(SAMPLE_PREFIX):])
    name = value[len(UPLOADED):] if value.startswith(UPLOADED) else value
    label = next((e["label"] for e in uploads.listing() if e["name"] == name), name[:12])
    return {"source": "upload", "kind": kind, "name": name, "label": label}


def store_trace(uploads, contents: str, filename: str | None, *, timezone: str = "UTC", anonymise: bool = False,
                skip_malformed: bool = False) -> tuple[Path, str]:
    """Store an uploaded trace; returns its stored path and its label.

    ``timezone``: the zone its local times (a log's without one, as sacct's)
    are read in, kept with the upload, so every reading of it (each page,
    each run) reads them so. ``anonymise``: the file is read and kept as SWF,
    its users, groups and accounts only as the data directory's salted hashes
    in its header (the real names never stored). Raises
    :class:`ScenarioError` or :class:`UploadError`.
    """
    from sched_engine.logs.anonymise import swf_of_upload
    from sched_engine.logs.convert_command import site_salt

    zone = checked_timezone(timezone or "UTC", "time zone")
    label = filename if isinstance(filename, str) and filename else "trace"
    if not anonymise:   # its zone and skipping kept with it: every reading of it reads it so
        meta = {**({"timezone": zone} if zone != "UTC" else {}), **({"skip_malformed": True} if skip_malformed else {})}
        return uploads.save_data_url(contents, "trace", label, meta or None), label
    directory = Path(uploads.directory).parent   # the data directory: one salt for its uploads and conversions
    data, _ = swf_of_upload(uploads.data_of(contents), source=label, timezone=zone, skip_malformed=skip_malformed,
                            anonymise=True, salt=site_salt(directory))
    label = f"{label} (anonymised)"
    return uploads.save(data, "trace", label), label


def parse_trace(ref: dict, uploads):
    """Parse the workload a trace reference names (memoised by content); raises TraceError/ScenarioError.

    A trace without a single job (only comments, or every line skipped) is
    refused: there would be nothing to simulate.
    """
    path = ref_path(ref, uploads)
    trace = {"path": path, "label": ref["label"], "format": ref.get("format", "auto"),
             "skip_malformed": bool(ref.get("skip_malformed")), "sha256": file_sha256(Path(path).resolve(), "trace"),
             "timezone": ref.get("timezone", "UTC")}
    workload = workload_for(trace)
    if not len(workload.jobs):
        raise ScenarioError("trace", "the file holds no jobs (only comments or header lines), nothing to simulate",
                            source=ref["label"])
    return workload
