"""Test settings: the base settings, with fast password hashing."""
from evalapp.settings.base import *  # noqa: F401,F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
