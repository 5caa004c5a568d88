from django.apps import AppConfig


class CalibrationConfig(AppConfig):
    name = "calibration"
    verbose_name = "Judges, calibration and grading"

    def ready(self) -> None:
        from calibration.metrics import runs_in_flight
        from evalapp.metrics import register_source

        register_source(runs_in_flight)
