"""Every input reader fed hostile input: only the project's typed errors come out.

hypothesis generates truncated and re-split lines, wrong field counts,
negative, huge, NaN and infinite numbers, non-UTF-8 bytes, empty files,
broken gzip and gzip bombs, and random JSON values (also mutations of the
sample scenarios and presets). A reader must either return or raise
:class:`ScenarioError` (``TraceError`` is one) naming the file it read and,
where it names a line, a line that exists; any other exception fails the
test. Settings are derandomised, so CI runs the same inputs every time.
Inputs per test are :data:`EXAMPLES` (about 11,000 in all) times :data:`SCALE`:
``make test`` runs 0.4 of them (about 4,400, a minute less of the suite's
wall time); ``SCHEDSCOPE_FUZZ_SCALE=1`` runs them all, larger values more.
"""

from __future__ import annotations

import base64
import copy
import gzip
import http.client
import json
import os
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from components.pages import batch as batch_page
from components.pages import scenario as scenario_page
from components.pages.network.setups import check_app_list
from components.services.workspace import parse_scenario_upload
from sched_engine import ScenarioError, normalize_scenario
from sched_engine.batch.machine_files import parse_failures, parse_machines
from sched_engine.batch.traces import GWF_FIELDS, JOB_COLUMNS, parse_workload, read_workload
from sched_engine.core.io import MAX_WHOLE
from sched_engine.elastic import presets as elastic_presets
from sched_engine.elastic.traces import CSV_COLUMNS as ELASTIC_CSV_COLUMNS
from sched_engine.elastic.traces import read_trace
from sched_engine.fairshare import presets as fairshare_presets
from sched_engine.network import APP_COLUMNS, read_app_list
from sched_engine.network import presets as network_presets
from sched_engine.registry import REGISTRY
from tests.support.dash_client import DashClient
from tests.support.production_server import ProductionServer

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_traces"

EXAMPLES = {
    "workload_text": 2500,
    "workload_file": 800,
    "machines": 800,
    "failures": 800,
    "elastic_json": 1000,
    "elastic_csv": 800,
    "app_list": 1000,
    "scenario_random": 1000,
    "scenario_mutated": 1500,
    "scenario_upload": 800,
}
#: The share of :data:`EXAMPLES` run; hypothesis's generation, not the readers, is most of their cost.
SCALE = float(os.environ.get("SCHEDSCOPE_FUZZ_SCALE", "0.4"))


def fuzz(name: str):
    return settings(
        max_examples=max(1, round(EXAMPLES[name] * SCALE)), deadline=None, derandomize=True, database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    )


def typed(call, source: str | None, text: str | bytes | None = None):
    """``call()``'s value, or its ScenarioError checked to name ``source`` (and a real line of ``text``).

    ``source=None``: the error must name some file (a scenario's errors about
    a file it points to name that file).
    """
    try:
        return call()
    except ScenarioError as exc:
        assert exc.source == source if source else exc.source, f"error does not name the file: {exc}"
        if exc.line is not None:
            assert exc.line >= 1, str(exc)
            if text is not None:
                # Readers number lines as str.splitlines does (\r and \x0c end lines too).
                assert exc.line <= len(text.splitlines()) + 1, str(exc)
        assert str(exc)
        return exc


# --- tokens and lines ---------------------------------------------------------------------------------

HOSTILE_NUMBERS = [
    "-1", "0", "-0", "1e20", "2e19", "1e300", "1e400", "-1e400", "1e308", "1e-400", "NaN", "nan", "inf", "-inf", "Infinity", "9" * 400,
    "9223372036854775808", "-9223372036854775809", "0x10", "1_000", "+", "-", ".", "1.", "1e", "١٢", "",
]
number_token = st.one_of(
    st.integers(-(10**20), 10**20).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(HOSTILE_NUMBERS),
)
word_token = st.one_of(
    st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=6),
    st.sampled_from(["{1,2}", "q_1d", "1:ppn=64:x86_64#excl", ",", ";", "#", "\x00", "\ufeff", "\r"]),
)
token = st.one_of(number_token, number_token, word_token)
hostile_token = st.one_of(st.sampled_from(HOSTILE_NUMBERS), number_token, word_token)
separator = st.sampled_from([" ", " ", "\t", ",", "  "])


