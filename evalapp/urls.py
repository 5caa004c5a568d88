from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from evalapp import ops
from evalapp.views import SignInView, api_root

# Swagger UI comes from drf-spectacular-sidecar's static files and starts from a script the split view
# serves apart (templates/drf_spectacular/swagger_ui.html drops the inline <style>): the strict policy holds.
api_docs = SpectacularSwaggerSplitView.as_view(url_name="schema")

urlpatterns = [
    path("healthz", ops.healthz, name="healthz"),
    path("readyz", ops.readyz, name="readyz"),
    path("metrics", ops.metrics, name="metrics"),
    path("login/", SignInView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("api/", api_root, name="api-root"),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", api_docs, name="api-docs"),
    path("", include("comparisons.urls")),
    path("", include("calibration.urls")),
    path("", include("annotation.urls")),
]
