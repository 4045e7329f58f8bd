"""The mode bar every chart shows, the same on pages, permalinks and HTML reports.

Plotly's own logo and its "Share chart" button are off: that button uploads
the chart's data to Plotly Cloud, and a site's trace must never leave the
machine by one click (it is also dead offline). Export stays local: PNG in
the browser, SVG and PDF from our own buttons (``assets/svg_export.js``).
"""

GRAPH_CONFIG = {"displaylogo": False, "showSendToCloud": False}
