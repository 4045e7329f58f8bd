"""What the Run and Cancel buttons say, the same on every engine page (in the browser, no round trip).

Dash stops a cancelled background run but leaves the page as the run left
it: the progress bar frozen part-way and the message of the run before. On
Cancel the page says instead how long the run had been going and that
nothing of it was kept, and the bar goes back to empty. The previous
results stay on the page (the run never replaced them).
"""

from __future__ import annotations

from dash import Input, Output, State

CANCELLED = "Cancelled after {seconds} s; nothing was saved. The previous results stay."

# The bar's (value, max) when no run is going: a page's background callback passes it as
# ``progress_default``, which Dash applies after the run's last poll. The last poll of a cancelled
# run still carries the run's latest progress report, so an empty bar set only on Cancel would be
# overwritten by it.
EMPTY_PROGRESS = ["0", "100"]


def register(app, run: str, cancel: str, progress: str, message: str) -> None:
    """Cancel feedback for one page: ids of its Run and Cancel buttons, progress bar and run message."""
    # When Run is pressed, the button remembers the time (a data-* attribute, read back on Cancel).
    app.clientside_callback(
        "function(clicks) { return clicks ? Date.now() : window.dash_clientside.no_update; }",
        Output(run, "data-started"), Input(run, "n_clicks"), prevent_initial_call=True,
    )
    template = CANCELLED.replace("{seconds}", "' + seconds + '")
    app.clientside_callback(
        f"""function(clicks, started) {{
            if (!clicks) {{ return window.dash_clientside.no_update; }}
            const seconds = started ? Math.max(0, Math.round((Date.now() - started) / 1000)) : 0;
            return ['{template}', '0'];
        }}""",
        Output(message, "children", allow_duplicate=True), Output(progress, "value", allow_duplicate=True),
        Input(cancel, "n_clicks"), State(run, "data-started"), prevent_initial_call=True,
    )
