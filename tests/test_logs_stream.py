"""Logs read from their file in pieces (plain or gzip) give the jobs of the whole text read at once."""

from __future__ import annotations

import gzip
import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sched_engine.batch.traces import TraceError
from sched_engine.logs import pbs, pbs_layout, reader, slurm
from sched_engine.logs.stream import file_pieces, line_blocks, read_log_path, text_pieces
from sched_engine.logs.swf_writer import write_swf
from tests import test_logs_lsf, test_logs_pbs, test_logs_qacct, test_logs_sge, test_logs_sge_json, test_logs_slurm

FIXTURES = {"sacct": test_logs_slurm.LOG, "pbs": test_logs_pbs.LOG, "sge": test_logs_sge.LOG,
            "sge-json": test_logs_sge_json.LOG, "qacct": test_logs_qacct.LOG, "lsf": test_logs_lsf.LOG}


def _swf(workload) -> str:
    stream = io.StringIO()
    write_swf(workload, stream, source="log", anonymise=True, salt=b"a salt of sixteen+ bytes")
    return stream.getvalue()


def _same(streamed, whole) -> None:
    assert streamed.notes == whole.notes
    assert streamed.jobs.equals(whole.jobs)
    assert (streamed.dropped, streamed.skipped_lines, streamed.header) == (whole.dropped, whole.skipped_lines,
                                                                           whole.header)


@pytest.mark.parametrize("kind", sorted(FIXTURES))
@pytest.mark.parametrize("piece, gzipped", [(5, False), (64, True), (1 << 20, False)])
def test_each_readers_hand_made_log_reads_the_same_from_its_file_in_pieces(tmp_path, kind, piece, gzipped):
    text = FIXTURES[kind]
    path = tmp_path / "log"
    path.write_bytes(gzip.compress(text.encode()) if gzipped else text.encode())
    whole = reader(kind).parse(text, source="log", skip_malformed=True)
    _same(read_log_path(path, piece=piece, skip_malformed=True), whole)
    compact = read_log_path(path, kind, piece=piece, compact=True, skip_malformed=True)   # what convert writes from
    assert "job_id" not in compact.jobs and _swf(compact) == _swf(whole)


def test_a_log_no_reader_knows_is_left_to_the_batch_reader(tmp_path):
    path = tmp_path / "trace.swf"
    path.write_text("; Version: 2.2\n1 0 10 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1\n")
    assert read_log_path(path) is None


def test_pieces_end_at_line_breaks_and_number_their_lines():
    text = "a\nbb\n\nccc\nd"
    assert list(text_pieces(text, 3)) == ["a\nbb\n", "\nccc\n", "d"]
    assert list(line_blocks(text_pieces(text, 3))) == [(1, ["a", "bb"]), (3, ["", "ccc"]), (5, ["d"])]


def test_text_that_is_not_utf8_names_its_line(tmp_path):
    path = tmp_path / "bad.log"
    path.write_bytes("é\n".encode() * 20 + b"ok\n\xff\xfe\n")
    with pytest.raises(TraceError) as caught:
        list(file_pieces(path, piece=7))
    assert caught.value.line == 22 and "not UTF-8" in str(caught.value)


def test_a_gzip_file_stops_at_the_decompressed_limit(tmp_path):
    path = tmp_path / "big.gz"
    path.write_bytes(gzip.compress(b"x" * 5000 + b"\n"))
    with pytest.raises(TraceError, match="decompresses to more than"):
        list(file_pieces(path, piece=512, max_decompressed=1000))


_names = st.text("ab|\n x", min_size=0, max_size=6)
_jobs = st.lists(st.tuples(st.integers(0, 5000), st.integers(0, 500), st.integers(0, 9000), st.integers(1, 64),
                           _names, st.sampled_from(["", ".batch", ".0"])), min_size=1, max_size=25)


@settings(max_examples=30, deadline=None)
@given(jobs=_jobs, piece=st.integers(1, 200))
def test_any_sacct_log_reads_the_same_in_pieces_of_any_size(jobs, piece):
    """Names with '|' and line breaks, steps, repeated ids: cut anywhere, the same jobs and notes."""
    lines = [test_logs_slurm.HEADER]
    for number, (submit, wait, run, cpus, name, step) in enumerate(jobs):
        lines.append(test_logs_slurm.row(f"{number % 7}{step}", JobName=name, Submit=_stamp(submit),
                                         Start=_stamp(submit + wait), End=_stamp(submit + wait + run), NCPUS=cpus))
    text = "\n".join(lines) + "\n"
    whole = slurm.parse(text, source="p", skip_malformed=True)
    _same(slurm.read(text_pieces(text, piece), source="p", skip_malformed=True), whole)


