"""The Site study page's component ids (``site-<thing>-<widget>``); the run panel's come from :data:`PANEL`."""

from ...widgets import run_panel

ENGINE = "site"   # the engine this page runs
PAGE = ENGINE
PANEL = run_panel.Ids(PAGE)
TRACE = "site-trace-dropdown"
UPLOAD = "site-trace-upload"
UPLOAD_MSG = "site-trace-message"
MAX_JOBS = "site-max-jobs-input"
WEIGHTING = "site-weighting-radio"
ORGANISATION = "site-organisation-table"
HARDWARE = "site-hardware-text"
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
GRAPHS = (SHARES, ISOLATION, UTILISATION, WAITS, KILLED)
