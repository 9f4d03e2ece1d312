"""Settings of the MPIJob dashboard, all from environment variables.

Defaults make a fresh checkout run (SQLite, the in-memory channel layer); production
sets DATABASE_URL (PostgreSQL) and REDIS_URL (channels_redis). README.md lists them all.
"""

from __future__ import annotations

import ipaddress
import secrets
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from dashboard.env import env_bool, env_int, env_list, env_str, env_url

BASE_DIR = Path(__file__).resolve().parent.parent


def _secret_key() -> str:
    key = env_str("SECRET_KEY")
    if key:
        return key
    # A fresh checkout gets its own key, kept next to the SQLite database.
    path = BASE_DIR / ".secret-key"
    if not path.exists():
        path.write_text(secrets.token_urlsafe(50))
        path.chmod(0o600)
    return path.read_text().strip()


SECRET_KEY = _secret_key()
# Earlier secret keys, comma-separated, while rotating SECRET_KEY: sessions signed and
# tokens sealed (training/accounts/session.py) under them still open.
SECRET_KEY_FALLBACKS = env_list("SECRET_KEY_FALLBACKS")
DEBUG = env_bool("DEBUG", False)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "127.0.0.1,localhost")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")
SITE_NAME = env_str("SITE_NAME", "MPIJob dashboard")

INSTALLED_APPS = [
    "daphne",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "django_htmx",
    "crispy_forms",
    "template_partials",
    "training",
]

MIDDLEWARE = [
    "training.monitoring.exposition.RequestMetricsMiddleware",  # first: times the whole request
    "training.views.middleware.RequestIdMiddleware",
    # HTML and JSON compressed (Django's GZip pads each answer against BREACH)
    "training.views.middleware.CompressionMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "training.web.headers.SecurityHeadersMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # request.htmx for everything after it (sign-in redirects and error pages included)
    "django_htmx.middleware.HtmxMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "training.web.localtime.TimeZoneMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "training.views.middleware.ClusterSessionMiddleware",
    "training.views.middleware.DashboardLoginRequiredMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "training.views.middleware.ClusterErrorMiddleware",
]

