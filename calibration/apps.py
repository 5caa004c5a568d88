from django.apps import AppConfig


class CalibrationConfig(AppConfig):
    name = "calibration"
    verbose_name = "Judges, calibration and grading"

    def ready(self) -> None:
        from calibration.metrics import runs_in_flight
        from evalapp.metrics import register_source

        register_source(runs_in_flight)

        # A large verdict upload over the API runs as an import job (annotation's), with this app's service.
        from annotation.api.imports import register_result_serializer
        from annotation.services.import_jobs import register_importer
        from calibration.api.serializers import VerdictImportResultSerializer
        from calibration.services.verdicts import verdicts_import_job

        register_importer("verdicts", verdicts_import_job)
        register_result_serializer("verdicts", VerdictImportResultSerializer)
