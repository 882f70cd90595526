"""Operations with scrapyd: deploy with scrapyd-deploy, schedule one crawl per topic, watch.

A real scrapyd runs on 127.0.0.1, configured by the project's scrapyd.conf, with a Redis of
``focused redis serve`` and the served web's proxy in its environment, which its jobs inherit.
The egg is built from a copy of the project, so the build leaves nothing (setup.py, build/,
*.egg-info) in the repository.
"""

from __future__ import annotations

import base64
import configparser
import json
import os
import re
import shutil
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from focused.cli.main import main
from focused.cli.scrapyd import _form, jobs_redis, schedule_topics, watch_hint
from focused.errors import FocusedError
from focused.lab.webs.server import ServedWeb
from tests.conftest import focused, free_port, redis_serve, stop, wait_for

ROOT = Path(__file__).resolve().parents[1]


def get_json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.load(response)


def answers(url: str) -> bool:
    try:
        return get_json(url)["status"] == "ok"
    except OSError:
        return False


@pytest.fixture
def node_redis(tmp_path: Path) -> Iterator[str]:
    """The URL of the Redis in the scrapyd node's environment (``focused redis serve``)."""
    with redis_serve(tmp_path / "node-redis") as url:
        yield url


@pytest.fixture
def scrapyd(tmp_path: Path, served: ServedWeb, node_redis: str) -> Iterator[str]:
    """A scrapyd on a free port whose jobs crawl the served web, into ``node_redis`` unless
    scheduled with another. Its configuration is the project's scrapyd.conf on another port,
    polling its queue more often; an embedded Redis of its jobs would be in ``node/.focused``.
    """
    node = tmp_path / "node"
    node.mkdir()
    port = free_port()
    config = configparser.ConfigParser()
    assert config.read(ROOT / "scrapyd.conf")
    config["scrapyd"].update(http_port=str(port), poll_interval="0.2")
    with (node / "scrapyd.conf").open("w") as file:
        config.write(file)
    env = {
        **os.environ,
        "http_proxy": served.proxy,
        "FOCUSED_REDIS_URL": node_redis,
        "FOCUSED_HOME": str(node / ".focused"),
        "PYTHONUNBUFFERED": "1",
    }
    env.pop("SCRAPY_SETTINGS_MODULE", None)  # the egg names its own settings module
    log = (node / "scrapyd.log").open("w")
    process = subprocess.Popen(
        [sys.executable, "-m", "scrapyd", "--pidfile="],
        cwd=node,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}/"
    try:
        wait_for(lambda: answers(url + "daemonstatus.json") or process.poll() is not None, 30)
        assert process.poll() is None, (node / "scrapyd.log").read_text()[-3000:]
        yield url
    finally:
        stop(process, 10)
        log.close()


