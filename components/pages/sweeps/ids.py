"""The Sweeps page's component ids (``sweep-<thing>-<widget>``)."""


KIND = "sweep-kind-radio"
KIND_HINT = "sweep-kind-hint"
LINK_MSG = "sweep-link-message"    # what the page says of a link's workload it cannot use
PARAM = "sweep-param-input"        # pattern-matching type, keyed by kind and parameter name
PARAM_BOX = "sweep-param-box"      # pattern-matching type, keyed by kind
POINTS = "sweep-points-message"
RUN = "sweep-run-button"
CANCEL = "sweep-cancel-button"
PROGRESS = "sweep-run-progress"
PROGRESS_TEXT = "sweep-progress-text"
RUN_MSG = "sweep-run-message"
HEADING = "sweep-results-heading"
VERDICT = "sweep-verdict-text"     # the calibrate sweep's sentence: which setting fits the log best, by how much
LAST = "sweep-last-store"
OPEN = "sweep-open-store"     # the stored sweep a /sweeps?sweep=<key> link opens (the Workspace lists them)
SUMMARY = "sweep-summary-table"
METRIC = "sweep-metric-dropdown"
GRAPH = "sweep-plot-graph"
TABLE = "sweep-points-table"
EXPORT_BUTTONS = "sweep-export-button"  # pattern-matching type, keyed by table (points, summary)
DOWNLOAD = "sweep-download"   # the hidden link to a prepared CSV (components/services/prepared.py)
