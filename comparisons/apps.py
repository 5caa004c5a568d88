from django.apps import AppConfig


class ComparisonsConfig(AppConfig):
    """Paired comparisons, failure attribution, planning, dataset history and series: reads over the
    apps below; its own models are the published figures and their corrections."""

    name = "comparisons"
    verbose_name = "Comparisons"
