"""The package as installed: the versions of Scrapy and scrapy-redis it accepts, and the one
line that tells which are in use."""

from __future__ import annotations

import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from focused.cli.main import build_parser

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"
DEPENDENCIES = {
    requirement.name: requirement
    for requirement in map(
        Requirement, tomllib.loads(PYPROJECT.read_text())["project"]["dependencies"]
    )
}


@pytest.mark.parametrize("name", ["scrapy", "scrapy-redis"])
def test_scrapy_and_scrapy_redis_are_a_range_that_holds_the_installed_version(name):
    """An exact pin kept the package out of every Scrapy project on another version; a range
    with both ends lets scripts/check-lowest.sh test its lowest and scripts/test.sh its highest."""
    specifier = DEPENDENCIES[name].specifier
    assert {spec.operator for spec in specifier} == {">=", "<"}, specifier
    assert specifier.contains(version(name)), (name, version(name), specifier)


def test_version_prints_the_package_and_scrapy_versions(capsys):
    with pytest.raises(SystemExit) as done:
        build_parser(["--version"]).parse_args(["--version"])
    assert done.value.code == 0
    expected = (
        f"focused {version('focused')} (Scrapy {version('scrapy')},"
        f" scrapy-redis {version('scrapy-redis')})"
    )
    assert capsys.readouterr().out == f"{expected}\n"
