"""The app's infrastructure, without layout: results cache, background jobs and progress, uploads, stores, exports."""