def deploy(url: str, tmp_path: Path) -> None:
    """``scrapyd-deploy test`` from a copy of the project with a [deploy:test] target."""
    project = tmp_path / "project"
    project.mkdir()
    shutil.copytree(ROOT / "focused", project / "focused", ignore=shutil.ignore_patterns("*.pyc"))
    for name in ("scrapy.cfg", "pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, project / name)
    with (project / "scrapy.cfg").open("a") as cfg:
        cfg.write(f"\n[deploy:test]\nurl = {url}\n")
    result = subprocess.run(
        [sys.executable, "-m", "scrapyd_client.deploy", "test"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0 and '"status": "ok"' in result.stdout, (
        result.stdout + result.stderr[-3000:]
    )


def topic_file(web: Path, folder: Path, name: str) -> Path:
    """The web's topic under another crawl name, with an absolute taxonomy path."""
    text = (web / "topic.toml").read_text()
    text = re.sub(r"(?m)^name = .*$", f'name = "{name}"', text)
    text = re.sub(r"(?m)^taxonomy = .*$", f'taxonomy = "{web / "taxonomy"}"', text)
    path = folder / f"{name}.toml"
    path.write_text(text)
    return path


def test_deploy_schedule_watch_and_collect_items_on_scrapyd(
    scrapyd: str, node_redis: str, web: Path, tmp_path: Path, crawl_name: str, capsys
):
    deploy(scrapyd, tmp_path)
    names = [f"{crawl_name}-a", f"{crawl_name}-b"]
    topics = [topic_file(web, tmp_path, name) for name in names]
    settings = ["-s", "CLOSESPIDER_ITEMCOUNT=20", "-s", "FOCUSED_HOST_DELAY=0"]
    with pytest.raises(FocusedError, match="project 'nope' not found"):
        schedule_topics(scrapyd, "nope", topics, {})
    with redis_serve(tmp_path / "jobs-redis") as jobs_url:
        # a is sent a Redis of its own, b uses the node's (its environment's).
        schedule = ["schedule", "--scrapyd", scrapyd, *settings]
        assert main([*schedule, str(topics[0]), "--redis-url", jobs_url]) == 0
        assert main([*schedule, str(topics[1])]) == 0
        lines = capsys.readouterr().out.splitlines()
        assert lines[0].endswith(f"(focused status {names[0]} --redis-url {jobs_url} --watch 5)")
        assert lines[1].endswith(f"({watch_hint(names[1], None)})")
        jobs = [line.split()[3] for line in lines]
        assert [job.rsplit("-", 1)[0] for job in jobs] == names

        running_items_urls = []

        def finished() -> dict[str, dict]:
            listing = get_json(scrapyd + "listjobs.json?project=focused")
            running_items_urls.extend(job.get("items_url") for job in listing["running"])
            return {job["id"]: job for job in listing["finished"]}

        wait_for(lambda: set(jobs) <= set(finished()), timeout=120, interval=0.5)
        # As the how-to says: a running job's feed is null until its file exists, then the
        # same URL as once it finished.
        assert running_items_urls
        feeds = {f"/items/focused/focused/{job}.jl" for job in jobs}
        assert set(running_items_urls) <= {None, *feeds}
        done = finished()
        for job, name, url in zip(jobs, names, (jobs_url, node_redis), strict=True):
            log = (tmp_path / "node" / "logs" / "focused" / "focused" / f"{job}.log").read_text()
            assert "'finish_reason': 'closespider_itemcount'" in log, log[-3000:]
            result = focused("status", name, "--json", "--redis-url", url)
            assert result.returncode == 0, result.stderr
            assert result.stderr == f"reading {url}\n"
            status = json.loads(result.stdout)
            # 20 items: a page refused by robots.txt is one too, counted failed, not fetched.
            assert status["crawl"] == name and status["fetched"] + status["failed"] >= 20, status
            # The job's feed, named by listjobs.json: one item per URL it fetched.
            assert done[job]["items_url"] == f"/items/focused/focused/{job}.jl"
            with urllib.request.urlopen(scrapyd + done[job]["items_url"][1:]) as response:
                items = [json.loads(line) for line in response.read().decode().splitlines()]
            urls = {item["url"] for item in items}
            assert len(urls) == len(items) == status["fetched"] + status["failed"]
            assert all(url.startswith("http://") for url in urls)
        listed = focused("status", "--redis-url", node_redis).stdout.split()
        assert names[1] in listed and names[0] not in listed  # a's crawl went to its own Redis
    assert not list((tmp_path / "node").rglob("redis.db*"))  # no job used an embedded Redis


def test_schedule_errors_are_one_line(web: Path, tmp_path: Path, capsys):
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir(), two.mkdir()
    same = [topic_file(web, folder, "same") for folder in (one, two)]
    unreachable = f"http://127.0.0.1:{free_port()}"
    for args, problem in (
        ((*map(str, same), "--scrapyd", unreachable), "have the same name 'same'"),
        ((str(same[0]), "--scrapyd", unreachable), "scrapyd at 127.0.0.1"),
        ((str(same[0]), "-s", "NOEQUALS"), "expected KEY=VALUE"),
        ((str(tmp_path / "missing.toml"),), "topic file not found"),
        ((str(same[0]), "--redis-url", "http://x"), "not a Redis URL"),
        (
            (str(same[0]), "--redis-url", "redis://a/0", "-s", "FOCUSED_REDIS_URL=redis://b/0"),
            "name two Redis servers",
        ),
    ):
        assert main(["schedule", *args]) == 2
        stderr = capsys.readouterr().err
        assert stderr.startswith("focused: error: ") and stderr.count("\n") == 1, stderr
        assert problem in stderr


def test_the_jobs_redis_comes_from_redis_url_or_the_setting():
    settings = {"FOCUSED_REDIS_URL": "redis://r:6379/0"}
    assert jobs_redis(None, settings) == "redis://r:6379/0"
    assert jobs_redis("redis://r:6379/0", settings) == "redis://r:6379/0"
    settings = {}
    assert jobs_redis("redis://q:6379/1", settings) == "redis://q:6379/1"
    assert settings == {"FOCUSED_REDIS_URL": "redis://q:6379/1"}  # sent to the jobs
    assert jobs_redis(None, {}) is None
    assert watch_hint("birds", "redis://q:6379/1") == (
        "focused status birds --redis-url redis://q:6379/1 --watch 5"
    )
    assert "--redis-url URL" in watch_hint("birds", None)  # never a Redis it does not know


@pytest.mark.parametrize(
    "url, target",
    [
        ("http://me:secret@[::1]:6800/schedule.json", "http://[::1]:6800/schedule.json"),
        (
            "http://me:secret@Node.Example:6800/schedule.json",
            "http://Node.Example:6800/schedule.json",
        ),
    ],
)
def test_credentials_in_the_scrapyd_url_become_basic_auth_and_leave_the_host_as_written(
    url, target
):
    request = _form(url, [("project", "focused")])
    assert request.full_url == target  # an IPv6 address keeps its brackets
    assert request.get_header("Authorization") == "Basic " + base64.b64encode(b"me:secret").decode()
    assert request.data == b"project=focused"
