"""One settings module for laptops and deployments; the environment decides.

DEBUG is off unless asked for (`make run`, `evalapp run` and the test settings turn it on). With DEBUG off,
a process that serves (the web server, a Celery worker or beat) refuses to start without SECRET_KEY and
ALLOWED_HOSTS: there is no secret default in production. A management command (migrate, an import,
check --deploy) runs without them, with a key generated once in var/secret_key.
"""

import sys
from datetime import timedelta

from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured

from evalapp.env import SITE_DIR, VAR_DIR, env, laptop_secret_key, serving

DEBUG = env.bool("DEBUG", default=False)
SERVING = serving(sys.argv)

SECRET_KEY = env.str("SECRET_KEY", default="")
if not SECRET_KEY:
    if SERVING and not DEBUG:
        raise ImproperlyConfigured(
            "SECRET_KEY must be set when DEBUG is off: this process serves requests or runs tasks "
            "(set DEBUG=true on a laptop)."
        )
    SECRET_KEY = laptop_secret_key()
if SERVING and not DEBUG and not env.str("ALLOWED_HOSTS", default=""):
    raise ImproperlyConfigured(
        "ALLOWED_HOSTS must be set when DEBUG is off: the host names this server answers to, comma-separated "
        "(e.g. ALLOWED_HOSTS=evalapp.example.com)."
    )
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
    "drf_spectacular_sidecar",
    "django_htmx",
    "axes",
    "csp",
    "annotation",
    "calibration",
    "comparisons",
    "evalapp.webhooks",
]

MIDDLEWARE = [
    # First and last: django-prometheus counts every request, its latency and its status (evalapp.metrics).
    "django_prometheus.middleware.PrometheusBeforeMiddleware",
    # A request id on the answer and on every log line of the request (evalapp.logs).
    "evalapp.middleware.RequestIdMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "evalapp.middleware.HtmxMiddleware",
    "evalapp.middleware.BadInputMiddleware",
    # Just before axes, so that it counts the lockout page axes answers with (a 429) as what was sent.
    "django_prometheus.middleware.PrometheusAfterMiddleware",
    # Last, as django-axes asks: it turns a lockout flagged during the view into the lockout page.
    "axes.middleware.AxesMiddleware",
]

# Operations (evalapp.health, evalapp.ops): /readyz waits at most READYZ_TIMEOUT seconds per check and, unless
# READYZ_REQUIRE_WORKER is off, needs a Celery worker answering a ping. /metrics answers a client with the
# bearer token METRICS_TOKEN when one is set, else loopback clients only unless METRICS_ALLOW is "any".
READYZ_TIMEOUT = env.float("READYZ_TIMEOUT", default=1.0)
READYZ_REQUIRE_WORKER = env.bool("READYZ_REQUIRE_WORKER", default=True)
METRICS_TOKEN = env.str("METRICS_TOKEN", default="")
METRICS_ALLOW = env.str("METRICS_ALLOW", default="loopback")
if METRICS_ALLOW not in ("loopback", "any"):
    raise ImproperlyConfigured("METRICS_ALLOW must be loopback or any.")

ROOT_URLCONF = "evalapp.urls"
WSGI_APPLICATION = "evalapp.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [SITE_DIR / "templates"],
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
# A read replica (optional): the read-only pages and APIs (queue statistics, compare, series, dataset history
# and diff, exports) read from it; writes, locks and everything else use the primary (evalapp.routers).
DATABASE_REPLICA_URL = env.str("DATABASE_REPLICA_URL", default="")
if DATABASE_REPLICA_URL:
    DATABASES["replica"] = env.db_url_config(DATABASE_REPLICA_URL)
DATABASE_REPLICA_READS = bool(DATABASE_REPLICA_URL)
DATABASE_ROUTERS = ["evalapp.routers.ReplicaRouter"]
for _db in DATABASES.values():
    if _db["ENGINE"] == "django.db.backends.sqlite3":
        # WAL lets the web server and the worker read while the other writes; the timeout makes
        # writers queue instead of failing with "database is locked".
        _db.setdefault("OPTIONS", {}).update(
            {
                "timeout": 30,
                "transaction_mode": "IMMEDIATE",
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            }
        )
