"""Schedules: a creation refreshed daily, weekly or on a cron line, each refresh a new version."""
