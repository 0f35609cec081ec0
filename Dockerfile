# tilehouse: one image for the API (default command: gunicorn) and for the AI workers (`python worker.py`).
#
#   docker build -t tilehouse .
#   docker run -p 8000:8000 -e TILEHOUSE_REDIS_URL=redis://redis-host:6379/0 tilehouse
#   docker run --no-healthcheck -e TILEHOUSE_REDIS_URL=redis://redis-host:6379/0 tilehouse python worker.py
#
# docker-compose.yml runs Redis, the API and scalable workers together, from this one image.

# Pinned by digest (the multi-platform index), so every build starts from the same bytes whatever the tag
# points at later; `python3 dev.py pin-images` moves the pin to the tag's current digest (then rebuild and
# run the tests). Another base: --build-arg PYTHON_IMAGE=python:3.11-slim-bookworm@sha256:...
ARG PYTHON_IMAGE=python:3.11-slim-bookworm@sha256:fe556eaffd0d96abd8685b83bb8a69addd0dc730fa193669a7df0d49ddcfac02

# ---- build: the locked dependencies and the project's wheel, into a virtual environment ----
FROM ${PYTHON_IMAGE} AS build
# A private package index (a mirror or a proxy) and an extra CA certificate (PEM text) that signs its
# certificate or a TLS-intercepting proxy's, for builds inside a company network:
#   docker build --build-arg PIP_INDEX_URL=https://pypi.corp.example/simple \
#                --build-arg EXTRA_CA_CERT="$(cat corp-ca.pem)" -t tilehouse .
# Unset, pip uses PyPI and the system's CAs. Whatever the index, the hashes in the lock files decide what
# is installed. These arguments exist in this stage only, so they never reach the final image.
ARG PIP_INDEX_URL
ARG PIP_EXTRA_INDEX_URL
ARG EXTRA_CA_CERT
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
# requirements.lock pins every runtime dependency with its hashes, requirements-build.lock what builds
# the project's wheel (both made by `python3 dev.py lock`; tests/test_lock.py checks them against
# pyproject.toml). openapi.yaml too: service/openapi.yaml (package data) is a link to it.
COPY requirements.lock requirements-build.lock pyproject.toml README.md openapi.yaml ./
COPY engine/ engine/
COPY ai/ ai/
COPY service/ service/
# service/web/rules (package data: the rules the web client shows) is a link to docs/rules
COPY docs/rules/ docs/rules/
COPY bench/ bench/
COPY worker.py ./
# Exactly the locked dependencies (--require-hashes: a file whose hash differs is refused), then the
# project's own wheel, built without build isolation from the locked build requirements and installed
# offline (--no-index: a dependency missing from the lock fails the build here). The same python:3.11
# base in both stages keeps the environment's paths valid when the runtime stage copies it.
RUN set -eu; \
    if [ -n "${EXTRA_CA_CERT:-}" ]; then \
        printf '%s\n' "$EXTRA_CA_CERT" > /tmp/extra-ca.pem; \
        cat /etc/ssl/certs/ca-certificates.crt /tmp/extra-ca.pem > /tmp/ca-bundle.pem; \
        export PIP_CERT=/tmp/ca-bundle.pem; \
    fi; \
    pip install --require-hashes --no-deps -r requirements-build.lock; \
    pip wheel --no-deps --no-build-isolation --wheel-dir /wheels .; \
    python -m venv /opt/venv; \
    /opt/venv/bin/pip install --require-hashes --no-deps -r requirements.lock; \
    /opt/venv/bin/pip install --no-index /wheels/*.whl

# ---- runtime: the virtual environment built above, no build tools, an unprivileged user ----
FROM ${PYTHON_IMAGE} AS runtime
ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    TILEHOUSE_BIND=0.0.0.0:8000 \
    TILEHOUSE_METRICS_BIND=0.0.0.0:9100 \
    PATH=/opt/venv/bin:$PATH
RUN groupadd --system --gid 10001 tilehouse \
    && useradd --system --uid 10001 --gid tilehouse --home-dir /app --no-create-home \
       --shell /usr/sbin/nologin tilehouse
WORKDIR /app
COPY --from=build /opt/venv /opt/venv
COPY --chown=root:root gunicorn.conf.py worker.py openapi.yaml ./
USER 10001:10001
# 8000: the API (publish it); 9100: /metrics, /healthz and /readyz only, for Prometheus on the container
# network (do not publish it)
EXPOSE 8000 9100
# Liveness of the API without curl in the image; worker containers override it (docker-compose.yml).
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import os, sys, urllib.request; port = os.environ.get('TILEHOUSE_BIND', '0.0.0.0:8000').rpartition(':')[2]; sys.exit(0 if urllib.request.urlopen(f'http://127.0.0.1:{port}/healthz', timeout=4).status == 200 else 1)"]
CMD ["gunicorn", "-c", "gunicorn.conf.py", "service.app:create_app()"]
