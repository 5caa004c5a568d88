from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "evalapp.webhooks"
    label = "webhooks"
    verbose_name = "Webhooks"
