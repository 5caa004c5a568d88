"""One settings module for laptops and deployments; the environment decides.

DEBUG defaults to on with embedded services. With DEBUG off, SECRET_KEY must be set: there is
no secret default in production mode.
"""
from django.core.exceptions import ImproperlyConfigured

from evalapp.env import BASE_DIR, VAR_DIR, env, laptop_secret_key

DEBUG = env.bool("DEBUG", default=True)

if DEBUG:
    SECRET_KEY = env.str("SECRET_KEY", default="") or laptop_secret_key()
else:
    SECRET_KEY = env.str("SECRET_KEY", default="")
    if not SECRET_KEY:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off.")

ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "annotation",
    "calibration",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "evalapp.middleware.BadInputMiddleware",
]

ROOT_URLCONF = "evalapp.urls"
WSGI_APPLICATION = "evalapp.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "evalapp.context_processors.roles",
            ],
        },
    },
]

VAR_DIR.mkdir(parents=True, exist_ok=True)
DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'evalapp.sqlite3'}")}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL lets the web server and the worker read while the other writes; the timeout makes
    # writers queue instead of failing with "database is locked".
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {"timeout": 30, "transaction_mode": "IMMEDIATE",
         "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"}
    )
if env.str("TEST_DATABASE_NAME", default=""):
    # Lets several test runs share one PostgreSQL server without dropping each other's test database.
    DATABASES["default"]["TEST"] = {"NAME": env.str("TEST_DATABASE_NAME")}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "staticfiles"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Token first, so an unauthenticated script gets 401 with a WWW-Authenticate header, not 403.
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "evalapp.api.Pagination",
    "PAGE_SIZE": 50,
    "EXCEPTION_HANDLER": "evalapp.api.exception_handler",
    "DEFAULT_PARSER_CLASSES": [
        "evalapp.api.JSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
}
# Request bodies: JSON and form bodies up to DATA_UPLOAD_MAX_MB (a queue of 100,000 items is ~5 MB);
# JSON Lines uploads (imports) up to MAX_UPLOAD_MB. Larger ones are refused with 413.
DATA_UPLOAD_MAX_MEMORY_SIZE = env.int("DATA_UPLOAD_MAX_MB", default=10) * 1024 * 1024
MAX_UPLOAD_BYTES = env.int("MAX_UPLOAD_MB", default=512) * 1024 * 1024
SPECTACULAR_SETTINGS = {
    "TITLE": "evalapp API",
    "DESCRIPTION": "Gold tagging, blind double annotation, judge calibration and paired comparisons.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "ENUM_NAME_OVERRIDES": {"VerdictEnum": "annotation.models.runs.VERDICTS"},
}

# Celery: a filesystem broker under var/ needs no service on a laptop; redis:// in CI and production.
_BROKER_DIR = VAR_DIR / "broker"
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default="filesystem://")
if CELERY_BROKER_URL.startswith("filesystem://"):
    for sub in ("in", "processed", "control"):
        (_BROKER_DIR / sub).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_BROKER_DIR / "in"),
        "data_folder_out": str(_BROKER_DIR / "in"),
        "processed_folder": str(_BROKER_DIR / "processed"),
        "control_folder": str(_BROKER_DIR / "control"),
        "store_processed": False,
        # The worker lists the folder this often; at the default 1 s every chunk of a calibration waited
        # up to a second to be picked up, more than judging it took.
        "polling_interval": env.float("CELERY_BROKER_POLLING_INTERVAL", default=0.1),
    }
CELERY_RESULT_BACKEND = env.str("CELERY_RESULT_BACKEND", default="") or None
if CELERY_RESULT_BACKEND is None and CELERY_BROKER_URL.startswith(("redis://", "rediss://")):
    # Calibration runs fan in with a chord, which needs a result backend; Redis joins chords natively.
    CELERY_RESULT_BACKEND = CELERY_BROKER_URL
CELERY_RESULT_EXPIRES = env.int("CELERY_RESULT_EXPIRES", default=86400)
# A running calibration with no heartbeat for this long is resumed when a worker starts.
CALIBRATION_STALL_SECONDS = env.int("CALIBRATION_STALL_SECONDS", default=120)
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SOFT_TIME_LIMIT = env.int("CELERY_TASK_SOFT_TIME_LIMIT", default=300)
CELERY_TASK_TIME_LIMIT = env.int("CELERY_TASK_TIME_LIMIT", default=360)
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]

# Judges: an OpenAI-compatible chat-completions server (vLLM, Ollama, llama.cpp, OpenAI).
JUDGE_OPENAI_BASE_URL = env.str("JUDGE_OPENAI_BASE_URL", default="http://127.0.0.1:8000/v1")
JUDGE_OPENAI_API_KEY = env.str("JUDGE_OPENAI_API_KEY", default="")

if not DEBUG:
    SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=True)
    CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=True)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="WARNING")},
}
