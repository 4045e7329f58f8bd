"""The background-callback manager: Dash's diskcache manager, safe against a finished job's race.

Dash asks whether a job process is still running with ``psutil.pid_exists``
and then ``psutil.Process(pid)``; a job that exits between the two raises
``NoSuchProcess``. That happens after the job's result was already read
(and removed) from the cache, so the request fails with a 500 and the page
waits forever for a result that is gone. The load test (20 concurrent runs)
hits it within seconds. A process that no longer exists is simply not
running, which is what these overrides answer.
"""

from __future__ import annotations

import psutil
from dash import DiskcacheManager


class JobManager(DiskcacheManager):
    def job_running(self, job):
        try:
            return super().job_running(job)
        except psutil.NoSuchProcess:
            return False

    def terminate_job(self, job):
        try:
            super().terminate_job(job)
        except psutil.NoSuchProcess:
            pass   # already gone: nothing to stop
