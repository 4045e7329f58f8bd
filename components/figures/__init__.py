"""Pure figure builders, ``(frames, options) -> go.Figure``: one module per engine page, plus sweeps and common parts."""
