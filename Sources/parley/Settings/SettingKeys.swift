import Foundation

/// Every configuration key, grouped by the component it configures.
enum SettingKeys {
    enum General {
        static let logLevel = SettingKey(
            "logLevel", default: "info", "Log level: trace, debug, info, notice, warning, error, critical.")
        static let logFormat = SettingKey(
            "logFormat", default: "text",
            "Log lines: text (label, level, message, metadata) or json (one JSON object a line, for a collector).")
        static let migrationsDirectory = SettingKey(
            "migrationsDirectory",
            "Directory of the SQL migrations (default: Migrations/ of the source tree, else /usr/share/parley/migrations)."
        )
        static let all = [logLevel, logFormat, migrationsDirectory]
    }

    enum Traces {
        static let endpoint = SettingKey(
            "otel.endpoint",
            "OpenTelemetry collector's OTLP/HTTP address (http://collector:4318): spans go to its /v1/traces "
                + "as protobuf. Unset: no tracing.")
        static let all = [endpoint]
    }

    enum Postgres {
        static let host = SettingKey("postgres.host", default: "127.0.0.1", "PostgreSQL host.")
        static let port = SettingKey("postgres.port", default: "5432", "PostgreSQL port.")
        static let user = SettingKey("postgres.user", default: "parley", "PostgreSQL user.")
        static let password = SettingKey("postgres.password", secret: true, "PostgreSQL password.")
        static let database = SettingKey("postgres.database", default: "parley", "PostgreSQL database.")
        static let tls = SettingKey("postgres.tls", default: "prefer", "TLS to PostgreSQL: disable, prefer or require.")
        static let maxConnections = SettingKey(
            "postgres.maxConnections", default: "20", "Most PostgreSQL connections per process.")
        static let idleTimeout = SettingKey(
            "postgres.idleTimeout", default: "3600",
            "Seconds a PostgreSQL connection stays open without work, so a rise in load finds those an "
                + "earlier one opened.")
        static let keepAlive = SettingKey(
            "postgres.keepAlive", default: "0",
            "Seconds an idle PostgreSQL connection waits before a keep-alive query; 0: none, so the "
                + "pool arms no timer each time a connection falls idle. Set it (30) where a NAT or "
                + "proxy between Parley and PostgreSQL forgets idle connections.")
        static let connectTimeout = SettingKey(
            "postgres.connectTimeout", default: "5", "Seconds to wait for a PostgreSQL connection.")
        static let answerTimeout = SettingKey(
            "postgres.answerTimeout", default: "30",
            "Seconds a statement may take to start answering before its request or job fails.")
        static let replicas = SettingKey(
            "postgres.replicas",
            "Streaming replicas (host:port, comma-separated; the primary's user, password, database and TLS): "
                + "history, room lists, search, user search and file metadata read from them. Unset: none.")
        static let replicaMaxLag = SettingKey(
            "postgres.replicaMaxLag", default: "5",
            "Seconds a replica may be behind the primary; one further behind, or not answering, is skipped.")
        static let readYourWrites = SettingKey(
            "postgres.readYourWrites", default: "10",
            "Seconds after a user's last write during which their reads go to the primary (at least "
                + "postgres.replicaMaxLag plus 2), so a client always sees its own writes.")
        static let all = [
            host, port, user, password, database, tls, maxConnections, idleTimeout, keepAlive, connectTimeout,
            answerTimeout, replicas, replicaMaxLag, readYourWrites,
        ]
    }

    enum Redis {
        static let host = SettingKey("redis.host", default: "127.0.0.1", "Redis host.")
        static let port = SettingKey("redis.port", default: "6379", "Redis port.")
        static let password = SettingKey("redis.password", secret: true, "Redis password (AUTH).")
        static let database = SettingKey("redis.database", default: "0", "Redis logical database.")
        static let maxConnections = SettingKey(
            "redis.maxConnections", default: "16", "Most Redis connections per process.")
        static let commandTimeout = SettingKey(
            "redis.commandTimeout", default: "10", "Seconds a Redis command may take before its connection is dropped.")
        static let sentinels = SettingKey(
            "redis.sentinels",
            "Redis Sentinels (host:port, comma-separated) to ask where the primary is; every new connection asks, "
                + "so Parley follows a failover. Unset: redis.host and redis.port are the primary.")
        static let masterName = SettingKey(
            "redis.masterName", default: "parley", "The primary's name in the Sentinels' configuration.")
        static let sentinelPassword = SettingKey(
            "redis.sentinelPassword", secret: true, "Password of the Sentinels (their requirepass), if any.")
        static let waitReplicas = SettingKey(
            "redis.waitReplicas", default: "0",
            "Replicas a queued job waits for (WAIT, 1 s) before it counts as queued, so a failover loses none; "
                + "fewer within the wait are counted (parley_jobs_unreplicated_total), not failed. 1 with Sentinel.")
        static let all = [
            host, port, password, database, maxConnections, commandTimeout, sentinels, masterName, sentinelPassword,
            waitReplicas,
        ]
    }

