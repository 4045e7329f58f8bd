"""The Fair sharing page's component ids (``fairshare-<thing>-<widget>``); the run panel's come from :data:`PANEL`."""

from ...widgets import run_panel, tree_editor

ENGINE = "fairshare"   # the engine this page runs
PAGE = ENGINE
PANEL = run_panel.Ids(PAGE)
EDITOR = tree_editor.Ids(PAGE)   # the tree editor's ids (fairshare-tree-cytoscape, ...)
DRAFT = "fairshare-draft-store"
SELECTED = EDITOR.selected
HOVER = "fairshare-hover-store"
TREE = EDITOR.tree
PRESET = "fairshare-preset-button"
RESET = "fairshare-reset-button"
ADD_DEPT = EDITOR.add_department
ADD_JOB = EDITOR.add_leaf
REMOVE = EDITOR.remove
APPLY = EDITOR.apply
FORM_TITLE = EDITOR.form_title
NAME = EDITOR.name
WEIGHT = EDITOR.weight
TASKS = "fairshare-form-tasks-input"
DURATION = "fairshare-form-duration-input"
ARRIVAL = "fairshare-form-arrival-input"
DEPARTURE = "fairshare-form-departure-input"
JOB_FIELDS = "fairshare-form-job-fields"
DEMANDS = "fairshare-form-demands"
DEMAND = "fairshare-form-demand-input"  # pattern-matching type, keyed by resource
TREE_MSG = EDITOR.message
CAPACITY = "fairshare-capacity-table"
ADD_RESOURCE = "fairshare-add-resource-button"
CAPACITY_MSG = "fairshare-capacity-message"
POLICIES = "fairshare-policies-checklist"
SHARES = "fairshare-shares-graph"
INSTANT = "fairshare-instant-input"
TASKS_AT = "fairshare-tasks-graph"
COST = "fairshare-cost-graph"
PAPER = "fairshare-paper-table"
PAPER_BOX = "fairshare-paper-box"
EXPORT_RUN = "fairshare-export-run-dropdown"
HIER_CHOICE = EDITOR.choice
HIER_NAME = EDITOR.item_name
SAVE_HIER = EDITOR.save
HIER_UPLOAD = EDITOR.upload
EXPORT_HIER = EDITOR.export
HIER_DOWNLOAD = EDITOR.download
HIER_MSG = EDITOR.item_message