ROOT_URLCONF = "dashboard.urls"
ASGI_APPLICATION = "dashboard.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "training.web.context_processors.navigation",
            ],
            "builtins": ["template_partials.templatetags.partials"],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        env_url("DATABASE_URL", f"sqlite:///{BASE_DIR / 'db.sqlite3'}"), conn_max_age=60)
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env_url("REDIS_URL")
if REDIS_URL:
    # redis-py 8 gives a pool at most 100 connections: a web process whose sockets
    # (re)connect by the hundred ran out ("Too many connections": groups not joined, or
    # not left; benchmarks/soak.py). Its read timeouts are left as they are: a 15 s one
    # kept a web process from hearing a restarted watch hub
    # (tests/integration/dashboard/test_scaled_out.py)
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels_redis.core.RedisChannelLayer",
                                  "CONFIG": {"hosts": [{"address": REDIS_URL,
                                                        "max_connections": 1000}]}}}
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
# Cached shortcuts (served job kinds, nodes, training progress per person): shared by every
# process through Redis when there is one (Django's RedisCache, reading a miss while Redis
# is away: dashboard/cache.py), else kept per process.
if REDIS_URL:
    CACHES = {"default": {"BACKEND": "dashboard.cache.ForgivingRedisCache",
                          "LOCATION": REDIS_URL, "KEY_PREFIX": "mpijob-dashboard",
                          "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1}}}
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}


def _pod_namespace() -> str:
    """The namespace this pod runs in (its service account's), else the manifests' own."""
    path = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
    try:
        return path.read_text().strip() or "mpijob-dashboard"
    except OSError:
        return "mpijob-dashboard"


# The watch hub runs inside the web process (started by the first websocket) unless this is
# false; then `python manage.py runwatcher` runs it and publishes through REDIS_URL.
WATCHER_EMBEDDED = env_bool("WATCHER_EMBEDDED", True)
# How long an answer to "may this person ...?" is kept, for pages and sockets alike
# (training/permissions.py): a role granted or taken away counts within this time.
ACCESS_TTL_SECONDS = env_int("ACCESS_TTL_SECONDS", 60, minimum=1)
# An open live-updates socket re-checks the person's session and access this often (seconds;
# access answers are kept ACCESS_TTL_SECONDS, so the API server sees one review a minute).
LIVE_RECHECK_SECONDS = env_int("LIVE_RECHECK_SECONDS", 15, minimum=1)

# The person's OpenShift token lives only in this server-side session.
SESSION_ENGINE = "django.contrib.sessions.backends.db"
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", False)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
LANGUAGE_COOKIE_SECURE = SESSION_COOKIE_SECURE
SESSION_COOKIE_AGE = env_int("SESSION_COOKIE_AGE", 12 * 3600, minimum=60)
SESSION_COOKIE_NAME = "mpijob_dashboard_session"
LOGIN_URL = "training-login"
CSRF_FAILURE_VIEW = "training.views.errors.csrf_failure"
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
if env_bool("BEHIND_TLS_PROXY", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# The audit trail's source IP: the router's X-Forwarded-For hop when behind it, else the peer.
TRUST_X_FORWARDED_FOR = env_bool("BEHIND_TLS_PROXY", False)


def _networks(name: str) -> list[str]:
    values = env_list(name)
    for value in values:
        try:
            ipaddress.ip_network(value, strict=False)
        except ValueError:
            raise ImproperlyConfigured(f"{name}: {value!r} is not a network (CIDR such as "
                                       "10.128.0.0/14)") from None
    return values


# -- /metrics (Prometheus) --------------------------------------------------------------------
# Unset, both: open to anyone who reaches the port (the demo). A token: Prometheus must send
# "Authorization: Bearer <token>". Networks (comma-separated CIDRs): the client address
# (the last X-Forwarded-For hop behind the router) must be in one. Both set: both apply.
METRICS_BEARER_TOKEN = env_str("METRICS_BEARER_TOKEN")
METRICS_ALLOWED_NETWORKS = _networks("METRICS_ALLOWED_NETWORKS")
# runwatcher serves /metrics (the hub's job and quota numbers) on this port; 0: it does not.
WATCHER_METRICS_PORT = env_int("WATCHER_METRICS_PORT", 0, minimum=0)
# Several runwatcher replicas, one active: they elect it through a coordination.k8s.io
# Lease in the dashboard's namespace (odh/training/cluster/election.py). The others stand by
# and take over once the Lease has gone unrenewed for WATCHER_LEASE_SECONDS.
WATCHER_LEADER_ELECTION = env_bool("WATCHER_LEADER_ELECTION", False)
WATCHER_LEASE_NAME = env_str("WATCHER_LEASE_NAME") or "mpijob-dashboard-watcher"
WATCHER_LEASE_NAMESPACE = env_str("WATCHER_LEASE_NAMESPACE") or _pod_namespace()
# The prices set at /cluster/prices/ are published for the CLI and SDK as the ConfigMap
# mpijob-dashboard-prices in this namespace (odh.training.cost; deploy/base/rbac-prices.yaml).
PRICES_NAMESPACE = env_str("PRICES_NAMESPACE") or _pod_namespace()
WATCHER_LEASE_SECONDS = env_int("WATCHER_LEASE_SECONDS", 15, minimum=2)
# How long the watch hub gathers a quiet job's first change before pushing it (what one
# write changed at once); the changes that follow are coalesced over 0.2 s. 200 makes
# every change wait the whole window (the hub before 2026-11-26).
LIVE_PUSH_LEAD_MS = env_int("LIVE_PUSH_LEAD_MS", 10, minimum=0)
# How long a thread of a process that hosts the watch hub (runwatcher, or a web process
# with the embedded hub) keeps the GIL while another waits for it: the hub renders for
# tens of ms while the event loop that sends its pushes wants the GIL for a moment at each
# step. Python's own is 5.
LIVE_SWITCH_INTERVAL_MS = env_int("LIVE_SWITCH_INTERVAL_MS", 1, minimum=1)

LANGUAGE_CODE = "en"
# The OpenShift console's languages. Each is named in itself (the user menu's switcher is
# read by people who may not read the current language). The browser's Accept-Language
# chooses (zh-CN and zh-SG mean zh-hans) until the person picks one in the user menu,
# which a cookie remembers. Catalogues are compiled at install (make install).
LANGUAGES = [
    ("en", "English"),
    ("es", "Español"),
    ("fr", "Français"),
    ("ja", "日本語"),
    ("ko", "한국어"),
    ("zh-hans", "简体中文"),
]
LANGUAGE_COOKIE_NAME = "dashboard_language"
LANGUAGE_COOKIE_AGE = 365 * 24 * 3600
LANGUAGE_COOKIE_SAMESITE = "Lax"
LOCALE_PATHS = [BASE_DIR / "locale"]
# The troubleshooting guide's pages (Markdown), served at /help/troubleshooting/
TROUBLESHOOTING_DIR = BASE_DIR / "docs" / "troubleshooting"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
# collectstatic's target (container builds set it); without it WhiteNoise serves from the finders
STATIC_ROOT = env_str("STATIC_ROOT") or None
STATICFILES_DIRS = [
    BASE_DIR / "static",
    ("patternfly", BASE_DIR / "node_modules" / "@patternfly" / "patternfly"),
    # Plotly.js's basic bundle (scatter and bar: all our charts draw; 1.2 MB, not the full
    # bundle's 4.8 MB, and none of its map code, which adds a <style> the
    # Content-Security-Policy refuses)
    ("plotly", BASE_DIR / "node_modules" / "plotly.js-basic-dist-min"),
]
# its style rules are served as a stylesheet (training/web/plotly_css.py)
PLOTLY_BUNDLE = BASE_DIR / "node_modules" / "plotly.js-basic-dist-min" / "plotly-basic.min.js"
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG
if STATIC_ROOT:
    # A deployment (collectstatic ran): file names carry a hash of their content, gzip and
    # Brotli copies are made once, and WhiteNoise lets browsers keep them for a year.
    STORAGES = {
        "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
        "staticfiles": {"BACKEND": "dashboard.storage.StaticStorage"},
    }

CRISPY_TEMPLATE_PACK = "patternfly"
CRISPY_ALLOWED_TEMPLATE_PACKS = ("patternfly",)

# -- the cluster ------------------------------------------------------------------------------
# A kubeconfig for the dashboard's own service account (API server URL, CA, token). Unset:
# the in-cluster service account (KUBERNETES_SERVICE_HOST and the mounted token).
CLUSTER_KUBECONFIG = env_str("CLUSTER_KUBECONFIG")
CLUSTER_CONNECT_TIMEOUT = env_int("CLUSTER_CONNECT_TIMEOUT", 5, minimum=1)
CLUSTER_READ_TIMEOUT = env_int("CLUSTER_READ_TIMEOUT", 30, minimum=1)
OAUTH_CLIENT_ID = env_str("OAUTH_CLIENT_ID", "mpijob-dashboard")
OAUTH_CLIENT_SECRET = env_str("OAUTH_CLIENT_SECRET")
OAUTH_SCOPE = env_str("OAUTH_SCOPE", "user:full")
PROMETHEUS_URL = env_url("PROMETHEUS_URL")
# The OpenShift web console (https://console-openshift-console.apps.<cluster>); set, the
# Overview links each pod to it (<console>/k8s/ns/<namespace>/pods/<pod>). Unset: no link.
CONSOLE_URL = env_url("CONSOLE_URL").rstrip("/")
# OpenShift AI's own dashboard: a succeeded run's card links to its project's models there
# (where model serving is installed), else gives the `oc` command that deploys the model
ODH_DASHBOARD_URL = env_url("ODH_DASHBOARD_URL").rstrip("/")
# The CA that signed Prometheus's certificate; unset: the cluster's CA (from the kubeconfig or
# the service account). On OpenShift the Thanos querier's certificate comes from the service
# CA: /var/run/secrets/kubernetes.io/serviceaccount/service-ca.crt inside the cluster.
PROMETHEUS_CA_FILE = env_str("PROMETHEUS_CA_FILE")
PROMETHEUS_TIMEOUT = env_int("PROMETHEUS_TIMEOUT", 15, minimum=1)  # seconds, Metrics tab
# seconds between the Metrics tab's new points (Prometheus scrapes every 15 s by default)
METRICS_REFRESH_SECONDS = env_int("METRICS_REFRESH_SECONDS", 15, minimum=1)
# seconds between the watcher's reads of each running job's lead log for its training
# curves (loss, accuracy, throughput: training/live/hub/keepers/curves.py)
TRAINING_CURVES_SECONDS = env_int("TRAINING_CURVES_SECONDS", 15, minimum=1)
JOBS_PER_PAGE = env_int("JOBS_PER_PAGE", 25, minimum=1)
# A job's Artifacts (docs/artifacts.md): the image of the short-lived pod that lists its
# output directories as the person (it needs GNU find and base64), how long that pod may
# take to start and print, and the largest file downloaded through it.
ARTIFACTS_IMAGE = env_str("ARTIFACTS_IMAGE", "registry.access.redhat.com/ubi9/ubi:latest")
ARTIFACTS_POD_TIMEOUT_SECONDS = env_int("ARTIFACTS_POD_TIMEOUT_SECONDS", 90, minimum=5)
ARTIFACTS_DOWNLOAD_LIMIT_BYTES = env_int("ARTIFACTS_DOWNLOAD_LIMIT_BYTES", 25 * 1024 * 1024,
                                         minimum=1)
# A job's TensorBoard, started on request from its Artifacts tab (docs/artifacts.md) and
# reached through the dashboard only: "local" (a `tensorboard` process beside the
# dashboard, fed with copies of the job's event files read as the person: the demo),
# "pod" (a Pod and a Service the person creates in the job's project, from
# TENSORBOARD_IMAGE, mounting the claim read-only: deploy/), or "" (off: the tab gives the
# command line). Stopped after TENSORBOARD_IDLE_SECONDS without a request.
TENSORBOARD_RUNNER = env_str("TENSORBOARD_RUNNER", "").strip().lower()
if TENSORBOARD_RUNNER not in ("", "local", "pod"):
    raise ImproperlyConfigured('TENSORBOARD_RUNNER must be "local", "pod" or empty, not '
                               f'"{TENSORBOARD_RUNNER}"')
TENSORBOARD_IMAGE = env_str("TENSORBOARD_IMAGE", "docker.io/tensorflow/tensorflow:2.16.1")
TENSORBOARD_IDLE_SECONDS = env_int("TENSORBOARD_IDLE_SECONDS", 1800, minimum=1)
TENSORBOARD_START_SECONDS = env_int("TENSORBOARD_START_SECONDS", 120, minimum=5)
# how often a local TensorBoard of a running job gets the job's new event files, while used
TENSORBOARD_REFRESH_SECONDS = env_int("TENSORBOARD_REFRESH_SECONDS", 30, minimum=1)
# where a local TensorBoard's copies of event files go ("" = a temporary directory)
TENSORBOARD_CACHE_DIR = env_str("TENSORBOARD_CACHE_DIR", "")
# A running job whose Launcher wrote nothing for this long (and whose GPUs are idle, when
# Prometheus says) is flagged "Possible hang" (odh.training.diagnosis).
DIAGNOSIS_HANG_SECONDS = env_int("DIAGNOSIS_HANG_SECONDS", 600, minimum=60)

# Notifications (training/notifications/). The dashboard's own address, for the links
# in emails and webhooks (the watcher sends them, outside any request).
DASHBOARD_URL = env_url("DASHBOARD_URL", "http://127.0.0.1:8000")
# Webhooks go to public https addresses only; these hosts, addresses and CIDRs are allowed
# besides (plain http too): "127.0.0.1,10.0.0.0/8,hooks.internal" (odh/training/webhooks.py).
NOTIFY_WEBHOOK_ALLOW = env_list("NOTIFY_WEBHOOK_ALLOW")
# how often the watcher looks for signs to tell before a job ends (Pending too long, a
# possible hang, a restart, the early warnings): training/live/hub/keepers/signs.py
NOTIFY_SIGNS_SECONDS = env_int("NOTIFY_SIGNS_SECONDS", 30, minimum=1)
# a delivery claimed by a watcher that died while sending is claimed again after this:
# longer than any one send may take (timeouts: webhook 5 s, SMTP 10 s)
NOTIFY_CLAIM_SECONDS = env_int("NOTIFY_CLAIM_SECONDS", 120, minimum=15)
# Automatic retries of failed jobs (training/live/hub/keepers/retries.py): the n-th retry of a job
# starts RETRY_BACKOFF_SECONDS * 2^(n-1) after its failure
RETRY_BACKOFF_SECONDS = env_int("RETRY_BACKOFF_SECONDS", 60, minimum=0)
# Email through Django's framework: SMTP from EMAIL_HOST etc., or another backend (the demo
# writes files: django.core.mail.backends.filebased.EmailBackend into EMAIL_FILE_PATH).
EMAIL_BACKEND = env_str("EMAIL_BACKEND", "django.core.mail.backends.smtp.EmailBackend")
EMAIL_FILE_PATH = env_str("EMAIL_FILE_PATH") or None
EMAIL_HOST = env_str("EMAIL_HOST", "localhost")
EMAIL_PORT = env_int("EMAIL_PORT", 25, minimum=1)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL", False)
EMAIL_TIMEOUT = env_int("EMAIL_TIMEOUT", 10, minimum=1)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "training-dashboard@localhost")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"request_id": {"()": "training.web.requestid.RequestIdFilter"},
                "client_errors_in_one_line": {
                    "()": "training.web.requestid.ClientErrorsInOneLine"}},
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s [%(request_id)s] %(name)s: %(message)s"},
        "json": {"format": "%(message)s"},
    },
    "handlers": {
        "console": {"class": "logging.StreamHandler", "formatter": "plain",
                    "filters": ["request_id"]},
        "audit": {"class": "logging.StreamHandler", "formatter": "json"},
    },
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {
        # WARNING: 4xx answers too (404, 405...), each with its request id
        "django.request": {"handlers": ["console"], "level": "WARNING", "propagate": False,
                           "filters": ["client_errors_in_one_line"]},
        "training.audit": {"handlers": ["audit"], "level": "INFO", "propagate": False},
    },
}
