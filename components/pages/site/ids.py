"""The Site study page's component ids (``site-<thing>-<widget>``); the run panel's come from :data:`PANEL`, the
organisation editor's from :data:`EDITOR`."""

from ...widgets import run_panel, tree_editor

ENGINE = "site"   # the engine this page runs
PAGE = ENGINE
PANEL = run_panel.Ids(PAGE)
EDITOR = tree_editor.Ids(PAGE, item="organisation", leaf="user")
TRACE = "site-trace-dropdown"
UPLOAD = "site-trace-upload"
UPLOAD_MSG = "site-trace-message"
TIMEZONE = "site-timezone-input"           # the zone of an uploaded log's local times (sacct), used as it is read
ANONYMISE = "site-anonymise-checklist"     # an upload kept as SWF with its names replaced by salted hashes
SKIP_MALFORMED = "site-skip-malformed-checklist"   # an upload read skipping its malformed lines (kept with it)
REJECTED = "site-trace-rejected-store"     # the last upload was refused: ticking the skip box reads it again
MAX_JOBS = "site-max-jobs-input"
WEIGHTING = "site-weighting-radio"
ORG = "site-organisation-store"            # {"tree", "origin", "for": [trace, max_jobs], "weighting"}
CHOICE = "site-choice-store"               # the trace and first-jobs cut chosen last, kept across reloads
ORG_ORIGIN = "site-organisation-origin-text"
ORGANISATION = "site-organisation-table"
GROUP_FIELD = "site-form-group-dropdown"   # a user's group
GROUP_FIELD_BOX = "site-form-group-box"
HARDWARE = "site-hardware-text"
HW = "site-hardware-store"                 # {"rows": [...], "origin": ...}
HW_TABLE = "site-hardware-table"
HW_ADD = "site-hardware-add-button"
HW_HEADER = "site-hardware-header-button"
HW_UPLOAD = "site-hardware-upload"
DEFAULT_MEMORY = "site-default-memory-input"
POLICIES = "site-policies-checklist"
BACKFILL = "site-backfill-radio"
HALF_LIFE = "site-half-life-input"
FAILURES = "site-failures-radio"
ELASTIC = "site-elastic-checklist"
GROUP = "site-selected-group-store"
GROUP_MSG = "site-selected-group-text"
WINDOW = "site-window-store"
RESET_WINDOW = "site-reset-window-button"
STAKEHOLDERS = "site-stakeholder-summary"
SHARES = "site-shares-graph"
ISOLATION = "site-isolation-graph"
UTILISATION = "site-utilisation-graph"
WAITS = "site-waits-graph"
KILLED = "site-killed-graph"
# Why jobs waited in site A's first run (the batch page's two charts over the run's pending frame).
WHY_WAITED = "site-why-waited-graph"
WHY_WAITED_GROUPS = "site-why-waited-groups-graph"
GRAPHS = (SHARES, ISOLATION, UTILISATION, WAITS, KILLED)
SECOND = "site-second-trace-dropdown"       # the second site to compare with
SECOND_UPLOAD = "site-second-trace-upload"
SECOND_MSG = "site-second-trace-message"
WORKLOADS = "site-workloads-graph"
WORKLOAD_TABLE = "site-workloads-table"
RESULTS_TABLE = "site-compare-results-table"
HW_MSG = "site-hardware-message"