@st.composite
def random_line(draw, max_fields=32):
    tokens = draw(st.lists(token, max_size=max_fields))
    return draw(separator).join(tokens)


@st.composite
def mutated_line(draw, bases):
    """A valid line with fields replaced, dropped or added, then maybe cut short."""
    base = draw(st.sampled_from(bases))
    separator = "," if "," in base and " " not in base else " "
    tokens = base.split(separator)
    for _ in range(draw(st.integers(1, 2))):
        op = draw(st.sampled_from(["replace", "replace", "drop", "add"]))
        if op == "replace" and tokens:
            tokens[draw(st.integers(0, len(tokens) - 1))] = draw(hostile_token)
        elif op == "drop" and tokens:
            del tokens[draw(st.integers(0, len(tokens) - 1))]
        else:
            tokens.insert(draw(st.integers(0, len(tokens))), draw(hostile_token))
    line = separator.join(tokens)
    if draw(st.integers(0, 5)) == 0:  # rarely, so most lines fail (or pass) on the edited field
        line = line[: draw(st.integers(0, len(line)))]
    return line


def bad_line(bases, max_fields=32):
    """Mostly an edited valid line (it gets past more checks), else a random one."""
    return st.one_of(mutated_line(bases), mutated_line(bases), random_line(max_fields))


@st.composite
def text_of(draw, line_strategy, fixed=()):
    """Lines (among them ``fixed`` ones: headers, comments, valid lines), joined with \\n or \\r\\n, maybe truncated."""
    # Mostly one or two bad lines among good ones: a reader stops at the first bad line.
    lines = draw(st.lists(st.sampled_from(fixed or ("",)), max_size=6))
    for _ in range(draw(st.integers(0, 2))):
        lines.insert(draw(st.integers(0, len(lines))), draw(line_strategy))
    text = draw(st.sampled_from(["\n", "\r\n"])).join(lines)
    if draw(st.integers(0, 5)) == 0:
        text = text[: draw(st.integers(0, len(text)))]
    return text


SWF_VALID = "1 0 -1 10 2 -1 -1 2 10 -1 1 7 1 -1 1 -1 -1 -1"
SWF_EXT_VALID = SWF_VALID + " {1,2} q_1d 1:ppn=2:x86_64"
GWF_VALID = " ".join(["1", "0", "-1", "10", "2", "-1", "-1", "2", "10", "-1", "1", "u1", "g", "-1", "q", "-1",
                      "s1", "s2", "-1", "-1", "-1", "-1", "-1", "linux", "-1", "-1", "-1", "vo", "p"])
CSV_HEADER = "job_id,submit_time,run_time,procs,requested_time,user,queue,requirement,site"
CSV_VALID = "j1,0,10,2,20,u,q,1:ppn=2,s"
WORKLOAD_FIXED = ("; MaxProcs: 8", "; MaxNodes: x", "# comment", ";", CSV_HEADER, "job_id,submit_time", SWF_VALID,
                  SWF_EXT_VALID, GWF_VALID, CSV_VALID)
assert len(GWF_VALID.split()) == len(GWF_FIELDS)

workload_text = text_of(
    bad_line([SWF_VALID, SWF_EXT_VALID, GWF_VALID, CSV_HEADER, CSV_VALID]),
    WORKLOAD_FIXED,
)
FORMATS = ["auto", "swf", "swf-ext", "gwf", "csv", "xml"]
NAMES = ["t.swf", "t.gwf", "t.csv", "t.swf.gz", "trace"]


def check_workload(workload) -> None:
    jobs = workload.jobs
    assert tuple(jobs.columns) == JOB_COLUMNS
    assert np.isfinite(jobs["submit_time"].to_numpy()).all() and (jobs["run_time"].to_numpy() >= 0).all()
    assert (jobs["procs"].to_numpy() >= 1).all()


@fuzz("workload_text")
@given(text=workload_text, fmt=st.sampled_from(FORMATS), source=st.sampled_from(NAMES), skip=st.booleans())
def test_parse_workload_raises_only_trace_errors(text, fmt, source, skip):
    result = typed(lambda: parse_workload(text, fmt, source=source, skip_malformed=skip), source, text)
    if not isinstance(result, ScenarioError):
        check_workload(result)


# --- files: bytes, gzip, bombs ------------------------------------------------------------------------

