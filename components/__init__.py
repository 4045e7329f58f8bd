"""The Dash app's panels, figure builders and services (cache, runs)."""
