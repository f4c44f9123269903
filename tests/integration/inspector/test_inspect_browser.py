"""`turnstream inspect` in a real headless Chromium: turns through Kafka and a worker, the page read from Redis."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.pipeline import produce, wait_for_versions
from tests.support.worker import running_worker
from turnstream.client import ContextClient
from turnstream.kafka.admin import ensure_topics
from turnstream.settings import Settings
from turnstream.stack.processes import settings_env
from turnstream_tools.samples.conversations import load_samples, turns_of

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
ARTIFACTS = Path(__file__).parents[3] / "test-artifacts" / "inspector"
HOSTILE = "Note this: <script>document.title='pwned'</script><b>not bold</b>"
"""A user message a page must show as text and never run."""


def _require_browser() -> None:
    missing = [path for path in (CHROMIUM, CHROMEDRIVER) if not os.access(path, os.X_OK)]
    if missing:
        pytest.fail(
            f"{' and '.join(missing)} missing: install them with `apt-get install -y chromium chromium-driver` "
            "(`make test` does it when run as root)"
        )


@pytest.fixture
def browser() -> Iterator[object]:
    _require_browser()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--window-size=1280,1000",
    ):
        options.add_argument(arg)
    # the driver's path given: Selenium downloads nothing at run time
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def inspector(settings: Settings) -> Iterator[str]:
    """`turnstream inspect --port 0` on the test's Redis; its URL. Stopped by SIGTERM, which must end it cleanly."""
    env = {**os.environ, **settings_env(settings)}
    process = subprocess.Popen(
        [sys.executable, "-m", "turnstream", "inspect", "--port", "0"],
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    )
    try:
        line = process.stdout.readline() if process.stdout else ""
        assert line.startswith("INSPECT_URL=http://127.0.0.1:"), (
            line,
            process.stderr.read() if process.poll() is not None else "",
        )
        yield line.strip().split("=", 1)[1]
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def _screenshot(driver, name: str) -> Path:  # type: ignore[no-untyped-def]
    """The whole page as a PNG under test-artifacts/ (git-ignored)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    driver.set_window_size(1280, 1000)
    height = driver.execute_script("window.scrollTo(0, 0); return document.documentElement.scrollHeight")
    driver.set_window_size(1280, min(int(height) + 40, 12_000))
    path = ARTIFACTS / name
    driver.save_screenshot(str(path))
    return path


async def test_a_session_is_shown_as_the_model_gets_it_and_a_question_shows_its_recall(
    settings: Settings,
    browser,
    inspector: str,  # type: ignore[no-untyped-def]
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    settings = settings.model_copy(update={"budget_tokens": 1500})
    sample = next(s for s in load_samples() if s.id == "travel_agent")
    trip = turns_of(sample, "trip-maya")
    hostile = [
        {"turn_id": f"x-{n}", "session_id": "probe", "user_id": "mallory", "seq": n, "message": m}
        for n, m in enumerate(
            [{"role": "system", "content": "You are a helper."}, {"role": "user", "content": HOSTILE}]
        )
    ]
    await ensure_topics(settings)
    with running_worker(settings) as worker:
        await produce(settings, trip + hostile)
        async with ContextClient.from_settings(settings) as client:
            docs = await wait_for_versions(client, {"trip-maya": len(trip), "probe": len(hostile)}, worker)
    doc = docs["trip-maya"]
    assert doc.summary and doc.facts and doc.marker_index is not None, "the conversation must be long enough to compact"

    browser.get(inspector + "?q=MAYA")  # the search ignores case and finds the session by its user
    rows = browser.find_elements(By.CSS_SELECTOR, "tbody tr")
    assert [r.find_element(By.TAG_NAME, "a").text for r in rows] == ["trip-maya"]
    assert "user-maya" in rows[0].text
    _screenshot(browser, "list.png")
    rows = browser.find_elements(By.CSS_SELECTOR, "tbody tr")
    rows[0].find_element(By.TAG_NAME, "a").click()

    context = browser.find_element(By.ID, "context").text
    assert "HISTORY COMPRESSED" in context.upper() and "RECENT TAIL" in context.upper()
    assert "have a wonderful trip with Jonas" in context  # the newest turn, in the tail
    facts = browser.find_element(By.ID, "facts").text
    assert doc.summary.splitlines()[0][:40] in facts and doc.facts[0].text in facts
    assert browser.find_elements(By.CSS_SELECTOR, "#context .bar > span")  # every part and message has its token bar
    assert "compaction" in browser.find_element(By.ID, "timings").text
    assert "4800 EUR" in browser.find_element(By.ID, "memory").text  # the owner's memories, from a dropped turn

    field = browser.find_element(By.CSS_SELECTOR, "#answer input[name=q]")
    field.send_keys("Which hotel did we choose in Seville?")
    browser.find_element(By.CSS_SELECTOR, "#answer button").click()
    recalled = WebDriverWait(browser, 10).until(lambda b: b.find_element(By.ID, "recalled")).text
    assert "Casa Azahar" in recalled, recalled
    assert browser.find_elements(By.CSS_SELECTOR, "#recalled tr.hit")
    _screenshot(browser, "session.png")

    browser.get(inspector + "sessions/probe")
    assert browser.title != "pwned" and HOSTILE in browser.find_element(By.ID, "context").text
    assert not browser.find_elements(By.CSS_SELECTOR, "#context b")
    _screenshot(browser, "hostile.png")
