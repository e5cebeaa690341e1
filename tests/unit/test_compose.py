"""docker-compose.yml, docker-compose.gpu.yml and the Dockerfile refer to things that exist.

No Docker engine runs here, so these read the files: the services' commands
and health checks are programs the image installs, node services match
``docker/slurm.conf``, volumes are declared and mounted where the
configuration and the entry point expect them, and the GPU override asks
for NVIDIA devices and makes slurmd look for them.
"""

from __future__ import annotations

import json
import os
import shlex
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

from minislurm.config import SlurmConfig, load_slurm_conf
from minislurm.gresconf import load_gres_conf
from minislurm.security import cred
from nodeagent.gpus import FakeGpus, NvidiaSmiGpus, gpu_discovery

ROOT = Path(__file__).resolve().parents[2]
SHELL_TOOLS = {"sleep"}  # from the base image


def compose(name: str = "docker-compose.yml") -> dict[str, Any]:
    """A compose file, with its YAML anchors and merge keys resolved."""
    data: dict[str, Any] = yaml.safe_load((ROOT / name).read_text())
    return data


def scripts() -> set[str]:
    """The console scripts the package installs (what the image has on its PATH)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return set(project["scripts"])


def dockerfile() -> list[list[str]]:
    """The Dockerfile's instructions, continuation lines joined, each split into words.

    The JSON (exec) form keeps its list as one word.
    """
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    lines = [line for line in text.splitlines() if line.strip() and not line.startswith("#")]
    return [
        line.split(" ", 1) if line.split(" ", 1)[1].startswith("[") else shlex.split(line)
        for line in lines
    ]


def env_value(name: str) -> str:
    """The value an ``ENV name=value`` instruction sets."""
    for words in dockerfile():
        if words[0] == "ENV" and words[1].startswith(f"{name}="):
            return words[1].split("=", 1)[1]
    raise AssertionError(f"no ENV {name} in the Dockerfile")


def image_conf() -> SlurmConfig:
    """docker/slurm.conf, which the image installs at $SLURM_CONF."""
    return load_slurm_conf(str(ROOT / "docker" / "slurm.conf"))


def mounts(service: dict[str, Any]) -> dict[str, str]:
    """A service's volumes: container path -> named volume (or host path)."""
    pairs = (volume.split(":")[:2] for volume in service.get("volumes", []))
    return {target: source for source, target in pairs}


def node_services(services: dict[str, Any]) -> dict[str, Any]:
    """The services that run slurmd."""
    return {name: s for name, s in services.items() if s["command"][0] == "slurmd"}


def test_one_controller_a_login_shell_and_a_service_per_configured_node() -> None:
    services = compose()["services"]
    conf = image_conf()
    controllers = [name for name, s in services.items() if s["command"][0] == "slurmctld"]
    assert controllers == [conf.controller_host]
    assert services[conf.controller_host]["hostname"] == conf.controller_host
    nodes = node_services(services)
    assert sorted(nodes) == sorted(n.name for n in conf.nodes)
    assert len(nodes) >= 2
    for name, service in nodes.items():
        command = service["command"]
        assert command[command.index("-N") + 1] == name
        assert service["hostname"] == name == conf.slurmd_address(name)[0]  # compose DNS
        assert service["depends_on"]["slurmctld"]["condition"] == "service_healthy"
    login = services["login"]
    assert login["command"] == ["sleep", "infinity"]
    assert set(login["depends_on"]) == set(nodes)


def test_commands_and_health_checks_are_programs_of_the_image() -> None:
    known = scripts() | SHELL_TOOLS
    for name, service in compose()["services"].items():
        command = service["command"]
        assert command[0] in known, name
        if "-f" in command:
            assert command[command.index("-f") + 1] == env_value("SLURM_CONF"), name
        kind, *check = service["healthcheck"]["test"]
        program = check[0] if kind == "CMD" else shlex.split(check[0])[0]
        assert kind in ("CMD", "CMD-SHELL") and program in scripts(), name


def test_the_entry_point_is_copied_executable_and_used() -> None:
    instructions = dockerfile()
    copies = [words[1:] for words in instructions if words[0] == "COPY"]
    for *sources, _ in copies:
        assert all((ROOT / s).exists() for s in sources), sources
    entry = next(w for w in instructions if w[0] == "ENTRYPOINT")
    program = json.loads(entry[1])[0]
    copied = {dest: sources for *sources, dest in copies}
    script = ROOT / copied[f"/usr/local/bin/{program}"][0]
    assert os.access(script, os.X_OK)
    assert script.read_text().startswith("#!/bin/sh\n")


def test_every_daemon_shares_the_generated_cluster_key() -> None:
    services = compose()["services"]
    key = cred.key_path(env_value("SLURM_CONF"))
    links = [w for w in dockerfile() if w[0] == "RUN" and "ln" in w]
    assert links, "the Dockerfile links slurm.key into the key volume"
    words = links[0]
    target, link = words[words.index("-s") + 1], words[words.index("-s") + 2]
    assert link == key
    key_dir = os.path.dirname(target)
    entry = (ROOT / "docker" / "entrypoint.sh").read_text()
    assert f"KEY={target}\n" in entry and 'minislurm keygen "$KEY"' in entry
    holders = {name for name, s in services.items() if mounts(s).get(key_dir) == "cluster-key"}
    assert holders == set(services)  # daemons and commands sign every call with it
    assert not any(v.endswith(":ro") for v in services["slurmctld"]["volumes"])  # it writes it


def test_volumes_are_declared_and_home_is_shared() -> None:
    data = compose()
    services, declared = data["services"], set(data["volumes"])
    for name, service in services.items():
        for target, source in mounts(service).items():
            assert source in declared, f"{name}: {source} at {target}"
    homes = {name for name, s in services.items() if mounts(s).get("/home") == "home"}
    assert homes == {"login", *node_services(services)}
    assert mounts(services["slurmctld"])[image_conf().state_save_location] == "ctld-state"


def test_nodes_have_fake_gpus_unless_the_gpu_override_is_used() -> None:
    conf = image_conf()
    for node in conf.nodes:
        gres = load_gres_conf(str(ROOT / "docker" / "gres.conf"), node.name)
        assert isinstance(gpu_discovery(gres, None), FakeGpus)
    override = compose("docker-compose.gpu.yml")["services"]
    assert set(override) == set(node_services(compose()["services"]))
    for name, service in override.items():
        (device,) = service["deploy"]["resources"]["reservations"]["devices"]
        assert device["driver"] == "nvidia" and device["capabilities"] == ["gpu"]
        source = mounts(service)[
            os.path.join(os.path.dirname(env_value("SLURM_CONF")), "gres.conf")
        ]
        gres = load_gres_conf(str(ROOT / source), name)
        assert isinstance(gpu_discovery(gres, None), NvidiaSmiGpus)


@pytest.mark.parametrize(
    "command",
    [
        "docker compose up -d --build",
        "docker compose -f docker-compose.yml -f docker-compose.gpu.yml up -d --build",
        "docker compose exec login sbatch",
    ],
)
def test_the_readme_gives_the_commands(command: str) -> None:
    assert command in (ROOT / "README.md").read_text()
