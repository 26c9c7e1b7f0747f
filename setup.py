"""Packages for pyproject.toml: every package under agent/ and server/, installed below ``agentls``."""

from setuptools import find_packages, setup

setup(packages=[f"agentls.{name}" for name in find_packages(include=["agent", "agent.*", "server", "server.*"])])
