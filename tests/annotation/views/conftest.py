"""Helpers shared by the page tests of the annotation app."""
from django.test import Client


def client_for(user):
    c = Client()
    c.force_login(user)
    return c
