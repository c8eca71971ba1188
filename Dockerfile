# agentbot as a GitHub App: the webhook receiver and its embedded workers (`agentbot serve`).
# Build: docker build -t agentbot .   Run: see "Run as a GitHub App (Docker)" in README.md.
FROM python:3.11-slim

# git: workers clone, commit and push in local execution mode. bubblewrap: the sandbox every
# job's agent and repository code run in (App mode refuses to run a job without it; the
# container needs `--security-opt seccomp=unconfined` or a user-namespace-friendly profile).
RUN apt-get update \
    && apt-get install -y --no-install-recommends git ca-certificates bubblewrap \
    && rm -rf /var/lib/apt/lists/*

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /src
COPY pyproject.toml README.md ./
COPY bot ./bot
COPY webhooks ./webhooks
# The postgres extra too, so the same image can share a PostgreSQL queue (AGENTBOT_QUEUE).
RUN pip install ".[postgres]"

# Never run as root: jobs run repository code (tests, formatters) in local mode.
RUN useradd --create-home --uid 10001 --shell /usr/sbin/nologin agentbot \
    && mkdir -p /data \
    && chown agentbot:agentbot /data
USER agentbot
WORKDIR /data

# Queue (/data/agentbot.db), workspaces and the generated webhook secret live on /data.
ENV AGENTBOT_DATA_DIR=/data
VOLUME ["/data"]

EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=15s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:8080/healthz', timeout=4).status != 200)"]
CMD ["agentbot", "serve", "--host", "0.0.0.0", "--port", "8080"]