    enum MQTT {
        static let host = SettingKey(
            "mqtt.host", default: "127.0.0.1", "MQTT broker host (the server's own connection).")
        static let port = SettingKey("mqtt.port", default: "1883", "MQTT broker port.")
        static let username = SettingKey("mqtt.username", "MQTT user name of the server's identity.")
        static let password = SettingKey("mqtt.password", secret: true, "MQTT password of the server's identity.")
        static let tls = SettingKey("mqtt.tls", default: "false", "Connect to the broker over TLS.")
        static let caFile = SettingKey("mqtt.caFile", "CA certificate (PEM) that signed the broker's certificate.")
        static let tlsInsecure = SettingKey(
            "mqtt.tlsInsecure", default: "false", "Skip the broker certificate's host name check (local setups only).")
        static let keepAlive = SettingKey("mqtt.keepAlive", default: "30", "MQTT keep-alive in seconds.")
        static let control = SettingKey(
            "broker.control", default: "plugin",
            "How Parley ends clients and takes lost rooms from them: plugin (commands on the mosquitto plugin's "
                + "$CONTROL topic) or emqx (EMQX 5's management API at emqx.apiUrl).")
        static let emqxAPIURL = SettingKey(
            "emqx.apiUrl", "EMQX's dashboard listener for its REST API (http://emqx:18083), with broker.control emqx.")
        static let emqxAPIKey = SettingKey("emqx.apiKey", "EMQX API key (System → API Keys).")
        static let emqxAPISecret = SettingKey("emqx.apiSecret", secret: true, "The EMQX API key's secret.")
        static let all = [
            host, port, username, password, tls, caFile, tlsInsecure, keepAlive, control, emqxAPIURL, emqxAPIKey,
            emqxAPISecret,
        ]
    }

    enum HTTP {
        static let host = SettingKey(
            "http.host", default: "127.0.0.1", "Address of the public listeners (0.0.0.0 for all).")
        static let port = SettingKey(
            "http.port", default: "8080", "Cleartext port (HTTP/1.1 and h2c); empty disables it.")
        static let tlsPort = SettingKey("https.port", default: "8443", "TLS port (h2 and http/1.1 by ALPN).")
        static let tlsCertificate = SettingKey(
            "tls.certificate", "TLS certificate chain (PEM); the TLS listener runs when this and the key are set.")
        static let tlsKey = SettingKey("tls.key", secret: true, "TLS private key (PEM file path).")
        static let internalHost = SettingKey(
            "internal.host", default: "127.0.0.1", "Address of the internal listener (metrics, broker auth).")
        static let internalPort = SettingKey(
            "internal.port", default: "9090", "Internal listener port of `parley serve`; empty disables it.")
        static let workerInternalPort = SettingKey(
            "worker.internalPort", default: "9091", "Internal listener port of `parley worker` (health, metrics).")
        static let idleTimeout = SettingKey(
            "http.idleTimeout", default: "300", "Seconds before an idle HTTP connection is closed.")
        static let requestHeadTimeout = SettingKey(
            "http.requestHeadTimeout", default: "60",
            "Seconds a connection may take to send a request's head, from its start or its last answer "
                + "(a slowloris is closed then); also how long an HTTP/1.1 connection stays open idle.")
        static let readinessTimeout = SettingKey(
            "http.readinessTimeout", default: "2", "Seconds /health/ready waits for each dependency.")
        static let trustedProxies = SettingKey(
            "trustedProxies",
            "Comma-separated CIDRs of proxies whose Forwarded / X-Forwarded-For name the client (rate limits "
                + "per address); from others those headers are ignored.")
        static let all = [
            host, port, tlsPort, tlsCertificate, tlsKey, internalHost, internalPort, workerInternalPort, idleTimeout,
            requestHeadTimeout, readinessTimeout, trustedProxies,
        ]
    }

