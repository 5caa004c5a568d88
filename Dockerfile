# The evalapp image: the wheel's contents on a slim Python, run as an unprivileged user. compose.yaml runs it
# as the web app (gunicorn), the Celery workers and beat; the commands are the README's "Deploying for a team".
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 \
    EVALAPP_VAR_DIR=/srv/evalapp/var DEBUG=false LOG_FORMAT=json
COPY . /tmp/evalapp-src
RUN pip install /tmp/evalapp-src && rm -rf /tmp/evalapp-src \
    && useradd --create-home --home-dir /srv/evalapp evalapp
USER evalapp
WORKDIR /srv/evalapp
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4)"
CMD ["gunicorn", "evalapp.wsgi", "--bind", "0.0.0.0:8000", "--workers", "4", "--access-logfile", "-"]