def _stamp(seconds: int) -> str:
    return f"2024-03-01T{seconds // 3600:02d}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


_attributes = st.permutations(["user=u{}", "group=g{}", "queue=q", "Resource_List.walltime=00:10:00",
                               "Resource_List.mem={}mb", "resources_used.cput=00:00:{:02d}", "Exit_status={}"])


@settings(max_examples=30, deadline=None)
@given(records=st.lists(st.tuples(_attributes, st.integers(0, 9), st.booleans(), st.integers(0, 700)),
                        min_size=1, max_size=30))
def test_pbs_records_read_by_layout_give_the_jobs_read_one_by_one(records):
    """Records in a few layouts (attributes in any order, some without exec_host or start) either way."""
    lines = []
    for number, (order, value, started, run) in enumerate(records):
        words = [word.format(value) for word in order]
        times = [f"ctime={1_700_000_000 + number}", f"start={1_700_000_100 + number}" if started else "start=0",
                 f"end={1_700_000_200 + number + run}", f"exec_host=n1/0-{value}" if value else "exec_host="]
        lines.append(f"01/01/2024 00:00:00;E;{number % 11}.srv;" + " ".join(times + words))
    text = "\n".join(lines) + "\n"
    by_layout = pbs.parse(text, source="p", skip_malformed=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pbs_layout, "TRIES", 0)
        one_by_one = pbs.parse(text, source="p", skip_malformed=True)
    _same(by_layout, one_by_one)


def test_a_pbs_record_repeated_across_both_readings_counts_once():
    """One copy read by layout, the other (a quoted name) one by one: the same key, read once."""
    plain = ("01/01/2024 00:00:00;E;7.srv;user=u ctime=1700000000 start=1700000010 end=1700000110 "
             "exec_host=n1/0-3 Exit_status=0")
    text = "\n".join([plain, plain.replace("user=u", 'user=u jobname="a b"'), plain.replace("7.srv", "8.srv")])
    workload = pbs.parse(text, source="p")
    assert workload.jobs.job_id.tolist() == ["7", "8"] and "1 repeated record read once" in workload.notes[0]


def test_records_sharing_a_key_hash_count_once_only_when_their_job_ids_agree():
    import numpy as np

    from sched_engine.logs.jobs_table import repeated_keys

    keys = np.array([1, 1, 2, 1], dtype=np.uint64)   # row 1 shares row 3's hash but not its job id
    ids = np.array([b"7", b"9", b"8", b"7"])
    assert repeated_keys(keys, ids).tolist() == [True, False, False, False]
    assert repeated_keys(keys[[3, 2, 1, 0]], ids, np.array([3, 2, 1, 0])).tolist() == [True, False, False, False]


def test_sniffing_reads_only_the_first_64_kib_even_of_a_file_with_no_line_break(tmp_path, monkeypatch):
    """A gzip bomb of one endless line: the sniffer's head is its first 64 KiB, read in one piece; before, it
    read the whole file looking for a line break, joining what it had read on every piece."""
    from sched_engine.logs import stream

    path = tmp_path / "bomb.swf.gz"
    path.write_bytes(gzip.compress(b"0" * (8 * 2**20)))
    read = []
    real = stream._open

    def counting(*args):
        text, raw = real(*args)
        original = text.read
        text.read = lambda size=-1: read.append(size) or original(size)
        return text, raw

    monkeypatch.setattr(stream, "_open", counting)
    assert stream.head(path) == "0" * stream.HEAD
    assert read == [stream.HEAD]


@settings(max_examples=40, deadline=None)
@given(text=st.text(alphabet="ab\n", max_size=60), piece=st.integers(1, 7), stop=st.one_of(st.none(), st.integers(1, 70)))
def test_pieces_end_at_line_breaks_and_join_to_the_text_read(tmp_path_factory, text, piece, stop):
    path = tmp_path_factory.mktemp("pieces") / "t.txt"
    path.write_text(text)
    pieces = list(file_pieces(path, piece=piece, stop_after=stop))
    read = text if stop is None else text[:-(-stop // piece) * piece]   # whole pieces of bytes, up to stop
    assert "".join(pieces) == read
    assert all(part.endswith("\n") for part in pieces[:-1]) and all(pieces)