    enum Accounts {
        static let bcryptCost = SettingKey("bcrypt.cost", default: "12", "bcrypt cost of password hashes (4-31).")
        static let accessTokenLifetime = SettingKey(
            "accessToken.lifetime", default: "3600", "Seconds an access token is valid.")
        static let refreshTokenLifetime = SettingKey(
            "refreshToken.lifetime", default: "2592000", "Seconds a refresh token is valid (30 days).")
        static let registrationOpen = SettingKey(
            "registration.open", default: "true", "Whether POST /v1/auth/register creates accounts.")
        static let loginLimitPerEmail = SettingKey(
            "rateLimit.loginPerEmail", default: "10",
            "Password attempts (logins, and the current password of PATCH and DELETE /v1/me) per account and "
                + "client address per window.")
        static let loginLimitPerAccount = SettingKey(
            "rateLimit.loginPerAccount", default: "30",
            "Password attempts per account per window from all the addresses that never signed in to it, "
                + "together (an address that did keeps its own budget for 30 days).")
        static let loginLimitPerAddress = SettingKey(
            "rateLimit.loginPerAddress", default: "50", "Login attempts per client IP address per window.")
        static let registerLimitPerAddress = SettingKey(
            "rateLimit.registerPerAddress", default: "10", "Registrations per client IP address per window.")
        static let rateLimitWindow = SettingKey("rateLimit.window", default: "60", "Rate-limit window in seconds.")
        static let directory = SettingKey(
            "directory", default: "everyone",
            "Whom GET /v1/users finds: everyone (anyone may be found and added; an exact e-mail tells whether "
                + "it is registered) or room-mates (only people who share a room with the searcher).")
        static let sessionCacheLifetime = SettingKey(
            "sessionCache.lifetime", default: "30", "Seconds an authenticated token is cached (0 disables the cache).")
        static let all = [
            bcryptCost, accessTokenLifetime, refreshTokenLifetime, registrationOpen, loginLimitPerEmail,
            loginLimitPerAccount, loginLimitPerAddress, registerLimitPerAddress, rateLimitWindow, directory,
            sessionCacheLifetime,
        ]
    }

    /// Sign-in: passwords, and the trusted issuers whose tokens are exchanged for sessions.
    enum MQTTClients {
        static let tokenKey = SettingKey(
            "mqtt.tokenKey", secret: true,
            "Base64 key (at least 32 bytes) signing clients' MQTT passwords; the broker plugin shares it.")
        static let tokenLifetime = SettingKey(
            "mqtt.tokenLifetime", default: "43200", "Seconds a client's MQTT password is accepted.")
        static let publicHost = SettingKey(
            "mqtt.publicHost", "Broker host given to clients at login (default: PARLEY_MQTT_HOST).")
        static let publicPort = SettingKey("mqtt.publicPort", default: "8883", "Broker port given to clients.")
        static let publicTLS = SettingKey("mqtt.publicTls", default: "true", "Whether clients connect over TLS.")
        static let publicWebsocketPort = SettingKey(
            "mqtt.publicWebsocketPort", "Broker WebSocket port given to clients, if any.")
        static let stampKey = SettingKey(
            "mqtt.stampKey", secret: true,
            "Base64 key (at least 32 bytes) with which Parley's broker plugin signs the sender it stamps on chat-in "
                + "(its plugin_opt_stamp_key); required by the ingest with PARLEY_INGEST_SENDER=plugin.")
        static let all = [
            tokenKey, tokenLifetime, publicHost, publicPort, publicTLS, publicWebsocketPort, stampKey,
        ]
    }

