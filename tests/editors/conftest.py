"""Shared by the editor suites: each test's outcome on its item, so fixtures can keep artifacts of failures."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report
