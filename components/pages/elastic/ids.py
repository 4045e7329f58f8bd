"""The Memory elasticity page's component ids (``elastic-<thing>-<widget>``); the run panel's come from :data:`PANEL`."""

from ...widgets import run_panel

ENGINE = "elastic"   # the engine this page runs
PAGE = ENGINE
PANEL = run_panel.Ids(PAGE)
LOADED = "elastic-loaded-store"
WINDOW = "elastic-window-store"
PRESET_PAPER = "elastic-preset-paper-button"
PRESET_TWO_JOB = "elastic-preset-two-job-button"
NODES = "elastic-cluster-nodes-input"
CORES = "elastic-cluster-cores-input"
MEMORY = "elastic-cluster-memory-input"
SOURCE = "elastic-trace-source-radio"
JOBS = "elastic-trace-jobs-input"
DISTRIBUTION = "elastic-trace-distribution-radio"
RANGE = "elastic-trace-range-input"  # pattern-matching type, keyed by parameter and end (0 = min, 1 = max)
SEED = "elastic-trace-seed-input"
TRACE_UPLOAD = "elastic-trace-upload"
TRACE_CHOICE = "elastic-trace-choice-dropdown"
TRACE_MSG = "elastic-trace-message"
TRACE_INFO = "elastic-trace-info"
PENALTY_KIND = "elastic-penalty-kind-radio"
FACTOR = "elastic-penalty-factor-input"
SHAPE = "elastic-penalty-shape-radio"
PROFILE_FRACTION = "elastic-penalty-fraction-input"
PROFILE_RATIO = "elastic-penalty-ratio-input"
FITTED_BOX = "elastic-penalty-fitted-box"
FACTOR_BOX = "elastic-penalty-factor-box"
PENALTY_MSG = "elastic-penalty-message"
PROFILE = "elastic-penalty-profile-graph"
POLICIES = "elastic-run-policies-checklist"
RATIO = "elastic-summary-ratio"
JOB_TABLE = "elastic-jobs-table"
WINDOW_MSG = "elastic-window-message"
RESET_WINDOW = "elastic-reset-window-button"
MEMORY_GRAPH = "elastic-memory-graph"
TASKS_GRAPH = "elastic-tasks-graph"
SCATTER = "elastic-scatter-graph"
CDF = "elastic-cdf-graph"
JOB = "elastic-node-job-dropdown"
NODE_GRAPH = "elastic-node-graph"

