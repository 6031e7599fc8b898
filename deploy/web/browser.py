"""The web client in two real browsers (Chromium through chromedriver) against a running stack.

Two people register, open a direct chat and talk both ways over MQTT (each message appears on
the other side without a reload, and so does one's typing), one replies to the other and
mentions them, search finds a message written with diacritics from words typed without them,
one sends an image and both see its thumbnail, a message's several files show in order, a notice
the app's server posts shows as the room's, one scrolls back through 200 messages, after
the broker restarts the other receives what was sent meanwhile, and a second tab takes the
live connection over when asked. Screenshots of a conversation (a wide window) and of the
room list (a phone-sized one) go to --screenshots.

    browser.py --url https://localhost:PORT --data-dir DIR --admin EMAIL:PASSWORD [--screenshots DIR]
"""

import argparse
import json
import os
import ssl
import struct
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
import zlib

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def png(width=96, height=64):
    """A small gradient PNG, made here: an image libvips makes thumbnails of."""
    rows = b"".join(b"\x00" + bytes(v for x in range(width) for v in (x * 255 // width, y * 255 // height, 160))
                    for y in range(height))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


class Failure(Exception):
    pass


def browser(width=1100, height=760):
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--ignore-certificate-errors",
                     f"--window-size={width},{height}"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def wait(what, check, limit=20.0):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        try:
            result = check()
            if result:
                return result
        except Exception:  # an element not there yet, or replaced meanwhile
            pass
        time.sleep(0.1)
    raise Failure(f"waited {limit:.0f} s for {what}")


def texts(driver, selector):
    return [element.text for element in driver.find_elements(By.CSS_SELECTOR, selector)]


def register(driver, url, first, last):
    driver.get(f"{url}/app/")
    wait("the sign-in form", lambda: driver.find_element(By.CSS_SELECTOR, "form.sign-in"))
    driver.find_element(By.XPATH, "//button[text()='Create an account']").click()
    email = f"{first.lower()}-{uuid.uuid4().hex[:8]}@example.com"
    for name, value in (("firstName", first), ("lastName", last), ("email", email),
                        ("password", "correct horse battery")):
        driver.find_element(By.NAME, name).send_keys(value)
    driver.find_element(By.CSS_SELECTOR, "form.sign-in button[type=submit]").click()
    wait(f"{first} online", lambda: driver.find_element(By.CSS_SELECTOR, ".connection.online"))
    return email


def session(driver):
    return json.loads(driver.execute_script("return localStorage.getItem('parley.session')"))


def rest(url, token, method, path, body=None):
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(f"{url}{path}", method=method, data=json.dumps(body).encode() if body else None,
                                     headers=headers)
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    try:
        with urllib.request.urlopen(request, context=context, timeout=20) as response:
            return json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        raise Failure(f"{method} {path} answered {error.code}: {error.read()[:300]!r}") from None


def upload(url, token, name, data):
    """A raw upload (POST /v1/files); the stored file object."""
    request = urllib.request.Request(f"{url}/v1/files?name={name}", method="POST", data=data,
                                     headers={"Authorization": f"Bearer {token}",
                                              "Content-Type": "application/octet-stream"})
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    with urllib.request.urlopen(request, context=context, timeout=20) as response:
        return json.loads(response.read())


def send(driver, text):
    box = driver.find_element(By.NAME, "message")
    box.send_keys(text)
    box.send_keys(Keys.ENTER)


def shown(driver, text):
    """The text is in a stored (not pending) message."""
    return text in texts(driver, "li.message[data-seq] .text")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--data-dir", required=True, help="deploy/local/run's data directory (to restart the broker)")
    parser.add_argument("--screenshots")
    parser.add_argument("--admin", required=True, help="EMAIL:PASSWORD of an administrator (to issue a server key)")
    arguments = parser.parse_args()
    url = arguments.url.rstrip("/")
    alice, bob = browser(), browser(width=390, height=760)
    steps = []

    def step(name):
        steps.append(name)
        print(f"  {name}", flush=True)

    try:
        step("two people register")
        register(alice, url, "Alice", f"Anders{uuid.uuid4().hex[:6]}")
        bob_last = f"Brown{uuid.uuid4().hex[:6]}"
        register(bob, url, "Bob", bob_last)

        step("Alice finds Bob and opens a direct chat")
        alice.find_element(By.XPATH, "//button[text()='New chat']").click()
        alice.find_element(By.CSS_SELECTOR, "dialog input[type=search]").send_keys(bob_last)
        wait("Bob in the search", lambda: alice.find_element(By.CSS_SELECTOR, "dialog button.person")).click()
        wait("the conversation", lambda: alice.find_element(By.NAME, "message"))

        step("messages both ways over MQTT, without a reload, and typing")
        send(alice, "Hello Bob, this is Alice")
        wait("Alice's message stored", lambda: shown(alice, "Hello Bob, this is Alice"))
        wait("the room in Bob's list", lambda: bob.find_element(By.CSS_SELECTOR, "button.room")).click()
        wait("Alice's message at Bob", lambda: shown(bob, "Hello Bob, this is Alice"))
        send(bob, "Hi Alice! Bob here.")
        wait("Bob's message at Alice", lambda: shown(alice, "Hi Alice! Bob here."))
        bob.find_element(By.NAME, "message").send_keys("and then")
        wait("Bob's typing shown at Alice", lambda: "is typing" in alice.find_element(By.CSS_SELECTOR, "p.typing").text)
        bob.find_element(By.NAME, "message").clear()
        send(alice, "Příliš žluťoučký kůň 🐎")
        wait("the second message at Bob", lambda: shown(bob, "Příliš žluťoučký kůň 🐎"))

        step("read receipts under one's own messages, and a reader who hides theirs")

        def receipt(driver, text):
            return driver.execute_script(
                "const item = [...document.querySelectorAll('li.message.mine[data-seq]')]"
                "  .find((li) => li.textContent.includes(arguments[0]));"
                "return item?.querySelector('.receipt')?.dataset.receipt ?? null;", text)

        wait("Bob's message read by Alice, at Bob", lambda: receipt(bob, "Hi Alice! Bob here.") == "read")
        alice.find_element(By.XPATH, "//button[text()='Privacy']").click()
        wait("the privacy dialog", lambda: alice.find_element(By.CSS_SELECTOR, "dialog select[name=readReceipts]"))
        alice.execute_script("document.querySelector('dialog select[name=readReceipts]').value = 'nobody'")
        alice.find_element(By.CSS_SELECTOR, "dialog button[type=submit]").click()
        wait("the privacy saved", lambda: not alice.find_elements(By.CSS_SELECTOR, "dialog[open]"))
        send(bob, "Are you there?")
        wait("Bob's question at Alice", lambda: shown(alice, "Are you there?"))
        wait("Bob's question delivered, at Bob", lambda: receipt(bob, "Are you there?") == "delivered")
        time.sleep(2)
        if receipt(bob, "Are you there?") != "delivered":
            raise Failure(f"a reader who hides reads was shown as reading: {receipt(bob, 'Are you there?')}")

        step("a reply, a mention, and search finds a message written with diacritics typed without them")
        first = wait("Alice's first message at Bob", lambda: next(
            element for element in bob.find_elements(By.CSS_SELECTOR, "li.message[data-seq]")
            if "Hello Bob, this is Alice" in element.text))
        bob.execute_script("arguments[0].querySelector('button.reply').click()", first)
        send(bob, "Nice to meet you")
        wait("Bob's reply quoting Alice at Alice", lambda: any(
            "Hello Bob, this is Alice" in element.text
            for element in alice.find_elements(By.CSS_SELECTOR, "li.message[data-seq] blockquote")))
        box = bob.find_element(By.NAME, "message")
        box.send_keys("Thanks @Ali")
        wait("Alice offered as a mention", lambda: bob.find_element(By.CSS_SELECTOR, "button.mention")).click()
        box.send_keys("see you soon")
        box.send_keys(Keys.ENTER)
        wait("the message mentioning Alice marked at Alice", lambda: "see you soon" in alice.find_element(
            By.CSS_SELECTOR, "li.message.mentions-me[data-seq]").text)
        alice.find_element(By.XPATH, "//button[text()='Search']").click()
        alice.find_element(By.CSS_SELECTOR, "dialog input[type=search]").send_keys("zlutoucky")
        found = wait("the search result", lambda: alice.find_element(By.CSS_SELECTOR, "dialog button.search-result"))
        if "žluťoučký" not in found.find_element(By.TAG_NAME, "mark").text:
            raise Failure(f"the match is not marked: {found.text}")
        found.click()
        wait("the found message marked in the room", lambda: "žluťoučký" in alice.find_element(
            By.CSS_SELECTOR, "li.message.found").text)

        step("an image and its thumbnail on both sides")
        image = f"/tmp/parley-web-{uuid.uuid4().hex[:6]}.png"
        with open(image, "wb") as file:
            file.write(png())
        alice.find_element(By.CSS_SELECTOR, "input[type=file]").send_keys(image)
        for driver, who in ((alice, "Alice"), (bob, "Bob")):
            wait(f"the thumbnail at {who}", lambda driver=driver: driver.execute_script(
                "const image = document.querySelector('li.message[data-seq] img.thumbnail');"
                "return image && image.complete && image.naturalWidth > 0 && image.src.includes('/thumbnails/');"),
                limit=40)
        os.remove(image)
        if arguments.screenshots:
            os.makedirs(arguments.screenshots, exist_ok=True)
            alice.save_screenshot(os.path.join(arguments.screenshots, "conversation.png"))
            bob.find_element(By.CSS_SELECTOR, "button.back").click()
            bob.save_screenshot(os.path.join(arguments.screenshots, "rooms.png"))
            bob.find_element(By.CSS_SELECTOR, "button.room").click()

        token = session(alice)["accessToken"]
        room = rest(url, token, "GET", "/v1/rooms?limit=1")["rooms"][0]
        step("a message with several attachments shows each file at Bob")
        names = [f"notes-{index}.txt" for index in range(3)]
        files = [upload(url, token, name, f"file {name}".encode())["id"] for name in names]
        rest(url, token, "POST", f"/v1/rooms/{room['id']}/messages",
             {"content": "three files", "uid": "attachments-1", "attachments": files})
        # A file renders as a download link once its links are signed for the reader.
        wait("the three files at Bob, signed, in order", lambda: bob.execute_script(
            "const item = [...document.querySelectorAll('li.message[data-seq]')]"
            "  .find((li) => li.textContent.includes('three files'));"
            "const links = item ? [...item.querySelectorAll('.attachments a[download]')] : [];"
            "return links.map((a) => a.download).join() === arguments[0];", ",".join(names)))

        step("a notice of the app's server shows as the room's, without a sender")
        email, password = arguments.admin.split(":", 1)
        admin = rest(url, None, "POST", "/v1/auth/login", {"email": email, "password": password})["accessToken"]
        key = rest(url, admin, "POST", "/v1/admin/api-keys", {"name": "web test", "scopes": ["messages:write"]})
        rest(url, key["secret"], "POST", f"/v1/server/rooms/{room['id']}/messages",
             {"sentBy": "system", "content": "The build is green.", "uid": "notice-1"})
        notice = wait("the notice at Bob", lambda: bob.find_element(By.CSS_SELECTOR, "li.message.notice"))
        if notice.text.split("\n")[0] != "The build is green." or notice.find_elements(By.CSS_SELECTOR, ".meta, button"):
            raise Failure(f"the notice is not shown as the room's: {notice.text!r}")

        step("200 more messages, and Bob scrolls back through all of them")
        for index in range(200):
            rest(url, token, "POST", f"/v1/rooms/{room['id']}/messages",
                 {"content": f"history {index:03d}", "uid": f"history-{index}"})
        wait("the last of them at Bob", lambda: shown(bob, "history 199"), limit=60)
        wait("Bob at the very first message", lambda: bob.execute_script(
            "const list = document.querySelector('ol.messages'); list.scrollTop = 0;"
            "return document.querySelector('li.message[data-seq=\"1\"]') !== null;"), limit=60)
        history = [text for text in texts(bob, "li.message[data-seq] .text") if text.startswith("history ")]
        if history != [f"history {index:03d}" for index in range(200)]:
            raise Failure(f"Bob's history is not the 200 messages in order: {len(history)} shown")

        step("a busy group Bob has not opened: one copy, then a summary with his exact unread count")
        bob_id = session(bob)["user"]["id"]
        # A group needs two members besides its creator: the administrator is the other.
        admin_id = rest(url, None, "POST", "/v1/auth/login", {"email": email, "password": password})["user"]["id"]
        group = rest(url, token, "POST", "/v1/rooms",
                     {"name": "Busy group", "members": [{"userId": bob_id, "role": "writer"},
                                                        {"userId": admin_id, "role": "reader"}]})
        wait("the group in Bob's list", lambda: bob.find_element(
            By.CSS_SELECTOR, f"button.room[data-room-id='{group['id']}']"))
        for index in range(12):
            body = {"content": f"busy {index:02d}", "uid": f"busy-{index}"}
            if index == 5:
                body["mentions"] = [bob_id]
            rest(url, token, "POST", f"/v1/rooms/{group['id']}/messages", body)

        def badge():
            button = bob.find_element(By.CSS_SELECTOR, f"button.room[data-room-id='{group['id']}']")
            unread = button.find_elements(By.CSS_SELECTOR, ".unread")
            # Bob's narrow window shows his open conversation, not the list: read what it holds.
            return (unread[0].get_attribute("aria-label") if unread else None,
                    button.find_element(By.CSS_SELECTOR, ".room-preview").get_attribute("textContent"))

        try:
            wait("12 unread, one mentioning Bob, and the last as the preview", lambda: badge() == (
                "12 unread, 1 mentioning you", "busy 11"), limit=20)
        except Failure as failure:
            raise Failure(f"{failure}; Bob's list shows {badge()}") from None

        step("the broker restarts; what was sent meanwhile reaches Bob")
        services = os.path.join(ROOT, "deploy", "local", "services")
        subprocess.run([services, "stop", arguments.data_dir, "mosquitto"], check=True, capture_output=True)
        wait("Bob sees the broker gone", lambda: bob.find_element(By.CSS_SELECTOR, ".connection.offline"))
        rest(url, token, "POST", f"/v1/rooms/{room['id']}/messages",
             {"content": "sent while the broker was down", "uid": "during-outage"})
        subprocess.run([services, "start", arguments.data_dir, "mosquitto"], check=True, capture_output=True)
        wait("Bob back online", lambda: bob.find_element(By.CSS_SELECTOR, ".connection.online"), limit=40)
        wait("the message sent meanwhile at Bob", lambda: shown(bob, "sent while the broker was down"), limit=30)
        send(bob, "Back again")
        wait("Bob's message after the restart at Alice", lambda: shown(alice, "Back again"), limit=30)

        step("a second tab of Alice's takes the live connection over when asked")
        first_tab = alice.current_window_handle
        alice.switch_to.new_window("tab")
        alice.get(f"{url}/app/")
        wait("the offer to take over", lambda: alice.find_element(By.CSS_SELECTOR, "p.elsewhere").is_displayed())
        alice.find_element(By.XPATH, "//button[text()='Use here']").click()
        wait("the second tab online", lambda: alice.find_element(By.CSS_SELECTOR, ".connection.online"))
        send(bob, "To the second tab")
        wait("Bob's message in the second tab", lambda: "To the second tab" in alice.find_element(
            By.CSS_SELECTOR, ".room-preview").text)
        alice.switch_to.window(first_tab)
        wait("the first tab told", lambda: alice.find_element(By.CSS_SELECTOR, "p.elsewhere").is_displayed())
        print(f"web client: PASSED ({len(steps)} steps)")
        return 0
    except Exception as error:  # report which step, with what each browser logged
        print(f"web client: FAILED at step '{steps[-1] if steps else 'start'}': {error}")
        for driver, who in ((alice, "Alice"), (bob, "Bob")):
            for entry in driver.get_log("browser")[-20:]:
                print(f"  {who} console: {entry['level']} {entry['message'][:300]}")
            if arguments.screenshots:
                os.makedirs(arguments.screenshots, exist_ok=True)
                driver.save_screenshot(os.path.join(arguments.screenshots, f"failed-{who.lower()}.png"))
        return 1
    finally:
        alice.quit()
        bob.quit()


if __name__ == "__main__":
    sys.exit(main())
