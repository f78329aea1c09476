"""docker-compose.yml and the Dockerfile, checked without a Docker engine (issue 3 item 6).

Every service's command must be one the arena CLI accepts (parsed by click down to the leaf command, with the
service's environment, without running it), or a ``python -m sample_bots.X`` whose module exists and whose
arguments the SDK's own argparse parser accepts. The workers and the referee share one Redis URL, which points at
the redis service; Redis keeps its data (appendonly) in a named volume; the workers can be scaled; the endpoints
the demo registers are the bot services; the Dockerfile copies only paths that exist.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import re
import shlex
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import click
import pytest
import yaml

from arena.cli import cli

ROOT = Path(__file__).resolve().parent.parent
COMPOSE = ROOT / "docker-compose.yml"
DOCKERFILE = ROOT / "Dockerfile"


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    data = yaml.safe_load(COMPOSE.read_text())
    assert isinstance(data, dict) and isinstance(data.get("services"), dict), "no services in docker-compose.yml"
    return data


def _services(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return compose["services"]


def _command(service: dict[str, Any]) -> list[str]:
    command = service.get("command")
    if isinstance(command, str):
        return shlex.split(command)
    assert isinstance(command, list) and all(isinstance(a, str) for a in command), command
    return command


def _environment(service: dict[str, Any]) -> dict[str, str]:
    env = service.get("environment") or {}
    if isinstance(env, list):  # ["KEY=value", ...]
        env = dict(item.split("=", 1) for item in env)
    return {str(k): str(v) for k, v in env.items()}


def _image_services(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Services that run the project's image (built from the Dockerfile)."""
    return {name: s for name, s in _services(compose).items() if "build" in s}


def parse_cli(args: list[str]) -> tuple[list[str], click.Context]:
    """Parse ``arena ARGS`` with click down to the command that would run, without running anything.

    Returns the command path (e.g. ["worker"] or ["bot", "register"]) and the leaf context (its ``params`` hold
    the converted values). Raises ``click.UsageError`` / ``click.BadParameter`` exactly as the CLI would."""
    ctx = cli.make_context("arena", list(args), resilient_parsing=False)
    command: click.Command = cli
    path: list[str] = []
    while isinstance(command, click.Group):
        protected = ctx._protected_args if hasattr(ctx, "_protected_args") else ctx.protected_args  # click < 8.2
        rest = [*protected, *ctx.args]
        if not rest:
            if not command.invoke_without_command:
                raise click.UsageError(f"`arena {' '.join(path)}` needs a subcommand", ctx)
            break
        name, sub, sub_args = command.resolve_command(ctx, rest)
        assert sub is not None and name is not None
        path.append(name)
        ctx = sub.make_context(name, sub_args, parent=ctx, resilient_parsing=False)
        command = sub
    return path, ctx


class _Parsed(Exception):
    """Raised right after the SDK's parser accepted the arguments, so the bot never binds a port."""

    def __init__(self, namespace: argparse.Namespace) -> None:
        super().__init__("parsed")
        self.namespace = namespace


def parse_bot(module: str, argv: list[str], monkeypatch: pytest.MonkeyPatch) -> argparse.Namespace:
    """Run the sample bot module's ``main`` path up to its argument parsing (``arena_sdk.serve`` builds the parser
    with the bot class's own options) and return the namespace; the bot never starts serving."""
    original = argparse.ArgumentParser.parse_args

    def parse_then_stop(self: argparse.ArgumentParser, args: Any = None, namespace: Any = None) -> Any:
        raise _Parsed(original(self, args, namespace))

    mod = importlib.import_module(module)
    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", parse_then_stop)
    from arena_sdk import serve

    bot_classes = [v for v in vars(mod).values()
                   if isinstance(v, type) and v.__module__ == module and hasattr(v, "choose_card")]
    assert len(bot_classes) == 1, f"{module} should define one bot class, found {bot_classes}"
    with pytest.raises(_Parsed) as parsed:
        serve(bot_classes[0], argv)
    return parsed.value.namespace


def test_the_cli_parser_really_checks_arguments() -> None:
    """The helper must refuse what the CLI refuses; otherwise the command checks below prove nothing."""
    with pytest.raises(click.UsageError):
        parse_cli(["serve", "--listen", "nohost"])
    with pytest.raises(click.UsageError):
        parse_cli(["worker", "--concurrency", "0"])
    with pytest.raises(click.UsageError):
        parse_cli(["bot", "register", "bad name", "bot:1"])
    with pytest.raises(click.UsageError):
        parse_cli(["tournament"])
    assert parse_cli(["worker", "list"])[0] == ["worker", "list"]
    path, ctx = parse_cli(["serve", "--listen", "0.0.0.0:50051", "--workers", "0"])
    assert path == ["serve"] and ctx.params["workers"] == 0 and ctx.params["listen"] == "0.0.0.0:50051"