FILE_LIMIT = 4096  # decompressed-size limit for these files, so small bombs trip it


@st.composite
def file_bytes(draw):
    """Raw bytes, UTF-8 text with stray bytes, gzip of either (maybe cut or corrupted), or a small bomb."""
    text = draw(workload_text).encode("utf-8", "surrogatepass")
    raw = draw(st.one_of(st.binary(max_size=200), st.just(text), st.builds(lambda t, b: t + b, st.just(text),
                                                                            st.binary(min_size=1, max_size=4))))
    kind = draw(st.sampled_from(["plain", "gzip", "gzip-cut", "gzip-flip", "gzip-twice", "bomb"]))
    if kind == "plain":
        return raw
    if kind == "bomb":
        return gzip.compress(b"0" * draw(st.integers(FILE_LIMIT + 1, 20 * FILE_LIMIT)))
    data = gzip.compress(raw)
    if kind == "gzip-cut":
        return data[: draw(st.integers(0, len(data) - 1))]
    if kind == "gzip-flip":
        at = draw(st.integers(2, len(data) - 1))
        return data[:at] + bytes([data[at] ^ draw(st.integers(1, 255))]) + data[at + 1:]
    if kind == "gzip-twice":
        return data + data
    return data


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


@fuzz("workload_file")
@given(data=file_bytes(), fmt=st.sampled_from(FORMATS))
def test_read_workload_files_raise_only_trace_errors(workdir, data, fmt):
    path = workdir / "upload.swf"
    path.write_bytes(data)
    result = typed(lambda: read_workload(path, fmt, source="upload.swf", max_decompressed=FILE_LIMIT), "upload.swf")
    if not isinstance(result, ScenarioError):
        check_workload(result)


def test_gzip_bomb_is_refused_with_the_limit_named(workdir):
    path = workdir / "bomb.swf.gz"
    path.write_bytes(gzip.compress(b"0" * (50 * 2**20)))  # 50 MiB of zeros, ~50 KB on disk
    with pytest.raises(ScenarioError, match="bomb.swf.gz: .*more than 1 MiB"):
        read_workload(path, max_decompressed=2**20)


# --- clusters and failures ----------------------------------------------------------------------------

MACHINES_VALID = ["0 seth 120 2 1 1048576",
                  "0 c0 1500 48000000 Itanium2 linux p1,p2 2 16 8,8 16,17",
                  "2 c2 3200 1009000 Xeon linux p2 3 3 1,1,1 42,43,44"]
FAILURES_VALID = ["1230768000 cluster_12 10753754 0 1 2 3", "1231145461 cluster_5 4193 15"]


@fuzz("machines")
@given(text=text_of(bad_line(MACHINES_VALID, 12), ("# c", "; c", *MACHINES_VALID)))
def test_parse_machines_raises_only_trace_errors(text):
    result = typed(lambda: parse_machines(text, source="m.machines"), "m.machines", text)
    if not isinstance(result, ScenarioError):
        for cluster in result:
            per = cluster["cpus_per_machine"]
            assert 1 <= cluster["machines"] <= MAX_WHOLE and max(per if isinstance(per, list) else [per]) <= MAX_WHOLE


@fuzz("failures")
@given(text=text_of(bad_line(FAILURES_VALID, 8), ("# c", "; c", *FAILURES_VALID)))
def test_parse_failures_raises_only_trace_errors(text):
    result = typed(lambda: parse_failures(text, source="f.failures"), "f.failures", text)
    if not isinstance(result, ScenarioError):
        assert (result["duration"] >= 0).all() and (result["machine"] >= 0).all()


# --- JSON values ------------------------------------------------------------------------------------

HUGE = [10**400, -(10**400), 2**63, 2**64, -(2**63) - 1, 1e308, float("inf"), float("-inf"), float("nan")]
scalar = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), st.sampled_from(HUGE),
    st.text(max_size=8), st.sampled_from(["", " ", "1", "-1", "nan", "1e400", "map", "reduce", "\x00"]),
)


def json_values(keys):
    return st.recursive(
        scalar,
        lambda children: st.one_of(st.lists(children, max_size=4),
                                   st.dictionaries(st.one_of(st.sampled_from(keys), st.text(max_size=4)), children,
                                                   max_size=5)),
        max_leaves=12,
    )


