from django.apps import AppConfig


class ComparisonsConfig(AppConfig):
    """Paired comparisons, failure attribution, planning, dataset history and series: reads over the
    apps below, no models of its own."""

    name = "comparisons"
    verbose_name = "Comparisons"
