# One image for every role: slurmctld, slurmd and a login shell (see docker-compose.yml).
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
# The cluster key is not in the image: slurmctld makes it on its first start in
# the cluster-key volume, which every container mounts here; slurm.key points at it.
RUN mkdir -p /var/lib/minislurm/key \
    && ln -s /var/lib/minislurm/key/slurm.key /etc/slurm/slurm.key
COPY docker/entrypoint.sh /usr/local/bin/minislurm-entrypoint
ENTRYPOINT ["minislurm-entrypoint"]
