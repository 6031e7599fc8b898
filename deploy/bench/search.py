"""Search at scale: loads messages of generated Czech and English text into rooms (straight
into PostgreSQL, the search index built once afterwards, as a restore would), then measures
`GET /v1/search/messages` for a user who reads 50 rooms and one who reads 5,000, against
`GET /v1/rooms` of the same users on the same keep-alive connection. Called by deploy/bench/run."""
import argparse, http.client, json, os, random, statistics, subprocess, time, urllib.parse

# Words people write at work, with and without diacritics; queries type them without.
CZECH = ("zpráva zprávy schůzka zítra dnes odpoledne ráno večer prosím děkuji faktura faktury smlouva "
         "projekt projektu rozpočet účetní oddělení porada přeposílám příloha přílohu příliš dlouhé "
         "termín termínu dodávka objednávka zákazník zákazníka kolegové kancelář cestovní náhrady "
         "školení prezentace výsledky čtvrtletí žádost schválení podpis podpisu ředitel vedoucí "
         "sklad doprava čeština řešení úkol úkoly hotovo začneme pokračujeme omlouvám zpoždění").split()
ENGLISH = ("message meeting tomorrow today afternoon morning evening please thanks invoice invoices "
           "contract project budget accounting department forward attachment deadline delivery order "
           "customer colleagues office travel expenses training presentation results quarter request "
           "approval signature director manager warehouse shipping solution task tasks done start "
           "continue sorry delay review draft update schedule agenda minutes report").split()
QUERIES = ["zprav", "schuzka zitra", "faktura", "prilis dlouhe", "ucetni", "\"cestovni nahrady\"",
           "rozpocet projektu", "dekuji", "objednavka zakaznika", "zpozdeni",
           "meeting", "invoice", "tomorrow morning", "\"travel expenses\"", "deadline", "proj",
           "approval signature", "warehouse", "sorry delay", "nonexistentword"]


def psql(args, sql, fetch=False):
    env = dict(os.environ, PGPASSWORD=args.pg_password)
    result = subprocess.run(
        ["psql", "-q", "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", str(args.pg_port),
         "-U", "parley", "-d", "parley", "-c", sql], env=env, check=True, capture_output=True, text=True)
    return result.stdout.strip() if fetch else None


def api(connection, method, path, token=None, body=None):
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    connection.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
    response = connection.getresponse()
    data = response.read()
    return response.status, (json.loads(data) if data else None)


def sign_up(connection, name):
    email = f"{name}-{random.randrange(1 << 30)}@bench.example"
    status, _ = api(connection, "POST", "/v1/auth/register",
                    body={"email": email, "password": "correct horse", "firstName": name, "lastName": "Bench"})
    assert status == 201, status
    status, login = api(connection, "POST", "/v1/auth/login", body={"email": email, "password": "correct horse"})
    assert status == 200, status
    return login["user"]["id"], login["accessToken"]


def load(args, small_user, large_user):
    rooms, messages = args.rooms, args.messages
    vocabulary = "ARRAY[" + ",".join("'" + w + "'" for w in CZECH + ENGLISH) + "]"
    # The search table's indexes, built once after the load, as a restore would.
    indexes = psql(args, "SELECT string_agg(indexdef, '; ') FROM pg_indexes WHERE schemaname = 'messenger' "
                   "AND tablename = 'message_search' AND indexname <> 'message_search_pkey'", fetch=True)
    started = time.monotonic()
    psql(args, f"""
        DROP INDEX messenger.message_search_words_idx, messenger.message_search_room_idx;
        INSERT INTO cloud.user_account (email, first_name, last_name, password_hash)
        SELECT 'sender-' || n || '@bench.example', 'Sender', 'N' || n, '!' FROM generate_series(1, 200) n;
        INSERT INTO messenger.chat_room (uid, type, name, topic, last_seq, last_message_at)
        SELECT md5('bench-room-' || n), 'multiparty', 'Room ' || n, 'chat-room/' || md5('bench-room-' || n),
               {messages // rooms}, now()
        FROM generate_series(1, {rooms}) n;
        CREATE TEMPORARY TABLE bench_room AS
            SELECT id, row_number() OVER (ORDER BY id) AS n FROM messenger.chat_room WHERE name LIKE 'Room %';
        CREATE TEMPORARY TABLE bench_sender AS
            SELECT id, row_number() OVER (ORDER BY id) - 1 AS n FROM cloud.user_account
            WHERE email LIKE 'sender-%@bench.example';
        INSERT INTO messenger.chat_room_to_user_account (chat_room_id, user_account_id, role_id)
        SELECT r.id, s.id, (SELECT id FROM cloud.role WHERE code = 'writer')
        FROM bench_room r JOIN bench_sender s ON s.n IN (r.n % 200, (r.n + 1) % 200)
        UNION ALL SELECT r.id, {small_user}, (SELECT id FROM cloud.role WHERE code = 'reader')
        FROM bench_room r WHERE r.n <= 50
        UNION ALL SELECT r.id, {large_user}, (SELECT id FROM cloud.role WHERE code = 'reader')
        FROM bench_room r WHERE r.n <= 5000;
        INSERT INTO messenger.message (chat_room_id, seq, sent_by_id, uid, content, created_at)
        SELECT r.id, (g.n - 1) / {rooms} + 1, s.id, 'b' || g.n,
               array_to_string(ARRAY(
                   SELECT ({vocabulary})[1 + floor(random() * {len(CZECH + ENGLISH)})::int]
                   FROM generate_series(1, 5 + g.n % 11)), ' '),
               now() - ({messages} - g.n) * interval '1 second'
        FROM generate_series(1, {messages}) g(n)
        JOIN bench_room r ON r.n = (g.n - 1) % {rooms} + 1
        JOIN bench_sender s ON s.n = r.n % 200
        ORDER BY g.n;  -- ids in time order, rooms interleaved, as a chat's history is
    """)
    loaded = time.monotonic()
    # Published long ago: indexed (the relay indexes what it publishes).
    psql(args, "INSERT INTO messenger.message_search (message_id, chat_room_id, words) "
         "SELECT id, chat_room_id, messenger.search_words(content) FROM messenger.message "
         "ON CONFLICT (message_id) DO NOTHING; "  # the earlier scenarios' messages are indexed
         + indexes + "; ANALYZE")
    indexed = time.monotonic()
    return loaded - started, indexed - loaded


