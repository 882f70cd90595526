"""The `focused` command: subcommands run library code; errors are one line and exit code 2."""

from __future__ import annotations

import subprocess
import sys

import pytest

from focused.lab.demo import command_name
from focused.store import keys
from focused.store.client import connect
from focused.store.frontier.base import Link
from tests.conftest import focused

pytestmark = pytest.mark.crawl  # every test runs the command in a subprocess


def test_generate_then_build_a_taxonomy_from_its_labels(tmp_path):
    web = tmp_path / "web"
    result = focused("web", "generate", str(web), "--pages", "300", "--hosts", "10")
    assert result.returncode == 0, result.stderr
    assert (web / "pages.jsonl.gz").exists() and (web / "topic.toml").exists()
    result = focused(
        "taxonomy", "from-labels", str(web), "-o", str(tmp_path / "tax"), "--per-category", "3"
    )
    assert result.returncode == 0, result.stderr
    examples = list((tmp_path / "tax").rglob("*.txt"))
    assert examples and all(len(list(f.parent.glob("*.txt"))) <= 3 for f in examples)


def test_train_saves_the_model_under_models(web, tmp_path):
    result = focused("train", str(web / "topic.toml"), "--models", str(tmp_path / "m"))
    assert result.returncode == 0, result.stderr
    assert "taxonomy model HierarchicalClassifier ready" in result.stdout
    assert list((tmp_path / "m").glob("*.npz"))


def test_errors_are_one_line_without_traceback(tmp_path):
    for args in (
        ("web", "serve", str(tmp_path / "missing")),
        ("train", str(tmp_path / "missing.toml")),
        ("status", "nothing-here", "--home", str(tmp_path / "home")),
    ):
        result = focused(*args)
        assert result.returncode == 2, args
        assert result.stderr.startswith("focused: error: ") and result.stderr.count("\n") == 1


def test_status_of_a_misspelt_crawl_lists_the_crawls_and_names_the_closest(
    redis_client, redis_home, crawl_name
):
    """``focused status relgion`` said only that there is no such crawl."""
    names = [f"{crawl_name}-religion", f"{crawl_name}-birds"]
    for name in names:
        redis_client.hset(keys.prefix(name) + keys.STATS, "focused/pages/fetched", 1)
    try:
        result = focused("status", f"{crawl_name}-relgion", "--home", str(redis_home))
    finally:
        redis_client.delete(*(keys.prefix(name) + keys.STATS for name in names))
    assert result.returncode == 2
    (line,) = result.stderr.splitlines()
    missing = f"no crawl named '{crawl_name}-relgion' in this Redis"
    assert line.startswith(f"focused: error: {missing} (its crawls: ")
    assert line.endswith(f"; did you mean {crawl_name}-religion?")


def test_status_of_a_crawl_in_a_redis_without_crawls_says_so(tmp_path):
    connect(home=tmp_path)  # an embedded Redis with no crawl in it
    result = focused("status", "religion", "--home", str(tmp_path))
    assert result.returncode == 2
    expected = "no crawl named 'religion' in this Redis (it has no crawls)"
    assert result.stderr == f"focused: error: {expected}\n"


def test_help_and_status_load_no_heavy_library():
    code = (
        "import sys; from focused.cli.main import build_parser\n"
        "for argv in (['--help'], ['status', 'x'], ['web', 'serve', 'b']):\n"
        "    build_parser(argv)\n"
        "print(sorted(m for m in ('sklearn', 'scrapy', 'numpy', 'aiohttp') if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"  # `web serve` imports its server only when it runs


def test_a_closed_pipe_ends_status_quietly(crawl, redis_home):
    crawl.run(CLOSESPIDER_ITEMCOUNT=5)
    process = subprocess.Popen(
        [sys.executable, "-m", "focused.cli.main", "status", crawl.name, "--home", str(redis_home)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    process.stdout.close()  # as `| head -0` does: every write finds the pipe closed
    stderr = process.stderr.read().decode()
    assert process.wait(60) == 1
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr


def test_reset_of_no_such_crawl_says_so_and_names_a_close_one(frontier, crawl_name, redis_home):
    frontier().push_many([Link("http://a.test/p", 0.5)])
    result = focused("reset", crawl_name + "x", "--home", str(redis_home))
    assert result.returncode == 2
    name = f"'{crawl_name}x'"
    assert result.stderr == (
        f"focused: error: no crawl named {name} in this Redis; did you mean {crawl_name}?\n"
    )
    assert frontier().counts()["queued"] == 1  # nothing deleted


def test_reset_refuses_while_a_process_of_the_crawl_runs(frontier, crawl_name, redis_home):
    f = frontier()
    f.push_many([Link("http://a.test/p", 0.5)])
    store = f.store
    beat = store.script("heartbeat")
    record = [store.key(keys.PROCS), store.key(keys.PROC, "h:1:ab")]
    beat(keys=record, args=[store.key(keys.PROC), "h:1:ab", 30_000, "state", "running"])
    result = focused("reset", crawl_name, "--home", str(redis_home))
    assert result.returncode == 2
    assert result.stderr.startswith(f"focused: error: crawl '{crawl_name}' has 1 process(es)")
    assert "h:1:ab" in result.stderr and result.stderr.count("\n") == 1
    assert f.counts()["queued"] == 1
    result = focused("reset", crawl_name, "--force", "--home", str(redis_home))
    assert result.returncode == 0, result.stderr
    assert not frontier().counts().get("queued")


def test_the_demo_names_the_command_as_the_user_can_type_it(tmp_path, monkeypatch):
    """``focused`` when the PATH finds the one that ran, else the path that ran, from here."""
    bin_dir = tmp_path / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    program = bin_dir / "focused"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", [str(program)])
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert command_name() == ".venv/bin/focused"
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    assert command_name() == "focused"
    monkeypatch.setattr(sys, "argv", ["/somewhere/focused/cli/main.py"])  # python -m
    assert command_name() == "focused"
