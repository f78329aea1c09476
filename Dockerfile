# One image for every arena process of docker-compose.yml: the referee (`arena serve`), the workers
# (`arena worker`), the sample bots (`python -m sample_bots.X`) and one-shot CLI commands.
FROM python:3.11-slim

ENV PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    ARENA_DATA_DIR=/data

WORKDIR /app

# The SDK first: it changes less often than the platform, so its layer is reused.
COPY sdk ./sdk
RUN pip install ./sdk

COPY pyproject.toml README.md ./
COPY arena ./arena
COPY sample_bots ./sample_bots
RUN pip install ./sdk .

# Owner tokens of `arena bot register` (ARENA_DATA_DIR) live in /data, a volume in docker-compose.yml.
RUN useradd --create-home --uid 10001 arena && mkdir -p /data && chown arena /data
USER arena

EXPOSE 50051 50100
CMD ["arena", "--help"]
