"""The Gallery page's component ids (``gallery-<thing>-<widget>``)."""

RUN = "gallery-run-button"          # pattern-matching type, keyed by card
RUN_ALL = "gallery-run-all-button"
TABLE = "gallery-table"             # pattern-matching type, keyed by card
STATUS = "gallery-status"           # pattern-matching type, keyed by card
CHART = "gallery-chart-graph"       # pattern-matching type, keyed by card
WHY = "gallery-why"                 # pattern-matching type, keyed by card: why each NO
POLL = "gallery-poll-interval"      # while cards are computed in the background, the page looks again
