# tilehouse: one image for the API (default command: gunicorn) and for the AI workers (`python worker.py`).
#
#   docker build -t tilehouse .
#   docker run -p 8000:8000 -e TILEHOUSE_REDIS_URL=redis://redis-host:6379/0 tilehouse
#   docker run --no-healthcheck -e TILEHOUSE_REDIS_URL=redis://redis-host:6379/0 tilehouse python worker.py
#
# docker-compose.yml runs Redis, the API and scalable workers together.

ARG PYTHON_IMAGE=python:3.11-slim-bookworm

# ---- build: every dependency has a binary wheel, so even this stage needs no compiler ----
FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
# openapi.yaml too: service/openapi.yaml (package data, served at /openapi.yaml) is a link to it.
COPY pyproject.toml README.md openapi.yaml ./
COPY engine/ engine/
COPY ai/ ai/
COPY service/ service/
COPY bench/ bench/
COPY worker.py ./
# The project and its dependencies as wheels, installed offline into a virtual environment that the
# runtime stage copies whole: the same python:3.11 base in both stages, so its paths stay valid, and the
# runtime stage needs no pip run (and no BuildKit-only mount) at all.
RUN pip wheel --wheel-dir /wheels . \
    && python -m venv /opt/venv \
    && /opt/venv/bin/pip install --no-index /wheels/*.whl

# ---- runtime: the virtual environment built above, no build tools, an unprivileged user ----
FROM ${PYTHON_IMAGE} AS runtime
ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    TILEHOUSE_BIND=0.0.0.0:8000 \
    PATH=/opt/venv/bin:$PATH
RUN groupadd --system --gid 10001 tilehouse \
    && useradd --system --uid 10001 --gid tilehouse --home-dir /app --no-create-home \
       --shell /usr/sbin/nologin tilehouse
WORKDIR /app
COPY --from=build /opt/venv /opt/venv
COPY --chown=root:root gunicorn.conf.py worker.py openapi.yaml ./
USER 10001:10001
EXPOSE 8000
# Liveness of the API without curl in the image; worker containers override it (docker-compose.yml).
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import os, sys, urllib.request; port = os.environ.get('TILEHOUSE_BIND', '0.0.0.0:8000').rpartition(':')[2]; sys.exit(0 if urllib.request.urlopen(f'http://127.0.0.1:{port}/healthz', timeout=4).status == 200 else 1)"]
CMD ["gunicorn", "-c", "gunicorn.conf.py", "service.app:create_app()"]
