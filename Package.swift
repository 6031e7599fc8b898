// swift-tools-version:6.2
import PackageDescription

/// Settings shared by every Parley target: Swift 6 language mode with the upcoming
/// features the Hummingbird stack itself builds with.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny")
]

let package = Package(
    name: "parley",
    // ParleyKit's (and parley-chat's) minimums. The server builds on Linux only: see the end.
    platforms: [.macOS(.v13), .iOS(.v16)],
    products: [
        .executable(name: "parley", targets: ["parley"]),
        .executable(name: "parley-load", targets: ["parley-load"]),
        // A chat in the terminal, built on ParleyKit alone.
        .executable(name: "parley-chat", targets: ["parley-chat"]),
        // The mosquitto plugin, loaded by the broker: libParleyMosquittoPlugin.so.
        .library(name: "ParleyMosquittoPlugin", type: .dynamic, targets: ["CParleyMosquittoPlugin"]),
        // The client library an app adds to chat through Parley.
        .library(name: "ParleyKit", targets: ["ParleyKit"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", exact: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth.git", exact: "2.5.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", exact: "1.33.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", exact: "2.13.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-configuration.git", exact: "1.4.0"),
        .package(url: "https://github.com/apple/swift-log.git", exact: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", exact: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", exact: "2.4.1"),
        .package(url: "https://github.com/apple/swift-nio.git", exact: "2.101.3"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", exact: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", exact: "1.46.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", exact: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", exact: "1.35.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", exact: "1.37.0"),
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", exact: "1.13.4"),
        .package(url: "https://github.com/apple/swift-nio-transport-services.git", exact: "1.28.0"),
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client.git", exact: "1.5.0"),
        .package(url: "https://github.com/apple/swift-openapi-urlsession.git", exact: "1.4.0"),
        // Tests only: the certificate authority of the test's identity provider.
        .package(url: "https://github.com/apple/swift-certificates.git", exact: "1.21.1"),
        .package(url: "https://github.com/vapor/multipart-kit.git", exact: "4.7.1"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift.git", exact: "0.2.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", exact: "1.7.3"),
        // OTLP over HTTP only: the gRPC exporter's packages are resolved but not built.
        .package(url: "https://github.com/swift-otel/swift-otel.git", exact: "1.6.0", traits: ["OTLPHTTP"]),
    ],
    targets: [
        // What the processes run on, knowing nothing of chat: group commits, batch queues,
        // deadlines, timeouts, wake-ups, periodic loops, blocking calls off the shared pool.
        .target(
            name: "ParleyRuntime",
            dependencies: [.product(name: "ServiceLifecycle", package: "swift-service-lifecycle")],
            swiftSettings: swiftSettings
        ),

        // Domain types, errors, token formats and the ports every other target implements.
        // Foundation, swift-crypto (token hashing and signing are domain rules) and the runtime.
        .target(
            name: "ParleyCore",
            dependencies: [
                "ParleyRuntime",
                .product(name: "Crypto", package: "swift-crypto"),
                // RSA signatures of the identity providers' tokens Parley trusts.
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                // The trace context a message carries through the pipeline (API only).
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: swiftSettings
        ),

        // PostgreSQL: the client service, readiness probe and the migration runner.
        .target(
            name: "ParleyPostgres",
            dependencies: [
                "ParleyCore", "ParleyRuntime", "CLibpq",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                // Only to mark the pool's own errors (ConnectionPoolError) as unavailability.
                .product(name: "_ConnectionPoolModule", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: swiftSettings
        ),

        // Redis over hiredis (Debian's libhiredis-dev).
        .systemLibrary(name: "CHiredis", pkgConfig: "hiredis", providers: [.apt(["libhiredis-dev"])]),
        // libpq (Debian's libpq-dev): migrations, sent whole as psql sends them.
        .systemLibrary(name: "CLibpq", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .target(
            name: "ParleyRedis",
            dependencies: [
                "ParleyCore", "CHiredis",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),

        // MQTT over libmosquitto (Debian's libmosquitto-dev).
        .systemLibrary(name: "CMosquitto", pkgConfig: "libmosquitto", providers: [.apt(["libmosquitto-dev"])]),
        .target(
            name: "ParleyMQTT",
            dependencies: [
                "ParleyCore", "ParleyRuntime", "CMosquitto",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),

        // The Hummingbird application: listeners, middleware, problem+json, operations routes.
        .target(
            name: "ParleyAPI",
            dependencies: [
                "ParleyCore",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "MultipartKit", package: "multipart-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            resources: [.copy("Resources/openapi.yaml"), .copy("Resources/asyncapi.yaml"), .copy("Resources/app")],
            swiftSettings: swiftSettings
        ),

        // The mosquitto plugin (C, plugin API v5): token check, ACL through the broker-auth
        // endpoint with a cache, $CONTROL commands, offline presence. The broker provides the
        // mosquitto_* symbols when it loads the library.
        .target(
            name: "CParleyMosquittoPlugin",
            // DWARF 4: Debian 12's valgrind cannot read the DWARF 5 that clang emits by default.
            cSettings: [.unsafeFlags(["-Wall", "-Wextra", "-gdwarf-4"])],
            linkerSettings: [.linkedLibrary("curl"), .linkedLibrary("crypto")]
        ),

        // Push providers over HTTP/2: APNs (ES256 provider tokens), FCM HTTP v1 (OAuth2 service
        // account, RS256), and a signed webhook.
        .target(
            name: "ParleyPush",
            dependencies: [
                "ParleyCore",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings
        ),

        // Trusted issuers' keys (JWKS) for the token exchange: over HTTPS and from files.
        .target(
            name: "ParleyIdentity",
            dependencies: [
                "ParleyCore", "ParleyRuntime", "ParleyOutbound",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),

        // Requests Parley makes to other servers (webhooks): to the address the outbound rule
        // checked, never redirected, bounded in time and size.
        .target(
            name: "ParleyOutbound",
            dependencies: [
                "ParleyCore", "ParleyRuntime",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings
        ),

        // EMQX 5's management API: what the mosquitto plugin's $CONTROL commands do, for a broker
        // without the plugin.
        .target(
            name: "ParleyEMQX",
            dependencies: [
                "ParleyCore",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),

        // HTTP/2 servers that speak APNs's and FCM's protocols, for the tests and `parley-load`
        // (Apple's and Google's services cannot be reached from here).
        .target(
            name: "ParleyPushSimulator",
            dependencies: [
                "ParleyCore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),

        // Files: the filesystem blob store, Range and precondition rules, thumbnails and probes
        // through libvips and ffmpeg tools in a subprocess.
        .target(
            name: "ParleyMedia",
            dependencies: [
                "ParleyCore", "ParleyRuntime",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),

        // Job handlers of `parley worker`, over the ports of ParleyCore.
        .target(
            name: "ParleyWorker",
            dependencies: [
                "ParleyCore", "ParleyRuntime", .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: swiftSettings
        ),

        // The one executable: reads configuration, wires concrete types, runs services.
        .executableTarget(
            name: "parley",
            dependencies: [
                "ParleyCore", "ParleyPostgres", "ParleyRedis", "ParleyMQTT", "ParleyAPI", "ParleyWorker", "ParleyPush",
                "ParleyMedia", "ParleyEMQX", "ParleyRuntime", "ParleyIdentity", "ParleyOutbound",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "OTel", package: "swift-otel"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: swiftSettings
        ),

        // Load generator and benchmarks (`parley-load chat`, `rest`, `fanout`, `push`): open-loop
        // rates, latency in HDR histograms, CPU per operation; figures, not tests.
        .executableTarget(
            name: "parley-load",
            dependencies: [
                "ParleyCore", "ParleyPush", "ParleyPushSimulator", "ParleyMQTT", "ParleyRuntime",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings
        ),

        .target(
            name: "ParleyTestSupport",
            dependencies: [
                "ParleyCore", "ParleyPostgres", "ParleyRedis", "ParleyMQTT", "ParleyPush", "ParleyPushSimulator",
                "ParleyRuntime",
                // Loopback stand-ins for other parties' HTTP servers.
                .product(name: "Hummingbird", package: "hummingbird"),
                // An identity provider over TLS, with a certificate authority made by the test.
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            path: "Tests/ParleyTestSupport",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ParleyEMQXTests",
            dependencies: [
                "ParleyEMQX", "ParleyCore", "ParleyTestSupport", .product(name: "Hummingbird", package: "hummingbird"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ParleyIdentityTests", dependencies: ["ParleyIdentity", "ParleyCore", "ParleyTestSupport"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "ParleyRuntimeTests", dependencies: ["ParleyRuntime", "ParleyTestSupport"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "ParleyCoreTests",
            dependencies: [
                "ParleyCore", "ParleyTestSupport", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "ParleyWorkerTests", dependencies: ["ParleyWorker", "ParleyCore"], swiftSettings: swiftSettings),
        .testTarget(
            name: "ParleyPostgresTests",
            dependencies: ["ParleyPostgres", "ParleyTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ParleyRedisTests",
            dependencies: [
                "ParleyRedis", "ParleyCore", "ParleyTestSupport",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ParleyPushTests",
            dependencies: [
                "ParleyPush", "ParleyPushSimulator", "ParleyWorker", "ParleyRedis", "ParleyTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ParleyMediaTests",
            dependencies: [
                "ParleyMedia", "ParleyCore", "ParleyPostgres", "ParleyWorker", "ParleyRedis", "ParleyTestSupport",
                "ParleyRuntime",
                .product(name: "Logging", package: "swift-log"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ParleyMQTTTests",
            dependencies: ["ParleyMQTT", "ParleyCore", "ParleyRuntime", "ParleyTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ParleyAPITests",
            dependencies: [
                "ParleyAPI", "ParleyPostgres", "ParleyRedis", "ParleyMQTT", "ParleyWorker", "ParleyTestSupport",
                "ParleyPush", "ParleyPushSimulator", "ParleyMedia", "ParleyIdentity", "ParleyOutbound", "ParleyKit",
                // `parley serve`'s and `parley worker`'s graphs, through `@testable import parley`.
                "parley",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // The client library: nothing of the server's, so an app builds it alone.
        .target(
            name: "ParleyKit",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                // Network.framework's sockets on Apple's platforms (what iOS wants of an app).
                .product(
                    name: "NIOTransportServices", package: "swift-nio-transport-services",
                    condition: .when(platforms: [.macOS, .iOS])),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                // REST's transport: AsyncHTTPClient where NIO runs the sockets, URLSession on Apple's platforms.
                .product(
                    name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client",
                    condition: .when(platforms: [.linux])),
                // (built on Linux too: the tests run the client over both transports).
                .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession"),
            ],
            swiftSettings: swiftSettings
        ),
        // A person's chat in the terminal, on ParleyKit as an app uses it (and its example).
        .executableTarget(
            name: "parley-chat",
            dependencies: [
                "ParleyKit",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ParleyKitTests",
            dependencies: [
                "ParleyKit", "ParleyTestSupport", "ParleyRuntime",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // The executable's own rules (settings, wiring), through `@testable import parley`.
        .testTarget(
            name: "ParleyCommandTests",
            dependencies: [
                "parley", "ParleyPostgres", "ParleyPush", "ParleyRedis", "ParleyWorker", "ParleyTestSupport",
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "ParleyLoadTests", dependencies: ["parley-load", "ParleyRuntime", "ParleyTestSupport"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "ParleyExecutableTests",
            dependencies: [
                "ParleyTestSupport", "ParleyPostgres", "ParleyMQTT", "ParleyCore", "ParleyRuntime", "ParleyRedis",
                "ParleyPushSimulator",
                // ParleyClient against the whole stack, as an app runs it, over either transport.
                "ParleyKit",
                .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession"),
                .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                // The answers' own types, to read them as a client written against the contract does.
                "ParleyAPI",
                .product(name: "Crypto", package: "swift-crypto"),
                // The OTLP/HTTP receiver the trace test sends spans to.
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)

// The server runs on Linux (Glibc, libpq, hiredis, libmosquitto; Synchronization's Mutex, which
// Apple's systems have from macOS 15): only ParleyKit and parley-chat build on Apple's
// platforms. SwiftPM checks every target's product dependencies against the package's minimums
// on Apple's platforms, built or not (an app adding ParleyKit would meet HummingbirdAuth's
// macOS 14 and iOS 17), so the other targets take their products on Linux only.
let appleClientTargets: Set<String> = ["ParleyKit", "parley-chat"]
for target in package.targets where !appleClientTargets.contains(target.name) {
    target.dependencies = target.dependencies.map { dependency in
        guard case .productItem(let name, let package, let moduleAliases, nil) = dependency else {
            return dependency
        }
        return .product(
            name: name, package: package ?? name, moduleAliases: moduleAliases, condition: .when(platforms: [.linux]))
    }
}