    enum Jobs {
        static let maxAttempts = SettingKey(
            "jobs.maxAttempts", default: "5", "Deliveries of a job before it goes to the dead-letter stream.")
        static let visibilityTimeout = SettingKey(
            "jobs.visibilityTimeout", default: "30",
            "Seconds an unacknowledged job waits before another consumer takes it (doubled per retry).")
        static let fanoutChunkSize = SettingKey(
            "fanout.chunkSize", default: "500",
            "Readers of one room notified per fan-out job; larger rooms take several jobs.")
        static let notificationWindow = SettingKey(
            "notification.windowMilliseconds", default: "1000",
            "While a room stays busy, each member's notification topic gets at most one copy per this many ms: "
                + "a room-summary with the newest message and their unread counts (the first message of a quiet "
                + "room goes at once; 0: a copy of every message).")
        static let fanoutConsumers = SettingKey(
            "fanout.consumers", default: "2", "Fan-out jobs one worker process handles at once.")
        static let ingestPayloadLimit = SettingKey(
            "ingest.payloadLimit", default: "65536",
            "Largest chat-in payload in bytes; larger ones are rejected as too-large.")
        static let ingestSender = SettingKey(
            "ingest.sender", default: "plugin",
            "What vouches for a chat-in message's sender: plugin (Parley's mosquitto plugin stamps it) or topic "
                + "(the chat-in/{roomUid}/{userId} level, for a broker that only calls Parley's HTTP ACL: EMQX, "
                + "mosquitto-go-auth).")
        static let ingestSession = SettingKey(
            "ingest.session",
            "Client id of the ingest's kept MQTT session: the broker queues chat-in for it while the worker "
                + "restarts. One per ingest process; unset, a restart loses what is sent meanwhile.")
        /// Lanes by default: one transaction in flight per two cores, at least one.
        static let halfTheCores = String(max(1, ProcessInfo.processInfo.activeProcessorCount / 2))
        // Each lane is one transaction in flight; lanes beyond what PostgreSQL can run at once
        // split batches that would have shared a commit (chat-2 on 2 cores: 16 lanes held
        // 625 msg/s, 4 held 875, 2 held 1,000, 1 held 1,250).
        static let ingestConcurrency = SettingKey(
            "ingest.concurrency", default: halfTheCores,
            "Ingest lanes of one process, each storing its batch in one transaction (one room stays in one "
                + "lane, in order); half this machine's cores by default, at least 1.")
        // Fewer, larger commits under load cost PostgreSQL and the worker less per message: each
        // commit and relay round costs about 1.3-1.8 ms of their CPU whatever its size (chat-2 at
        // 1,125 msg/s: 8 ms saved 16-20 % of the server's CPU per message against 4 ms; 16 ms
        // saved little more and doubled p50). See the pipeline article.
        static let ingestCommitInterval = SettingKey(
            "ingest.commitIntervalMicroseconds", default: "8000",
            "Least microseconds between the starts of one ingest lane's commits: a busy lane gathers what "
                + "arrives meanwhile into its next commit, one whose last commit began longer ago stores at once "
                + "(0: no wait).")
        // As the ingest's lanes, for REST sends: each lane is one commit in flight.
        static let batchLanes = SettingKey(
            "messages.batchLanes", default: halfTheCores,
            "Commits of REST sends in flight at once in one serve process (one room stays in one lane, in "
                + "order); half this machine's cores by default, at least 1.")
        static let batchLimit = SettingKey(
            "messages.batchLimit", default: "256",
            "Most messages stored in one transaction: an ingest lane's batch, or REST sends sharing a commit.")
        static let batchWindow = SettingKey(
            "messages.batchWindowMicroseconds", default: "200",
            "Microseconds a REST send that finds no commit under way waits for others to share its commit.")
        // As the ingest's commit interval, for REST sends (see the pipeline article).
        static let commitInterval = SettingKey(
            "messages.commitIntervalMicroseconds", default: "8000",
            "Least microseconds between the starts of one REST send lane's commits: under load the sends that "
                + "arrive meanwhile share the next commit, a lane whose last commit began longer ago stores at once "
                + "(0: no wait).")
        static let outboxStall = SettingKey(
            "outbox.stallSeconds", default: "30",
            "Seconds the oldest unpublished room event may wait before the worker's readiness names the relay.")
        static let all = [
            maxAttempts, visibilityTimeout, fanoutChunkSize, notificationWindow, fanoutConsumers, ingestPayloadLimit,
            ingestSender, ingestSession,
            ingestConcurrency, ingestCommitInterval,
            batchLanes, batchLimit, batchWindow, commitInterval, outboxStall,
        ]
    }

