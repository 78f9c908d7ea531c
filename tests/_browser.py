"""The headless browser of the page tests (web replays, ``carnac serve``'s page)."""

from __future__ import annotations

import shutil

import pytest
from _frameworks import require, required_modules


def headless_browser():
    """A headless Chromium driven by Selenium (skipped where either is missing; a failure where
    CI's ``CARNAC_REQUIRE`` names chromium), with the browser's console log kept."""
    webdriver = require("selenium.webdriver", "pip install selenium (the test extra)")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_path = shutil.which("chromedriver")
    if not (chromium and driver_path):
        why = "Chromium and its driver are not installed (Debian: apt-get install chromium chromium-driver)"
        if "chromium" in required_modules():
            pytest.fail(f"CARNAC_REQUIRE names chromium, but: {why}")
        pytest.skip(why)
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(driver_path), options=options)