def test_the_bot_parser_really_checks_arguments(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(SystemExit):
        parse_bot("sample_bots.random_bot", ["--port", "not-a-number"], monkeypatch)
    with pytest.raises(SystemExit):
        parse_bot("sample_bots.random_bot", ["--budget-ms", "40"], monkeypatch)  # a montecarlo option only
    ns = parse_bot("sample_bots.montecarlo_bot", ["--budget-ms", "40", "--port", "50100"], monkeypatch)
    assert ns.budget_ms == 40.0 and ns.port == 50100


def test_the_expected_services_are_there(compose: dict[str, Any]) -> None:
    services = _services(compose)
    for name in ("redis", "referee", "worker", "bot-random", "bot-heuristic", "bot-montecarlo"):
        assert name in services, f"service {name} missing"
    assert str(services["redis"]["image"]).startswith("redis:7")


def test_every_arena_command_is_accepted_by_the_cli(compose: dict[str, Any],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    checked = []
    for name, service in _image_services(compose).items():
        command = _command(service)
        if command[0] != "arena":
            continue
        for key in [k for k in os.environ if k.startswith("ARENA_")]:
            monkeypatch.delenv(key)
        for key, value in _environment(service).items():
            monkeypatch.setenv(key, value)
        try:
            path, _ = parse_cli(command[1:])
        except click.ClickException as exc:
            pytest.fail(f"service {name}: `{shlex.join(command)}` is refused by the CLI: {exc.format_message()}")
        checked.append((name, path))
    paths = dict(checked)
    assert paths["referee"] == ["serve"] and paths["worker"] == ["worker"]


def test_every_bot_command_is_accepted_by_the_sdk(compose: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    bots = 0
    for name, service in _image_services(compose).items():
        command = _command(service)
        if command[0] == "arena":
            continue
        assert command[:2] == ["python", "-m"], f"service {name}: neither `arena ...` nor `python -m ...`: {command}"
        module = command[2]
        assert module.startswith("sample_bots."), f"service {name}: unexpected module {module}"
        assert importlib.util.find_spec(module) is not None, f"service {name}: no module {module}"
        with monkeypatch.context() as m:
            try:
                ns = parse_bot(module, command[3:], m)
            except SystemExit:
                pytest.fail(f"service {name}: the SDK refuses the arguments of `{shlex.join(command)}`")
        assert ns.host == "0.0.0.0", f"service {name} must listen on every interface, not {ns.host}"
        bots += 1
    assert bots == 3


def test_referee_and_workers_share_one_redis_url_pointing_at_redis(compose: dict[str, Any]) -> None:
    urls = {}
    for name, service in _image_services(compose).items():
        command = _command(service)
        if command[:2] not in (["arena", "serve"], ["arena", "worker"]):
            continue
        if "list" in command:  # `arena worker list` talks to the referee, not to Redis
            continue
        assert "--redis-url" not in command, f"service {name}: give the Redis URL once, in ARENA_REDIS_URL"
        urls[name] = _environment(service).get("ARENA_REDIS_URL")
    assert set(urls) >= {"referee", "worker"}
    assert len(set(urls.values())) == 1 and None not in urls.values(), urls
    url = urlsplit(next(iter(urls.values())))
    assert url.scheme == "redis" and url.hostname == "redis" and (url.port or 6379) == 6379


def test_redis_is_appendonly_with_its_data_in_a_named_volume(compose: dict[str, Any]) -> None:
    redis = _services(compose)["redis"]
    command = _command(redis)
    assert command[0] == "redis-server"
    assert "--appendonly" in command and command[command.index("--appendonly") + 1] == "yes"
    volumes = [str(v) for v in redis.get("volumes", [])]
    data = [v for v in volumes if v.split(":")[1:2] == ["/data"]]
    assert data, f"redis keeps its data in /data; volumes: {volumes}"
    volume = data[0].split(":")[0]
    assert volume in (compose.get("volumes") or {}), f"{volume} is not a named volume"


def test_workers_can_be_scaled(compose: dict[str, Any]) -> None:
    worker = _services(compose)["worker"]
    assert "container_name" not in worker, "a fixed container name forbids --scale worker=N"
    assert not worker.get("ports"), "host ports forbid --scale worker=N"


def test_cli_services_reach_the_referee_and_register_the_bot_services(compose: dict[str, Any]) -> None:
    services = _services(compose)
    listen = parse_cli(_command(services["referee"])[1:])[1].params["listen"]
    referee_port = int(listen.rpartition(":")[2])
    registered = {}
    for name, service in _image_services(compose).items():
        command = _command(service)
        if command[0] != "arena" or command[1] in ("serve", "worker"):
            continue
        server = _environment(service).get("ARENA_SERVER")
        assert server == f"referee:{referee_port}", f"service {name}: ARENA_SERVER {server!r}"
        if command[1:3] == ["bot", "register"]:
            registered[command[3]] = command[4]
    assert registered, "the demo registers no bot"
    for bot_name, endpoint in registered.items():
        host, _, port = endpoint.rpartition(":")
        assert host in services, f"{bot_name} is registered at {endpoint}, but there is no service {host}"
        bot_args = _command(services[host])
        assert bot_args[bot_args.index("--port") + 1] == port, f"{host} does not listen on {port}"


def test_dockerfile_copies_only_existing_paths_and_installs_sdk_and_platform() -> None:
    text = DOCKERFILE.read_text()
    assert re.search(r"^FROM python:3\.11-slim\b", text, re.M)
    copies = re.findall(r"^COPY\s+(.+)$", text, re.M)
    assert copies
    for line in copies:
        parts = shlex.split(line)
        sources = [p for p in parts[:-1] if not p.startswith("--")]
        for source in sources:
            assert (ROOT / source).exists(), f"Dockerfile copies {source}, which does not exist"
    assert re.search(r"pip install \./sdk \.", text)
    ignored = (ROOT / ".dockerignore").read_text().split()
    copied = {shlex.split(line)[0] for line in copies}
    assert not copied & set(ignored), "the Dockerfile copies a path .dockerignore leaves out"


def test_compose_builds_the_image_from_this_folder(compose: dict[str, Any]) -> None:
    for name, service in _image_services(compose).items():
        build = service["build"]
        context = build if isinstance(build, str) else build.get("context", ".")
        dockerfile = "Dockerfile" if isinstance(build, str) else build.get("dockerfile", "Dockerfile")
        assert (COMPOSE.parent / context / dockerfile).is_file(), f"service {name}: no {context}/{dockerfile}"


def _volume_at(service: dict[str, Any], folder: str) -> str | None:
    for volume in service.get("volumes") or []:
        name, _, target = str(volume).partition(":")
        if target.split(":")[0] == folder:
            return name
    return None


def test_organiser_commands_find_the_admin_token_the_referee_saved(compose: dict[str, Any]) -> None:
    """The referee saves its admin token in its ARENA_DATA_DIR (admin-token.json); every CLI service that makes an
    organiser call (tournament create/cancel, ladder --rebuild) reads the same named volume there."""
    services = _services(compose)
    referee_dir = _environment(services["referee"]).get("ARENA_DATA_DIR")
    assert referee_dir, "the referee has no ARENA_DATA_DIR to save its admin token in"
    volume = _volume_at(services["referee"], referee_dir)
    assert volume in (compose.get("volumes") or {}), f"the referee's {referee_dir} is not a named volume"
    organisers = []
    for name, service in _image_services(compose).items():
        command = _command(service)
        if command[:3] in (["arena", "tournament", "create"], ["arena", "tournament", "cancel"]) or \
                (command[:2] == ["arena", "ladder"] and "--rebuild" in command):
            data_dir = _environment(service).get("ARENA_DATA_DIR")
            assert data_dir and _volume_at(service, data_dir) == volume, \
                f"service {name} makes an organiser call but does not see the referee's {volume} volume"
            organisers.append(name)
    assert organisers, "the demo profile creates no tournament"


def test_no_bot_reaches_redis(compose: dict[str, Any]) -> None:
    """An operator review: a password-less Redis shared the compose network with the bot containers, and whoever
    reads Redis reads the seeds and the owner keys. Redis is on an internal network of its own that only the
    referee and the workers join; the bots and the CLI services are on the other one."""
    services = compose["services"]
    assert compose["networks"]["store"] == {"internal": True}
    on_store = {name for name, s in services.items() if "store" in (s.get("networks") or ["default"])}
    assert on_store == {"redis", "referee", "worker"}
    assert services["redis"]["networks"] == ["store"]
    for name, service in services.items():
        assert service.get("networks"), f"{name} joins the default network, which Redis may not be on"
        if name.startswith("bot-"):
            assert service["networks"] == ["play"], name
