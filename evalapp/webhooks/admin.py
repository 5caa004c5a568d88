"""Webhooks in the admin: the secret is write-only (never shown back); deliveries are read-only, with a
"redeliver" action. Superusers only: a delivery's payload carries a run's kappa and counts and a gate's
figures, which a staff member labelling blind must not read (evalapp cannot ask annotation for their blind
scope, so nobody but a superuser sees these pages)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from evalapp.webhooks import services
from evalapp.webhooks.models import EVENTS, Delivery, WatchedState, Webhook


class SuperuserOnly(admin.ModelAdmin):  # type: ignore[type-arg]
    def has_module_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.is_superuser)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return bool(request.user.is_superuser)

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return bool(request.user.is_superuser)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return bool(request.user.is_superuser)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return bool(request.user.is_superuser)


class WebhookForm(forms.ModelForm):  # type: ignore[type-arg]
    url = forms.URLField(max_length=2000, assume_scheme="https", help_text="http:// or https:// only")
    secret = forms.CharField(
        widget=forms.PasswordInput(render_value=False),
        required=False,
        help_text="the HMAC key; never shown again. Leave empty to keep the current one.",
    )
    events = forms.MultipleChoiceField(
        choices=[(e, e) for e in EVENTS],
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="none ticked: every event",
    )

    class Meta:
        model = Webhook
        fields = ["url", "events", "secret", "active"]

    def clean_secret(self) -> str:
        secret: str = self.cleaned_data.get("secret") or ""
        if not secret.strip():
            if self.instance.pk:
                kept: str = self.instance.secret
                return kept
            raise forms.ValidationError("give the secret the receiver verifies signatures with")
        return secret


@admin.register(Webhook)
class WebhookAdmin(SuperuserOnly):
    form = WebhookForm
    list_display = ["id", "url", "events", "active", "created_at"]
    list_filter = ["active"]


@admin.register(Delivery)
class DeliveryAdmin(SuperuserOnly):
    list_display = ["id", "event", "webhook", "status", "attempts", "last_status_code", "created_at", "delivered_at"]
    list_filter = ["status", "event"]
    readonly_fields = [
        "webhook",
        "event_id",
        "event",
        "payload",
        "status",
        "attempts",
        "last_status_code",
        "last_error",
        "next_attempt_at",
        "delivered_at",
        "created_at",
    ]
    actions = ["redeliver"]

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.action(description="Redeliver the selected deliveries")
    def redeliver(self, request: HttpRequest, queryset: QuerySet[Delivery]) -> None:
        n = services.delivery_redeliver(delivery_ids=list(queryset.values_list("pk", flat=True)))
        self.message_user(request, f"{n} delivery(ies) will be sent again.", messages.SUCCESS)


@admin.register(WatchedState)
class WatchedStateAdmin(SuperuserOnly):
    """What the gate watch last saw; written by it alone."""

    list_display = ["key", "value", "updated_at"]
    readonly_fields = ["key", "value", "updated_at"]

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