if env.str("TEST_DATABASE_NAME", default=""):
    # Lets several test runs share one PostgreSQL server without dropping each other's test database.
    DATABASES["default"]["TEST"] = {"NAME": env.str("TEST_DATABASE_NAME")}
if "replica" in DATABASES:
    # Tests have no replication: the replica is the test database itself.
    DATABASES["replica"]["TEST"] = {"MIRROR": "default"}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
AUTHENTICATION_BACKENDS = [
    # First: refuses a locked-out account+address before any password is checked.
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
# Sign-in throttling (web and admin): AXES_FAILURE_LIMIT failures lock that account from that address
# for AXES_COOLOFF_MINUTES; failures are kept in the database, so every web worker sees them.
AXES_FAILURE_LIMIT = env.int("AXES_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME = timedelta(minutes=env.int("AXES_COOLOFF_MINUTES", default=15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "evalapp.views.locked_out"
AXES_CLIENT_IP_CALLABLE = "evalapp.auth.client_ip"
# How many reverse proxies in front of the app append to X-Forwarded-For; 0 means clients connect
# directly and the header, which anyone can send, is ignored.
TRUSTED_PROXY_COUNT = env.int("TRUSTED_PROXY_COUNT", default=0)
# Bad API tokens are counted per address (in the cache below) over the same cool-off.
API_TOKEN_FAILURE_LIMIT = env.int("API_TOKEN_FAILURE_LIMIT", default=AXES_FAILURE_LIMIT)
API_TOKEN_COOLOFF_SECONDS = int(AXES_COOLOFF_TIME.total_seconds())
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

# Single sign-on (OpenID Connect, mozilla-django-oidc; annotation.sso): off unless OIDC_RP_CLIENT_ID is set,
# and then the provider's endpoints must be too. Roles come from one claim (OIDC_ROLES_CLAIM) through
# OIDC_ROLE_MAP ("provider-group=role,..."), checked by the system checks (annotation.checks).
OIDC_RP_CLIENT_ID = env.str("OIDC_RP_CLIENT_ID", default="")
OIDC_ENABLED = bool(OIDC_RP_CLIENT_ID)
OIDC_ONLY = env.bool("OIDC_ONLY", default=False)
OIDC_RP_CLIENT_SECRET = env.str("OIDC_RP_CLIENT_SECRET", default="")
OIDC_OP_AUTHORIZATION_ENDPOINT = env.str("OIDC_OP_AUTHORIZATION_ENDPOINT", default="")
OIDC_OP_TOKEN_ENDPOINT = env.str("OIDC_OP_TOKEN_ENDPOINT", default="")
OIDC_OP_USER_ENDPOINT = env.str("OIDC_OP_USER_ENDPOINT", default="")
OIDC_OP_JWKS_ENDPOINT = env.str("OIDC_OP_JWKS_ENDPOINT", default="")
OIDC_RP_SIGN_ALGO = env.str("OIDC_RP_SIGN_ALGO", default="RS256")
OIDC_RP_SCOPES = env.str("OIDC_RP_SCOPES", default="openid email profile")
OIDC_ROLES_CLAIM = env.str("OIDC_ROLES_CLAIM", default="groups")
OIDC_ROLE_MAP = env.str("OIDC_ROLE_MAP", default="")
OIDC_USERNAME_CLAIM = env.str("OIDC_USERNAME_CLAIM", default="preferred_username")
OIDC_LINK_BY_USERNAME = env.bool("OIDC_LINK_BY_USERNAME", default=False)
OIDC_USE_PKCE = env.bool("OIDC_USE_PKCE", default=True)
OIDC_TIMEOUT = env.float("OIDC_TIMEOUT", default=10.0)
if OIDC_ENABLED:
    _oidc_missing = [
        name
        for name in ("OIDC_OP_AUTHORIZATION_ENDPOINT", "OIDC_OP_TOKEN_ENDPOINT", "OIDC_OP_USER_ENDPOINT")
        if not globals()[name]
    ]
    if OIDC_RP_SIGN_ALGO.startswith(("RS", "ES")) and not OIDC_OP_JWKS_ENDPOINT:
        _oidc_missing.append("OIDC_OP_JWKS_ENDPOINT")
    if _oidc_missing:
        raise ImproperlyConfigured(f"OIDC_RP_CLIENT_ID is set, so single sign-on needs {', '.join(_oidc_missing)}.")
    # After the axes backend (it must stay first for passwords); with OIDC_ONLY passwords sign nobody in.
    AUTHENTICATION_BACKENDS = [
        AUTHENTICATION_BACKENDS[0],
        *([] if OIDC_ONLY else AUTHENTICATION_BACKENDS[1:]),
        "annotation.sso.RoleMappingBackend",
    ]
elif OIDC_ONLY:
    raise ImproperlyConfigured("OIDC_ONLY=true needs single sign-on: set OIDC_RP_CLIENT_ID and the endpoints.")

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "staticfiles"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
STATICFILES_DIRS = [SITE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Token first, so an unauthenticated script gets 401 with a WWW-Authenticate header, not 403.
        "evalapp.auth.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "evalapp.api.Pagination",
    "PAGE_SIZE": 50,
    "EXCEPTION_HANDLER": "evalapp.api.exception_handler",
    "NUM_PROXIES": TRUSTED_PROXY_COUNT,
    "DEFAULT_PARSER_CLASSES": [
        "evalapp.parsers.JSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
}
# Request bodies: JSON and form bodies up to DATA_UPLOAD_MAX_MB (a queue of 100,000 items is ~5 MB);
# JSON Lines uploads (imports) up to MAX_UPLOAD_MB. Larger ones are refused with 413.
DATA_UPLOAD_MAX_MEMORY_SIZE = env.int("DATA_UPLOAD_MAX_MB", default=10) * 1024 * 1024
MAX_UPLOAD_BYTES = env.int("MAX_UPLOAD_MB", default=512) * 1024 * 1024
# API imports (corpus, questions, runs, labels) larger than this run as a Celery task (202 and a job to
# poll) instead of holding a web worker; smaller ones are imported inside the request as always.
EVALAPP_ASYNC_IMPORT_BYTES = env.int("EVALAPP_ASYNC_IMPORT_BYTES", default=4 * 1024 * 1024)
SPECTACULAR_SETTINGS = {
    "TITLE": "evalapp API",
    "DESCRIPTION": "Gold tagging, blind double annotation, judge calibration and paired comparisons.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Swagger UI from the installed sidecar package, served as static files: /api/docs/ needs no internet.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "ENUM_NAME_OVERRIDES": {
        "VerdictEnum": "annotation.models.runs.VERDICTS",
        "CriterionKindEnum": "evalstats.criteria.KINDS",
        "LabelTimeKindEnum": [("tagging", "tagging"), ("labelling", "labelling")],
        "BootstrapMethodEnum": [("plain", "plain"), ("stratified", "stratified")],
        "StratifiedBootstrapMethodEnum": [("stratified", "stratified")],
        "TrafficRuleKindEnum": "annotation.models.traffic.RULE_KINDS",
        "TrafficStratumSourceEnum": "annotation.models.traffic.STRATUM_SOURCES",
    },
}

from evalapp.settings.workers import *  # noqa: E402, F403
from evalapp.settings.workers import CELERY_BROKER_URL  # noqa: E402 - the cache falls back to a Redis broker

# The cache holds short-lived counters (failed API tokens). Local memory is per process, so a deployment
# with several web workers points CACHE_URL at Redis; a Redis broker is used when CACHE_URL is unset.
CACHE_URL = env.str("CACHE_URL", default="")
if not CACHE_URL and CELERY_BROKER_URL.startswith(("redis://", "rediss://")):
    CACHE_URL = CELERY_BROKER_URL
CACHES = {
    "default": {**env.cache_url_config(CACHE_URL), "KEY_PREFIX": "evalapp"}
    if CACHE_URL
    else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "evalapp"}
}

# Judges: an OpenAI-compatible chat-completions server (vLLM, Ollama, llama.cpp, OpenAI).
JUDGE_OPENAI_BASE_URL = env.str("JUDGE_OPENAI_BASE_URL", default="http://127.0.0.1:8000/v1")
JUDGE_OPENAI_API_KEY = env.str("JUDGE_OPENAI_API_KEY", default="")
# Where a judge may call (URL prefixes: scheme, host, port and leading path segments must match), checked
# when a version is created and again before every call. Loopback (127.0.0.0/8, localhost, [::1], any port)
# is allowed too with DEBUG on, for a model server on the laptop.
JUDGE_ALLOWED_BASE_URLS = env.list("JUDGE_ALLOWED_BASE_URLS", default=[JUDGE_OPENAI_BASE_URL])
JUDGE_ALLOW_LOOPBACK = env.bool("JUDGE_ALLOW_LOOPBACK", default=DEBUG)
# The gate warns of length bias when its interval excludes 0 and the gap is at least this many points.
JUDGE_LENGTH_BIAS_WARN_POINTS = env.float("JUDGE_LENGTH_BIAS_WARN_POINTS", default=10.0)

SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = env.str("SECURE_REFERRER_POLICY", default="same-origin")
X_FRAME_OPTIONS = "DENY"
# Every page's scripts and styles are static files: no inline script, event handler, <style> block or
# style attribute, and nothing evaluated (htmx runs with allowEval off, see base.html). The API docs page
# (drf-spectacular's Swagger UI) loosens this for itself in evalapp/urls.py.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF, "data:"],
        "font-src": [SELF],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "frame-ancestors": [NONE],
        "form-action": [SELF],
    },
}
if not DEBUG:
    SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=True)
    CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=True)
    # HTTPS only, by default. Behind a proxy that terminates TLS, SECURE_PROXY_SSL_HEADER names the header
    # it sets (HTTP_X_FORWARDED_PROTO,https) so Django sees the request as secure and does not redirect it
    # forever; set SECURE_SSL_REDIRECT=false only where the proxy itself redirects plain HTTP.
    SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=True)
    SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=31536000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=True)
    SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=True)
    _proxy_header = env.list("SECURE_PROXY_SSL_HEADER", default=[])
    if _proxy_header:
        if len(_proxy_header) != 2 or not all(_proxy_header):
            raise ImproperlyConfigured(
                "SECURE_PROXY_SSL_HEADER must be HEADER,VALUE, e.g. HTTP_X_FORWARDED_PROTO,https"
            )
        SECURE_PROXY_SSL_HEADER = tuple(_proxy_header)

