from csp.constants import UNSAFE_INLINE
from csp.decorators import csp_update
from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from evalapp import views

# drf-spectacular's Swagger page loads Swagger UI from its CDN and starts it with an inline <script> and
# <style>; only that page gets them. Its own content is fixed (the schema is fetched and rendered as text).
SWAGGER_UI_ORIGIN = "https://cdn.jsdelivr.net"
api_docs = csp_update(
    {
        "script-src": [SWAGGER_UI_ORIGIN, UNSAFE_INLINE],
        "style-src": [SWAGGER_UI_ORIGIN, UNSAFE_INLINE],
        "img-src": [SWAGGER_UI_ORIGIN],
    }
)(SpectacularSwaggerView.as_view(url_name="schema"))

urlpatterns = [
    path("", views.home, name="home"),
    path("login/", auth_views.LoginView.as_view(template_name="registration/login.html"), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", api_docs, name="api-docs"),
    path("api/", include("calibration.compare_api_urls")),
    path("api/", include("calibration.api.urls")),
    path("api/", include("annotation.api.urls")),
    path("", include("calibration.compare_urls")),
    path("", include("calibration.urls")),
    path("", include("annotation.urls")),
    path("", include("annotation.queue_urls")),
    path("", include("annotation.tagging_urls")),
]
