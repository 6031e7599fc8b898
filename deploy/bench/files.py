"""Measures one `parley serve`: upload, download MB/s against a raw loopback copy of the same
file (sendfile to a socket read in 4 MiB pieces), and Range latency against /health/live on
the same keep-alive connection. Called by deploy/bench/files."""
import argparse, http.client, json, os, random, socket, statistics, subprocess, threading, time, urllib.parse

def request(base, method, path, body=None, headers=None):
    url = urllib.parse.urlparse(base)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=600)
    connection.request(method, path, body=body, headers=headers or {})
    response = connection.getresponse()
    return response.status, response.read()

def raw_copy(path):
    """Megabytes per second of the file pushed through a loopback TCP socket."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    def send():
        peer, _ = server.accept()
        with open(path, "rb") as source:
            peer.sendfile(source)
        peer.close()
    threading.Thread(target=send, daemon=True).start()
    client = socket.create_connection(server.getsockname())
    buffer = memoryview(bytearray(4 << 20))
    received, start = 0, time.perf_counter()
    while True:
        count = client.recv_into(buffer)
        if not count:
            break
        received += count
    elapsed = time.perf_counter() - start
    client.close()
    server.close()
    return received / elapsed / 1e6

def curl_download(url, token):
    """Megabytes per second of one download by curl (HTTP/1.1, to /dev/null)."""
    out = subprocess.run(
        ["curl", "-s", "-o", "/dev/null", "-w", "%{speed_download} %{size_download}", "-H", f"Authorization: Bearer {token}", url],
        check=True, capture_output=True, text=True).stdout.split()
    return float(out[0]) / 1e6, int(out[1])

def latencies(base, path, token, count, ranges):
    url = urllib.parse.urlparse(base)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
    samples = []
    for index in range(count):
        headers = {"Authorization": f"Bearer {token}"}
        if ranges:
            start = random.randrange(0, ranges - 65536)
            headers["Range"] = f"bytes={start}-{start + 65535}"
        began = time.perf_counter()
        connection.request("GET", path, headers=headers)
        response = connection.getresponse()
        response.read()
        samples.append((time.perf_counter() - began) * 1000)
        assert response.status in (200, 206), response.status
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.99) - 1]

def main():
    parser = argparse.ArgumentParser()
    for name in ("base", "file", "store", "email"):
        parser.add_argument("--" + name, required=True)
    options = parser.parse_args()
    credentials = json.dumps({"email": options.email, "password": "correct horse battery"})
    request(options.base, "POST", "/v1/auth/register", json.dumps(
        {"email": options.email, "password": "correct horse battery", "firstName": "Bench", "lastName": "Mark"}),
        {"Content-Type": "application/json"})
    _, body = request(options.base, "POST", "/v1/auth/login", credentials, {"Content-Type": "application/json"})
    token = json.loads(body)["accessToken"]
    size = os.path.getsize(options.file)

    with open(options.file, "rb") as source:
        began = time.perf_counter()
        status, body = request(options.base, "POST", "/v1/files?name=content.bin", source,
                               {"Authorization": f"Bearer {token}", "Content-Type": "application/octet-stream",
                                "Content-Length": str(size)})
        upload = size / (time.perf_counter() - began) / 1e6
    file = json.loads(body)
    assert status == 201, body
    path = f"/v1/files/{file['id']}/content"

    baseline = statistics.median(raw_copy(options.file) for _ in range(3))
    downloads = []
    for _ in range(3):
        speed, received = curl_download(options.base + path, token)
        assert received == size, received
        downloads.append(speed)
    download = statistics.median(downloads)
    range_p50, range_p99 = latencies(options.base, path, token, 300, size)
    live_p50, live_p99 = latencies(options.base, "/health/live", token, 300, 0)

    print(f"store: {options.store}")
    print(f"  upload (raw body)                 {upload:9.0f} MB/s")
    print(f"  download, parley (curl)           {download:9.0f} MB/s")
    print(f"  raw loopback copy (baseline)      {baseline:9.0f} MB/s")
    print(f"  ratio download / baseline         {download / baseline:9.2f}")
    print(f"  64 KiB Range request  p50 {range_p50:6.2f} ms  p99 {range_p99:6.2f} ms")
    print(f"  /health/live baseline p50 {live_p50:6.2f} ms  p99 {live_p99:6.2f} ms")

main()