# LOG_FORMAT=json (the default with DEBUG off) writes one JSON object a line, with the request id, the user,
# the Celery task id and name and the calibration or grading run: one run can be
# followed across the web app and every worker. text (the default on a laptop) writes the message alone.
# (evalapp.logs.JsonFormatter adds the context, evalapp.logs.add_context.)
LOG_FORMAT = env.str("LOG_FORMAT", default="text" if DEBUG else "json")
if LOG_FORMAT not in ("json", "text"):
    raise ImproperlyConfigured("LOG_FORMAT must be json or text.")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"forbidden_without_traceback": {"()": "evalapp.logs.ForbiddenWithoutTraceback"}},
    "formatters": {
        "json": {
            "()": "evalapp.logs.JsonFormatter",
            "fmt": "%(asctime)s %(levelname)s %(name)s %(message)s %(request_id)s %(user)s %(task_id)s %(task)s %(run)s",
            "rename_fields": {"asctime": "time", "levelname": "level", "name": "logger"},
        },
        "text": {"format": "%(message)s"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "filters": ["forbidden_without_traceback"],
            "formatter": LOG_FORMAT,
        }
    },
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="WARNING")},
}
# With JSON logs a worker keeps these settings' handler instead of installing Celery's own format.
CELERY_WORKER_HIJACK_ROOT_LOGGER = LOG_FORMAT != "json"