def measure(connection, path, token, repeat):
    samples = []
    for _ in range(repeat):
        began = time.perf_counter()
        status, _ = api(connection, "GET", path, token)
        samples.append((time.perf_counter() - began) * 1000)
        assert status == 200, (path, status)
    return samples


def summary(samples):
    ordered = sorted(samples)
    return {"p50": statistics.median(ordered), "p99": ordered[max(0, int(len(ordered) * 0.99) - 1)],
            "p999": ordered[-1], "count": len(ordered)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--api", required=True, help="cleartext base URL of parley serve")
    parser.add_argument("--pg-port", type=int, required=True)
    parser.add_argument("--pg-password", required=True)
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--rooms", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5, help="runs of each query per user")
    parser.add_argument("--output", required=True)
    args = parser.parse_args()
    url = urllib.parse.urlparse(args.api)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=120)
    small_id, small = sign_up(connection, "Fifty")
    large_id, large = sign_up(connection, "Thousands")
    print(f"search: loading {args.messages:,} messages into {args.rooms:,} rooms...", flush=True)
    load_seconds, index_seconds = load(args, small_id, large_id)
    print(f"search: loaded in {load_seconds:.0f} s, indexed in {index_seconds:.0f} s", flush=True)
    # The load can outlast serve's wait for a request after an answer (PARLEY_HTTP_REQUEST_HEAD_TIMEOUT,
    # 60 s), which then closes the connection: the next request opens a new one.
    connection.close()

    results = {}
    for name, token in (("50 rooms", small), ("5,000 rooms", large)):
        for q in QUERIES[:3]:  # warm the caches and plans
            measure(connection, "/v1/search/messages?q=" + urllib.parse.quote(q), token, 1)
        search = []
        for q in QUERIES:
            search += measure(connection, "/v1/search/messages?q=" + urllib.parse.quote(q), token, args.repeat)
        rooms = measure(connection, "/v1/rooms?limit=20", token, len(QUERIES) * args.repeat)
        results[name] = {"search": summary(search), "rooms": summary(rooms)}
        print(f"search: a user of {name}: search p50 {results[name]['search']['p50']:.2f} p99 "
              f"{results[name]['search']['p99']:.2f} ms; GET /v1/rooms p50 {results[name]['rooms']['p50']:.2f} "
              f"p99 {results[name]['rooms']['p99']:.2f} ms", flush=True)

    small_r, large_r = results["50 rooms"], results["5,000 rooms"]
    result = {
        "scenario": "search",
        "title": f"Search: {args.messages:,} messages in {args.rooms:,} rooms (p99 of 20 queries)",
        "subject": {"label": "GET /v1/search/messages, a user of 5,000 rooms", "unit": "ms",
                    "value": large_r["search"]["p99"]},
        "baseline": {"label": "GET /v1/rooms, the same user", "unit": "ms", "value": large_r["rooms"]["p99"]},
        "ratio": large_r["search"]["p99"] / large_r["rooms"]["p99"],
        "notes": [
            f"a user of 50 rooms: search p50 {small_r['search']['p50']:.2f}, p99 {small_r['search']['p99']:.2f} ms "
            f"(goal 50); GET /v1/rooms p50 {small_r['rooms']['p50']:.2f}, p99 {small_r['rooms']['p99']:.2f} ms",
            f"a user of 5,000 rooms: search p50 {large_r['search']['p50']:.2f}, p99 {large_r['search']['p99']:.2f} ms "
            f"(goal 150); GET /v1/rooms p50 {large_r['rooms']['p50']:.2f}, p99 {large_r['rooms']['p99']:.2f} ms",
            f"{len(QUERIES)} queries × {args.repeat} runs per user, one keep-alive HTTP/1.1 connection, "
            "sequential; ratio: search p99 over GET /v1/rooms p99 of the 5,000-room user (lower is better)",
            f"load: {load_seconds:.0f} s for the rows, {index_seconds:.0f} s to build the search index",
        ],
    }
    with open(args.output, "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
