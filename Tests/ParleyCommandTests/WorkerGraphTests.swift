import Foundation
import ParleyCore
import ParleyMQTT
import ParleyPostgres
import ParleyPush
import ParleyRedis
import ParleyRuntime
import ParleyTestSupport
import ParleyWorker
import Testing

@testable import parley

/// `parley worker --roles …` runs what each role needs and watches it, and nothing else.
struct WorkerGraphTests {
    /// Enough configuration for every role; nothing here connects until the services run.
    static func settings(_ overrides: [String: String] = [:]) -> Settings {
        let base = [
            "PARLEY_MQTT_TOKEN_KEY": Data(repeating: 42, count: 32).base64EncodedString(),
            "PARLEY_MQTT_STAMP_KEY": Data(repeating: 43, count: 32).base64EncodedString(),
            "PARLEY_FILES_DIRECTORY": TestScratch.path("worker-graph"),
            "PARLEY_FANOUT_CONSUMERS": "3",
        ]
        return Settings(environment: base.merging(overrides) { $1 })
    }

    /// Builds the graph of `roles` and hands it to `body`; the push client is shut down after.
    func withGraph(
        _ roles: Set<WorkerCommand.Role>, settings: Settings = Self.settings(),
        _ body: (WorkerGraph) throws -> Void = { _ in }
    ) async throws {
        let client = try PushHTTPClient()
        do {
            let graph = try WorkerGraph(
                roles: roles, settings: settings,
                connections: try Connections(settings: settings, role: "worker", ingest: roles.contains(.ingest)),
                pushClient: client)
            try body(graph)
        } catch {
            try await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }

    @Test func eachRoleRunsItsOwnServicesWithTheirProbes() async throws {
        // The outbox: the release of busy rooms' summaries (stopped after the relay, so it
        // releases what the relay last held), the relay, its monitor.
        try await withGraph([.outbox]) { graph in
            #expect(graph.services.count == 3)
            #expect(graph.services.first is NotificationSummaryRelease)
            #expect(graph.services.dropFirst().first is OutboxRelay)
            #expect(graph.services.last is OutboxMonitor)
            #expect(graph.probes.count == 1 && graph.probes.first is OutboxRelayProbe)
        }
        try await withGraph([.fanout]) { graph in
            // The reads' silent pushes' coalescer first (stopped after what feeds it), then one
            // consumer per configured fan-out slot, one probe for their queue.
            #expect(graph.services.count == 4)
            #expect(graph.services.first is Coalescer<RoomUser>)
            #expect(graph.services.dropFirst().allSatisfy { $0 is JobConsumer })
            #expect(graph.probes.count == 1 && graph.probes.first is JobQueueProbe)
        }
        // Ingest: the chat-in consumer, after the delivery receipts' coalescer it hands marks to
        // (stopped after it, so what it handed on is written).
        try await withGraph([.ingest]) { graph in
            #expect(graph.services.count == 2)
            #expect(graph.services.first is Coalescer<RoomUser> && graph.services.last is IngestConsumer)
            #expect(graph.probes.isEmpty)
        }
        try await withGraph([.push]) { graph in
            #expect(graph.services.count == 1)
            #expect(graph.probes.count == 1)
        }
        // Media: thumbnails and the orphan sweep.
        try await withGraph([.media]) { graph in
            #expect(graph.services.count == 2)
            #expect(graph.services.last is OrphanSweeper)
            #expect(graph.probes.count == 1)
        }
        // Maintenance: erasure and export jobs, and their sweeper.
        try await withGraph([.maintenance]) { graph in
            #expect(graph.services.count == 2)
            #expect(graph.services.first is JobConsumer)
            #expect(graph.services.last is MaintenanceSweeper)
            #expect(graph.probes.count == 1)
        }
        // Webhooks: the queue's consumer (events to deliveries) and the sender.
        try await withGraph([.webhooks]) { graph in
            #expect(graph.services.count == 2)
            #expect(graph.services.first is JobConsumer && graph.services.last is WebhookDispatcher)
            #expect(graph.probes.count == 1 && graph.probes.first is JobQueueProbe)
        }
        try await withGraph(Set(WorkerCommand.Role.allCases)) { graph in
            #expect(graph.services.count == 3 + 4 + 2 + 1 + 2 + 2 + 2)
            #expect(graph.services.first is Coalescer<RoomUser>)
            #expect(graph.probes.count == 6)
        }
    }

    @Test func aRoleReadsOnlyItsOwnSettings() async throws {
        let badMedia = Self.settings(["PARLEY_MEDIA_TIMEOUT": "soon"])
        try await withGraph([.outbox, .fanout, .ingest, .push], settings: badMedia)
        await #expect(throws: SettingsError.self) { try await withGraph([.media], settings: badMedia) }
        // Exports run the archiver under the same tool limits.
        await #expect(throws: SettingsError.self) { try await withGraph([.maintenance], settings: badMedia) }
    }
}

/// `--roles` takes roles as separate words, or joined by commas or hyphens (a systemd
/// instance name: `parley-worker@outbox-fanout`).
struct WorkerRolesTests {
    @Test func rolesMayBeJoinedByCommasOrHyphens() throws {
        let command = try WorkerCommand.parse(["--roles", "outbox-fanout", "ingest,push"])
        #expect(command.roles == [.outbox, .fanout, .ingest, .push])
        #expect(try WorkerCommand.parse([]).roles == Set(WorkerCommand.Role.allCases))
        #expect(throws: (any Error).self) { try WorkerCommand.parse(["--roles", "outbox-nothing"]) }
        #expect(throws: (any Error).self) { try WorkerCommand.parse(["--roles", ","]) }
    }
}
