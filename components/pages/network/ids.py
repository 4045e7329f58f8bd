"""The Network isolation page's component ids (``network-<thing>-<widget>``); the run panel's come from :data:`PANEL`."""

from ...widgets import run_panel

ENGINE = "network"   # the engine this page runs
PAGE = ENGINE
PANEL = run_panel.Ids(PAGE)
DRAFT = "network-draft-store"
WINDOW = "network-window-store"
PRESET_FIG1 = "network-preset-fig1-button"
PRESET_FIG6 = "network-preset-fig6-button"
MACHINE_MODE = "network-machines-mode-radio"
MACHINE_GEN = "network-machine-generator-input"  # pattern-matching type, keyed by field
MACHINE_GEN_BOX = "network-machine-generator-box"
MACHINES = "network-machines-table"
MACHINES_BOX = "network-machines-table-box"
ADD_MACHINE = "network-add-machine-button"
MACHINES_MSG = "network-machines-message"
APP_MODE = "network-apps-mode-radio"
APP_GEN = "network-app-generator-input"  # pattern-matching type, keyed by field
APP_GEN_BOX = "network-app-generator-box"
ARRIVALS = "network-app-arrivals-radio"
PATTERN = "network-app-pattern-dropdown"
APPS = "network-apps-table"
APPS_BOX = "network-apps-table-box"
ADD_APP = "network-add-app-button"
APPS_UPLOAD = "network-apps-upload"
APPS_CHOICE = "network-apps-choice-dropdown"
UPLOAD_BOX = "network-apps-upload-box"
APPS_MSG = "network-apps-message"
SCHEMES = "network-schemes-checklist"
PLACEMENT = "network-placement-radio"
SEED = "network-seed-input"
DETAIL_SCHEME = "network-detail-scheme-dropdown"
APP = "network-selected-app-dropdown"
INSTANT = "network-instant-input"
WINDOW_MSG = "network-window-message"
RESET_WINDOW = "network-reset-window-button"
ISOLATION = "network-isolation-graph"
CDF = "network-cdf-graph"
DURATIONS = "network-durations-graph"
HEATMAP = "network-heatmap-graph"
PLACEMENT_VIEW = "network-placement-graph"
