"""The mode bar every chart shows, the same on pages, permalinks and HTML reports.

Plotly's own logo and its "Share chart" button are off: that button uploads
the chart's data to Plotly Cloud, and a site's trace must never leave the
machine by one click (it is also dead offline). Export stays local: PNG in
the browser, SVG and PDF from our own buttons (``assets/svg_export.js``).

The mode bar shows only while the pointer is on its chart (``assets/app.css``
holds that on devices Plotly would show it always), so at rest it never lies
over a title or a legend; it keeps only the tools a chart here uses (zoom a
box, pan, back to the whole chart), so shown it covers as little as it can.
No chart here selects points: box and lasso selection are off.
"""

GRAPH_CONFIG = {
    "displaylogo": False,
    "showSendToCloud": False,
    "displayModeBar": "hover",
    "modeBarButtonsToRemove": ["select2d", "lasso2d", "zoomIn2d", "zoomOut2d", "autoScale2d"],
}
