from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = "Corpus, labelled sets and human labels"

    def ready(self) -> None:
        from annotation import checks  # noqa: F401  (registers the start-up checks)
        from annotation.metrics import queue_depth
        from evalapp.metrics import register_source

        register_source(queue_depth)

        from annotation.api.imports import register_result_serializer
        from annotation.api.traffic import TrafficImportSerializer

        register_result_serializer("traffic", TrafficImportSerializer)
