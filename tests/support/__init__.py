"""What several test modules (and the load benchmark) share: a Dash client over HTTP, served apps, processes.

- ``dash_client``: :class:`~tests.support.dash_client.DashClient`, one browser
  session over plain HTTP (layout, callbacks, background runs polled as the
  renderer polls them), and the load scenario.
- ``served``: :func:`~tests.support.served.served_app`, a built app on a
  loopback port in this process, its job processes killed at the end.
- ``callbacks``: :func:`~tests.support.callbacks.fired`, to call a page's
  callback function as Dash calls it, with the input that fired it.
- ``processes``: a free port, ``redis-server`` and ``python app.py`` as real
  processes (:func:`~tests.support.processes.redis_server`,
  :class:`~tests.support.processes.AppProcess`).
- ``gallery_runs``: :class:`~tests.support.gallery_runs.GalleryRuns`, each
  gallery card simulated once per session and shared by the test processes
  (the ``gallery_runs`` fixture of ``tests/conftest.py``).
"""
