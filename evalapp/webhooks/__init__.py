"""Signed webhooks: events any app emits (webhook_emit), delivered by Celery with retries (the lowest layer)."""