    enum Push {
        static let content = SettingKey(
            "push.content", default: "preview",
            "What a push shows: preview (room, sender, start of the message) or ids (nothing readable).")
        static let concurrency = SettingKey(
            "push.concurrency", default: "64", "Pushes one push worker sends at once (HTTP/2 streams).")
        static let visibilityTimeout = SettingKey(
            "push.visibilityTimeout", default: "90",
            "Seconds an unacknowledged push waits before another worker sends it (one push may take 40 s of requests).")
        static let caFile = SettingKey(
            "push.caFile", "Extra CA certificate (PEM) trusted for push endpoints (a gateway with a private CA).")
        static let apnsKeyFile = SettingKey(
            "apns.keyFile", "APNs signing key (the .p8 file, a path); APNs is off without it.")
        static let apnsKeyID = SettingKey("apns.keyId", "APNs key id of the signing key.")
        static let apnsTeamID = SettingKey("apns.teamId", "Apple developer team id.")
        static let apnsTopic = SettingKey("apns.topic", "The app's bundle id (apns-topic).")
        static let apnsEnvironment = SettingKey(
            "apns.environment", default: "production", "APNs endpoint: production or sandbox.")
        static let apnsURL = SettingKey(
            "apns.url", "APNs base URL instead of apns.environment's (a gateway or a test server).")
        static let fcmServiceAccountFile = SettingKey(
            "fcm.serviceAccountFile", "FCM service-account JSON file (a path); FCM is off without it.")
        static let fcmURL = SettingKey(
            "fcm.url", default: "https://fcm.googleapis.com", "FCM HTTP v1 base URL.")
        static let webhookURL = SettingKey(
            "webhook.url", "URL that receives a JSON POST per webhook push; webhook pushes are off without it.")
        static let webhookSecret = SettingKey(
            "webhook.secret", secret: true, "Key of the webhook's X-Parley-Signature (HMAC-SHA256 of the body).")
        static let all = [
            content, concurrency, visibilityTimeout, caFile, apnsKeyFile, apnsKeyID, apnsTeamID, apnsTopic,
            apnsEnvironment, apnsURL,
            fcmServiceAccountFile, fcmURL, webhookURL, webhookSecret,
        ]
    }

    enum Files {
        static let store = SettingKey(
            "files.store", default: "filesystem",
            "Where file content lives: filesystem, or postgres (chunked rows; no shared disk between API nodes).")
        static let directory = SettingKey(
            "files.directory", default: "data/files", "Directory of the filesystem store (and media work files).")
        static let uploadLimit = SettingKey(
            "files.uploadLimit", default: "104857600", "Largest upload in bytes; larger ones get 413 too-large.")
        static let orphanGrace = SettingKey(
            "files.orphanGrace", default: "86400", "Seconds an upload no message uses is kept before it is deleted.")
        static let signedURLTTL = SettingKey(
            "signedUrl.ttl", default: "3600",
            "Seconds a signed file URL (in file objects, signed for the user it was given to) stays valid; it "
                + "opens the file only while that user may read it, so a removal or a deletion ends it at once.")
        static let linkLifetime = SettingKey(
            "files.linkLifetime", "Deprecated former name of PARLEY_SIGNED_URL_TTL, read only when that is unset.")
        static let publicURL = SettingKey(
            "public.url",
            "Base URL of the API as clients see it (https://chat.example.com); file URLs are relative without it.")
        static let mediaMemoryLimit = SettingKey(
            "media.memoryLimit", default: "1073741824", "Address-space limit in bytes of a thumbnail or probe tool.")
        static let mediaTimeout = SettingKey(
            "media.timeout", default: "90", "Seconds a thumbnail or probe tool may run before it is killed.")
        static let all = [
            store, directory, uploadLimit, orphanGrace, signedURLTTL, linkLifetime, publicURL, mediaMemoryLimit,
            mediaTimeout,
        ]
    }

    static let all =
        General.all + Traces.all + Postgres.all + Redis.all + MQTT.all + MQTTClients.all + HTTP.all + Accounts.all
        + Auth.all + Jobs.all
        + Push.all + Outbound.all + MessageHook.all + Files.all + Messages.all + Limits.all

    /// The key table for `--help`.
    static var helpText: String {
        let rows = all.map { key in
            let value = key.isSecret ? "(secret)" : key.defaultValue.map { "[\($0)]" } ?? ""
            return "  \(key.environmentVariable) \(value)\n      \(key.help)"
        }
        return """
            Configuration comes from PARLEY_* environment variables and, with --config FILE
            (or PARLEY_CONFIG_FILE), from a file of KEY=VALUE lines; the environment wins.

            \(rows.joined(separator: "\n"))
            """
    }
}