def dump(value) -> str:
    """JSON text as a careless writer produces it: NaN/Infinity allowed, huge integers written out."""
    return json.dumps(value, allow_nan=True)


def mutate(value, draw, replacement):
    """A deep copy of ``value`` with 1-3 random edits: replace, delete or add somewhere in the tree."""
    value = copy.deepcopy(value)
    for _ in range(draw(st.integers(1, 3))):
        node = value
        while True:
            children = list(node.items()) if isinstance(node, dict) else list(enumerate(node)) if isinstance(node, list) else []
            containers = [(k, v) for k, v in children if isinstance(v, (dict, list)) and v]
            if not containers or draw(st.integers(0, 3)) == 0:
                break
            _, node = draw(st.sampled_from(containers))
        if not isinstance(node, (dict, list)):
            continue
        op = draw(st.sampled_from(["replace", "replace", "delete", "add"]))
        keys = list(node) if isinstance(node, dict) else list(range(len(node)))
        if op in ("replace", "delete") and keys:
            key = draw(st.sampled_from(keys))
            if op == "replace":
                node[key] = draw(replacement)
            else:
                del node[key]
        elif isinstance(node, dict):
            node[draw(st.sampled_from([*keys, "extra"] if keys else ["extra"]))] = draw(replacement)
        else:
            node.insert(draw(st.integers(0, len(node))), draw(replacement))
    return value


# --- elasticity traces --------------------------------------------------------------------------------

SLS_KEYS = ["job.id", "job.start.ms", "job.tasks", "c.nr", "c.dur", "c.mem", "c.type", "container.start.ms",
            "container.end.ms", "container.memory", "container.type"]
SLS_VALID = [{"job.id": "a", "job.start.ms": 0, "job.tasks": [
    {"c.nr": 2, "c.dur": 1000, "c.mem": 512, "c.type": "map"},
    {"container.start.ms": 10, "container.end.ms": 900, "container.memory": 1024, "container.type": "reduce"}]}]


@st.composite
def sls_texts(draw):
    value = mutate(SLS_VALID, draw, json_values(SLS_KEYS)) if draw(st.booleans()) else draw(json_values(SLS_KEYS))
    text = dump(value)
    if draw(st.integers(0, 9)) == 0:  # an integer longer than Python converts (4,300 digits)
        text = text.replace("0", "9" * draw(st.integers(4000, 5000)), 1)
    if isinstance(value, list) and draw(st.booleans()):
        text = "\n".join(dump(v) for v in value)  # concatenated objects, as SLS writes them
    if draw(st.booleans()):
        text = text[: draw(st.integers(0, len(text)))]
    return text


@fuzz("elastic_json")
@given(text=sls_texts(), fmt=st.sampled_from(["auto", "sls"]))
def test_elastic_json_traces_raise_only_scenario_errors(text, fmt):
    typed(lambda: read_trace(text, "t.json", fmt), "t.json", text)


ELASTIC_CSV_VALID = [",".join([*ELASTIC_CSV_COLUMNS, "phase"]), "a,0,2,512,10,map", "a,0,1,256,5,reduce"]
elastic_csv = text_of(bad_line(ELASTIC_CSV_VALID, 8),
                      (",".join(ELASTIC_CSV_COLUMNS), *ELASTIC_CSV_VALID))


@fuzz("elastic_csv")
@given(text=elastic_csv)
def test_elastic_csv_traces_raise_only_scenario_errors(text):
    typed(lambda: read_trace(text, "t.csv", "csv"), "t.csv", text)


# --- network application lists ------------------------------------------------------------------------

FIG1_APPS = network_presets.fig1_model()["applications"]
APP_KEYS = ["name", "arrival", "weight", "pattern", "volume", "containers", "count", "cpu", "ram", "uplink",
            "downlink", "applications", "external", "all-to-all"]
APP_CSV_VALID = [",".join(APP_COLUMNS), "A1,0,external,1,1,1,1,1,1.2,0", "A1,0,external,1,1,1,1,1,0.2,0",
                 "A2,1,all-to-all,0.5,0.5,2,1,1,0.5,0.5"]


