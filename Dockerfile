# One image for every role: slurmctld, slurmd and a login shell.
FROM python:3.11-slim
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends procps \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /opt/minislurm
COPY pyproject.toml README.md ./
COPY proto ./proto
COPY minislurm ./minislurm
COPY ctld ./ctld
COPY nodeagent ./nodeagent
COPY cli ./cli
RUN pip install --no-cache-dir . && python -m compileall -q /usr/local/lib/python3.11
COPY docker/slurm.conf docker/gres.conf /etc/slurm/
ENV SLURM_CONF=/etc/slurm/slurm.conf
# One key baked into the image is shared by every container of the compose cluster.
RUN minislurm keygen
