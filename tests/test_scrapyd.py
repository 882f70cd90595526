"""Operations with scrapyd: deploy with scrapyd-deploy, schedule one crawl per topic, watch.

A real scrapyd runs on 127.0.0.1 with the test's Redis (FOCUSED_HOME) and the served web's
proxy in its environment, which its jobs inherit. The egg is built from a copy of the project,
so the build leaves nothing (setup.py, build/, *.egg-info) in the repository.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from focused.cli import main
from focused.errors import FocusedError
from focused.scrapyd import schedule_topics
from focused.webs.server import ServedWeb
from tests.conftest import wait_for

ROOT = Path(__file__).resolve().parents[1]


def focused(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "focused.cli", *args], capture_output=True, text=True, timeout=60
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def get_json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.load(response)


def answers(url: str) -> bool:
    try:
        return get_json(url)["status"] == "ok"
    except OSError:
        return False


@pytest.fixture
def scrapyd(
    tmp_path: Path, served: ServedWeb, redis_home: Path, redis_client: redis.Redis
) -> Iterator[str]:
    """A scrapyd on a free port whose jobs crawl the served web into the test's Redis.

    ``redis_client`` starts the embedded server first: two jobs starting it at the same moment
    could each start one on the same data file.
    """
    node = tmp_path / "node"
    node.mkdir()
    port = free_port()
    (node / "scrapyd.conf").write_text(
        "[scrapyd]\n"
        f"bind_address = 127.0.0.1\nhttp_port = {port}\n"
        "eggs_dir = eggs\nlogs_dir = logs\ndbs_dir = dbs\n"
        "poll_interval = 0.2\nmax_proc = 4\n"
    )
    env = {
        **os.environ,
        "http_proxy": served.proxy,
        "FOCUSED_HOME": str(redis_home),
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
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
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


def test_deploy_and_schedule_two_topics_on_scrapyd(
    scrapyd: str, web: Path, tmp_path: Path, redis_home: Path, crawl_name: str
):
    deploy(scrapyd, tmp_path)
    names = [f"{crawl_name}-a", f"{crawl_name}-b"]
    topics = [topic_file(web, tmp_path, name) for name in names]
    settings = {"CLOSESPIDER_ITEMCOUNT": "20", "FOCUSED_HOST_DELAY": "0"}
    with pytest.raises(FocusedError, match="project 'nope' not found"):
        schedule_topics(scrapyd, "nope", topics, settings)
    jobs = schedule_topics(scrapyd, "focused", topics, settings)
    assert [job.rsplit("-", 1)[0] for job in jobs] == names

    def finished() -> set[str]:
        listing = get_json(scrapyd + "listjobs.json?project=focused")
        return {job["id"] for job in listing["finished"]}

    wait_for(lambda: set(jobs) <= finished(), timeout=120, interval=0.5)
    for job in jobs:
        log = (tmp_path / "node" / "logs" / "focused" / "focused" / f"{job}.log").read_text()
        assert "'finish_reason': 'closespider_itemcount'" in log, log[-3000:]

    for name in names:
        result = focused("status", name, "--json", "--home", str(redis_home))
        assert result.returncode == 0, result.stderr
        status = json.loads(result.stdout)
        assert status["crawl"] == name and status["fetched"] >= 20, status
    listed = focused("status", "--home", str(redis_home)).stdout.split()
    assert set(names) <= set(listed)


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
    ):
        assert main(["schedule", *args]) == 2
        stderr = capsys.readouterr().err
        assert stderr.startswith("focused: error: ") and stderr.count("\n") == 1, stderr
        assert problem in stderr
