"""The Workspace page's component ids (``workspace-<thing>-<widget>``)."""

SCENARIOS = "workspace-scenarios-table"
RUNS = "workspace-runs-table"
UPLOADS = "workspace-uploads-table"
REFRESH = "workspace-refresh-button"
SCENARIO_UPLOAD = "workspace-scenario-upload"
UPLOAD_MSG = "workspace-upload-message"
SKIPPED = "workspace-skipped-list"
