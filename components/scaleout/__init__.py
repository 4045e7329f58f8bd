"""Scale-out on Celery + Redis: the Celery app and the Celery sweep executor (only used when ``REDIS_URL`` is set)."""