@st.composite
def app_list_bytes(draw):
    kind = draw(st.sampled_from(["json", "json-mutated", "csv", "bytes", "digits"]))
    if kind == "digits":  # an integer longer than Python converts (4,300 digits)
        data = dump(FIG1_APPS).encode().replace(b'"count": 1', b'"count": ' + b"9" * draw(st.integers(4000, 5000)), 1)
    elif kind == "json":
        data = dump(draw(json_values(APP_KEYS))).encode()
    elif kind == "json-mutated":
        apps = mutate(FIG1_APPS, draw, json_values(APP_KEYS))
        data = dump(draw(st.sampled_from([apps, {"applications": apps}]))).encode()
    elif kind == "csv":
        text = draw(text_of(bad_line(APP_CSV_VALID, 12), tuple(APP_CSV_VALID)))
        data = text.encode("utf-8", "surrogatepass")
    else:
        data = draw(st.binary(max_size=100))
    if draw(st.booleans()):
        data = data[: draw(st.integers(0, len(data)))]
    return data


@fuzz("app_list")
@given(data=app_list_bytes())
def test_network_app_lists_raise_only_scenario_errors(data):
    result = typed(lambda: read_app_list(data, "apps.csv"), "apps.csv", data)
    if not isinstance(result, ScenarioError):
        apps, origin = result
        typed(lambda: check_app_list(apps, origin, "apps.csv"), "apps.csv", data)


# --- scenarios ------------------------------------------------------------------------------------------


def _sample_scenarios() -> list[dict]:
    scenarios = [json.loads(path.read_text()) for path in sorted(SAMPLES.glob("*.scenario.json"))]
    for engine, models in (
        ("fairshare", [fairshare_presets.fig4_model(), fairshare_presets.starter_model()]),
        ("network", [network_presets.fig1_model(), network_presets.fig6_model()]),
        ("elastic", [elastic_presets.paper_model(), elastic_presets.two_job_model()]),
        ("site", [{"trace": {"path": "sample:hpc2n-excerpt.swf", "max_jobs": 200}, "failures": {"kind": "synthetic"},
                   "memory_elastic": {"enabled": True, "min_fraction": 0.5,
                                      "penalty": {"kind": "step", "factor": 1.5}}}]),
    ):
        policy = REGISTRY.policies(engine)[0].name
        scenarios += [{"engine": engine, "policy": policy, "seed": 0, "model": model} for model in models]
    return scenarios


