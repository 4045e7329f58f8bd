"""Site study: one site's workload through the organisation's fair share, backfilling, failures and memory."""