SCENARIOS = _sample_scenarios()
ENGINES = [e.name for e in REGISTRY.engines()]
POLICIES = {engine: [p.name for p in REGISTRY.policies(engine)] for engine in ENGINES}
def _all_keys(value) -> set[str]:
    if isinstance(value, dict):
        return set(value).union(*(_all_keys(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(_all_keys(v) for v in value))
    return set()


SCENARIO_KEYS = sorted(set().union(*(_all_keys(s) for s in SCENARIOS)) | {"policy_params", "kind", "path"})
scenario_values = json_values(SCENARIO_KEYS)


def test_sample_scenarios_are_valid():
    """The mutation bases are valid, so the mutated inputs start close to what people write."""
    assert {s["engine"] for s in SCENARIOS} == set(ENGINES)
    for scenario in SCENARIOS:
        normalize_scenario(scenario)


@st.composite
def random_scenarios(draw):
    engine = draw(st.one_of(st.sampled_from(ENGINES), scalar))
    policy = draw(st.one_of(st.sampled_from(POLICIES.get(engine, ["x"]) if isinstance(engine, str) else ["x"]), scalar))
    scenario = {"engine": engine, "policy": policy, "model": draw(st.dictionaries(st.sampled_from(SCENARIO_KEYS),
                                                                                  scenario_values, max_size=5))}
    for key in ("policy_params", "seed", "name"):
        if draw(st.booleans()):
            scenario[key] = draw(scenario_values)
    return scenario


@fuzz("scenario_random")
@given(scenario=random_scenarios())
def test_random_scenarios_raise_only_scenario_errors(scenario):
    typed(lambda: normalize_scenario(scenario, source="s.json"), None)


@fuzz("scenario_mutated")
@given(base=st.sampled_from(SCENARIOS), data=st.data())
def test_mutated_sample_scenarios_raise_only_scenario_errors(base, data):
    scenario = mutate(base, data.draw, scenario_values)
    typed(lambda: normalize_scenario(scenario, source="s.json"), None)


@st.composite
def scenario_bytes(draw):
    data = dump(mutate(draw(st.sampled_from(SCENARIOS)), draw, scenario_values)).encode()
    kind = draw(st.sampled_from(["whole", "cut", "flip", "binary", "digits"]))
    if kind == "digits":  # an integer longer than Python converts (4,300 digits)
        data = data.replace(b'"seed": ', b'"seed": ' + b"9" * draw(st.integers(4000, 5000)), 1)
    elif kind == "cut":
        data = data[: draw(st.integers(0, len(data)))]
    elif kind == "flip":
        at = draw(st.integers(0, len(data) - 1))
        data = data[:at] + bytes([draw(st.integers(0, 255))]) + data[at + 1:]
    elif kind == "binary":
        data = draw(st.binary(max_size=64))
    return data


@fuzz("scenario_upload")
@given(data=scenario_bytes())
def test_scenario_uploads_raise_only_scenario_errors(data):
    result = typed(lambda: parse_scenario_upload(data, "up.json"), "up.json", data)
    if not isinstance(result, ScenarioError):
        typed(lambda: normalize_scenario(result, source="up.json"), None)


# --- regressions: inputs that raised untyped exceptions before ---------------------------------------

REGRESSIONS = [
    # (reader call, source it must name, message pattern); old exception in the comment
    (lambda: parse_failures("1 c 1 1e300", source="f"), "f", "line 1, machines: '1e300' is too large"),  # OverflowError
    (lambda: parse_workload(SWF_VALID.replace("1 0 -1 10 2", "1 0 -1 10 1e20", 1), "swf", source="t"),
     "t", "line 1, allocated_procs: '1e20' is too large"),  # procs -2**63 in the frame
    (lambda: parse_workload("job_id,submit_time,run_time,procs\nj,0,1,1e300", "csv", source="t"),
     "t", "line 2, procs: '1e300' is too large"),  # procs -2**63 in the frame
    (lambda: parse_machines("0 a 1e300 2 1 1", source="m"), "m", "line 1, machines: '1e300' is too large"),  # 300-digit count
    (lambda: read_trace("job_id,arrival_s,tasks,memory_mb,duration_s\r 0", "t.csv", "csv"),
     "t.csv", "not readable as CSV"),  # _csv.Error
    (lambda: read_trace("job_id,arrival_s,tasks,memory_mb,duration_s\na,0,1,1,1,extra", "t.csv", "csv"),
     "t.csv", "line 2: 6 fields, the header has 5"),  # AttributeError
    (lambda: read_trace('[{"job.id": 1, "job.start.ms": 1' + "0" * 400 + "}]", "t.json"),
     "t.json", "job.start.ms: expected a number"),  # OverflowError
    (lambda: read_trace('{"job.start.ms": ' + "9" * 5000 + "}", "t.json"), "t.json", "invalid JSON"),  # ValueError
    (lambda: read_app_list(b"name,count\r1", "a.csv"), "a.csv", "not readable as CSV"),  # _csv.Error
    (lambda: read_app_list(b"[" + b"9" * 5000 + b"]", "a.json"), "a.json", "not valid JSON"),  # ValueError
    (lambda: check_app_list([{**FIG1_APPS[0], "pattern": []}], {}, "a.json"), "a.json", "unknown pattern"),  # TypeError
    (lambda: parse_scenario_upload(b'{"seed": ' + b"9" * 5000 + b"}", "s.json"), "s.json", "not valid JSON"),  # ValueError
]


@pytest.mark.parametrize("call, source, message", REGRESSIONS)
def test_former_crashes_are_typed_errors(call, source, message):
    with pytest.raises(ScenarioError, match=message) as caught:
        call()
    assert caught.value.source == source


def _with(scenario: dict, path: tuple, value) -> dict:
    scenario = copy.deepcopy(scenario)
    node = scenario
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return scenario


BY_ENGINE = {s["engine"]: s for s in SCENARIOS}
SCENARIO_REGRESSIONS = [
    # (engine, path, value, field named); OverflowError or TypeError before
    ("batch", ("model", "machines_path"), True, "machines_path"),
    ("batch", ("model", "trace", "max_jobs"), float("inf"), "trace.max_jobs"),
    ("batch", ("model", "trace", "max_jobs"), 10**400, "trace.max_jobs"),
    ("fairshare", ("model", "horizon"), 10**400, "horizon"),
    ("network", ("model", "horizon"), 10**400, "horizon"),
    ("elastic", ("model", "penalty", "factor"), 10**400, "penalty.factor"),
    ("elastic", ("model", "memory_step_mb"), 10**400, "memory_step_mb"),
    ("fairshare", ("seed",), 10**400, None),  # a huge seed is a valid whole number
    ("batch", ("model", "trace", "path"), "a\x00b", "trace.path"),  # ValueError: embedded null byte
]


@pytest.mark.parametrize("engine, path, value, field", SCENARIO_REGRESSIONS)
def test_former_scenario_crashes_are_typed_errors(engine, path, value, field):
    scenario = _with(BY_ENGINE[engine], path, value)
    if field is None:
        normalize_scenario(scenario)
        return
    with pytest.raises(ScenarioError) as caught:
        normalize_scenario(scenario, source="s.json")
    assert caught.value.field == f"model.{field}" and caught.value.source == "s.json"


@pytest.mark.parametrize("model", [
    {"trace": {"path": "sample_traces/hpc2n-excerpt.swf"}, "machines_path": "\x00"},
    {"trace": {"path": "sample_traces/hpc2n-excerpt.swf"}, "failures": {"kind": "trace", "path": "x\x00"}},
])
def test_file_names_with_a_nul_byte_are_typed_errors(model):  # ValueError: embedded null byte before
    with pytest.raises(ScenarioError, match="not a usable file name"):
        normalize_scenario({"engine": "batch", "policy": "easy", "model": model}, source="s.json")
    elastic = {"nodes": [{"count": 1, "cores": 1, "memory_mb": 1000}], "trace": {"kind": "file", "path": "\x00"}}
    with pytest.raises(ScenarioError, match="not a usable file name"):
        normalize_scenario({"engine": "elastic", "policy": "yarn", "model": elastic}, source="s.json")


def test_broken_gzip_is_a_trace_error(workdir):
    data = bytearray(gzip.compress(SWF_VALID.encode() * 50))
    data[len(data) // 2] ^= 0xFF  # corrupt deflate data: zlib.error before
    path = workdir / "broken.swf.gz"
    path.write_bytes(bytes(data))
    with pytest.raises(ScenarioError, match="broken.swf.gz: broken gzip data"):
        read_workload(path)


# --- hostile requests to the production server ---------------------------------------------------------------------
# The app served as `make run` serves it (gunicorn, two worker processes, threads), fed what the attacker
# sent: malformed callback bodies, oversize and falsely announced bodies, gzip bombs and unknown hosts. Every one
# gets a 4xx with one log line, no traceback, and the server's memory stays where it was.

UPLOAD_LIMIT = 2**20


@pytest.fixture(scope="module")
def production(tmp_path_factory):
    directory = tmp_path_factory.mktemp("production")
    server = ProductionServer(directory / "data", directory / "server.log",
                              {"SCHEDSCOPE_MAX_UPLOAD_BYTES": str(UPLOAD_LIMIT)})
    yield server
    server.stop()


def raw_request(server, method: str, path: str, body: bytes = b"", headers: dict | None = None,
                send_body: bool = True) -> tuple[int, bytes]:
    """One request on its own connection, headers exactly as given (``Content-Length`` may lie)."""
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    try:
        connection.putrequest(method, path, skip_host="Host" in (headers or {}))
        for name, value in {"Content-Length": str(len(body)), **(headers or {})}.items():
            connection.putheader(name, value)
        connection.endheaders(body if send_body else None)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def valid_body(client: DashClient) -> dict:
    """A well-formed request for the permalink page's callback (every value None)."""
    return client.payload(client.callback(scenario_page.ids.HASH, "data"), {}, (scenario_page.ids.HASH, "data"))


def without(field):
    return lambda body: {k: v for k, v in body.items() if k != field}


# The nine bodies of the issue, and more of each kind.
MALFORMED_BODIES = {
    "null": lambda body: None,
    "empty object": lambda body: {},
    "missing output": without("output"),
    "missing outputs": without("outputs"),
    "missing inputs": without("inputs"),
    "output of the wrong type": lambda body: {**body, "output": ["x"]},
    "inputs of the wrong type": lambda body: {**body, "inputs": "x"},
    "state of the wrong type": lambda body: {**body, "state": [7]},
    "changedPropIds of the wrong type": lambda body: {**body, "changedPropIds": 3},
    "a list": lambda body: [body],
    "a number": lambda body: 12,
    "an unknown callback": lambda body: {**body, "output": "nothing.children"},
}


@pytest.fixture(scope="module")
def page(production):
    client = DashClient(production.url)
    client.open_page("/batch")
    return client


@pytest.mark.system
@pytest.mark.parametrize("case", MALFORMED_BODIES)
def test_a_malformed_callback_body_is_a_400_with_one_log_line(production, page, case):
    before = production.log()
    body = json.dumps(MALFORMED_BODIES[case](valid_body(page))).encode()
    status, answer = raw_request(production, "POST", f"/_dash-update-component?endId={page.end_id}", body,
                                 {"Content-Type": "application/json"})
    assert status == 400 and b"malformed callback request" in answer
    added = production.log()[len(before):]
    assert added.count("refused a callback request") == 1 and "Traceback" not in added, added


@pytest.mark.system
@pytest.mark.parametrize("contents", [{"a": 1}, 42, [1, 2], True], ids=["dict", "int", "list", "bool"])
def test_upload_contents_that_are_not_a_file_are_a_400_with_one_log_line(production, page, contents):
    before = production.log()
    body = json.dumps(page.payload(page.callback(batch_page.ids.TRACE_UPLOAD, "contents"),
                                   {(batch_page.ids.TRACE_UPLOAD, "contents"): contents,
                                    (batch_page.ids.TRACE_UPLOAD, "filename"): "t.swf"},
                                   (batch_page.ids.TRACE_UPLOAD, "contents"))).encode()
    status, answer = raw_request(production, "POST", f"/_dash-update-component?endId={page.end_id}", body,
                                 {"Content-Type": "application/json"})
    assert status == 400 and b"an upload's 'contents' is not a text" in answer
    added = production.log()[len(before):]
    assert added.count("refused a callback request") == 1 and "Traceback" not in added, added


@pytest.mark.system
def test_an_oversize_body_is_a_413_and_an_announced_gibibyte_is_never_read(production, page):
    rss = production.memory_mb()
    limit = UPLOAD_LIMIT * 4 // 3 + 8 * 2**20
    started = time.monotonic()
    status, _ = raw_request(production, "POST", f"/_dash-update-component?endId={page.end_id}",
                            b"x" * (limit + 4096), {"Content-Type": "application/json"})
    assert status == 413
    # Announced as 1 GiB, sent as a few bytes: answered at once, not read until the client gives up.
    status, _ = raw_request(production, "POST", f"/_dash-update-component?endId={page.end_id}", b"{}",
                            {"Content-Type": "application/json", "Content-Length": str(2**30)}, send_body=True)
    assert status == 413 and time.monotonic() - started < 20
    assert production.memory_mb() - rss < 100


@pytest.mark.system
def test_a_gzip_bomb_upload_is_a_clear_error_naming_the_file(production, page):
    bomb = gzip.compress(b"1 0 0 10 1\n" * (3 * UPLOAD_LIMIT // 11), compresslevel=9)
    assert len(bomb) < UPLOAD_LIMIT // 10
    rss = production.memory_mb()
    contents = "data:application/gzip;base64," + base64.b64encode(bomb).decode()
    outputs = page.call(page.callback(batch_page.ids.TRACE_UPLOAD, "contents"),
                        {(batch_page.ids.TRACE_UPLOAD, "contents"): contents,
                         (batch_page.ids.TRACE_UPLOAD, "filename"): "bomb.swf.gz"}, (batch_page.ids.TRACE_UPLOAD, "contents"))
    text = json.dumps(outputs)
    assert "not loaded" in text and "bomb.swf.gz: decompresses to more than 1 MiB" in text, text
    assert production.memory_mb() - rss < 100


@pytest.mark.system
@pytest.mark.parametrize("host", ["attacker.example", "attacker.example:80", "127.0.0.1.attacker.example"])
@pytest.mark.parametrize("path", ["/", "/_dash-layout", "/_dash-dependencies"])
def test_an_unknown_host_is_a_400(production, host, path):
    status, _ = raw_request(production, "GET", path, headers={"Host": host})
    assert status == 400
    assert raw_request(production, "GET", path, headers={"Host": f"localhost:{production.port}"})[0] == 200
