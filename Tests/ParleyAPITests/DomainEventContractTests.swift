import Foundation
import Hummingbird
import HummingbirdTesting
import ParleyAPI
import ParleyCore
import ParleyTestSupport
import Testing

/// The vocabulary of domain events and `asyncapi.yaml` say the same: the document lists every
/// event, and each MQTT message names the events that produce it, on the topics they go to.
struct DomainEventContractTests {
    @Test func theDocumentListsEveryDomainEventAndNoOther() async throws {
        let document = try await Self.document()
        #expect(Set(Self.listedEvents(document)) == Set(DomainEvent.Name.allCases.map(\.rawValue)))
    }

    @Test func eachMessageNamesTheEventsThatProduceItOnTheTopicsTheyGoTo() async throws {
        let document = try await Self.document()
        let named = Self.producedBy(document)
        var produced: [String: Set<String>] = [:]
        var onRoomTopic: Set<String> = []
        var onNotifications: Set<String> = []
        for event in DomainEventSamples.all {
            let delivery = event.delivery(roomUID: "room-uid")
            let room = try delivery.roomEvents.map(Self.type)
            let users = try delivery.fanout.map { try Self.type($0.event) }
            for type in room + users { produced[type, default: []].insert(event.name.rawValue) }
            onRoomTopic.formUnion(room)
            onNotifications.formUnion(users)
        }
        // A busy room's new messages reach the notification topics in a window's summary
        // (``NotificationWindows``), not through their events' delivery.
        let summary = RoomEvent.summary(
            NotificationSummary(chatRoomId: 1, seq: 1, message: nil, unreadCount: 1, unreadMentionCount: 0), for: 1)
        produced[summary.type, default: []].insert(DomainEvent.Name.messageCreated.rawValue)
        onNotifications.insert(summary.type)
        #expect(named == produced)
        let channels = Self.channelMessages(document)
        #expect(onRoomTopic.isSubset(of: channels["chat-room/{roomUid}"] ?? []))
        #expect(onNotifications.isSubset(of: channels["messenger-notifications/{userId}"] ?? []))
    }

    @Test func theKindsOfRoomChangeAreTheDocumentsList() async throws {
        let document = try await Self.document()
        let line = try #require(
            document.split(separator: "\n").first { $0.contains("enum: [renamed,") })
        let listed = line.split(separator: "[")[1].split(separator: "]")[0].split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        #expect(listed == RoomEvent.ChangeKind.allCases.map(\.rawValue))
        #expect(
            Set(RoomChanged.Kind.allCases.map(\.rawValue)).isSubset(
                of: Set(RoomEvent.ChangeKind.allCases.map(\.rawValue))))
    }

    static func document() async throws -> String {
        let application = Application(router: ParleyRoutes.forTesting().publicRouter(), logger: .quiet)
        return try await application.test(.router) { client in
            try await client.execute(uri: "/asyncapi.yaml", method: .get) { String(buffer: $0.body) }
        }
    }

    /// The keys under `x-parley-domain-events: events:`.
    static func listedEvents(_ document: String) -> [String] {
        let lines = document.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(of: "x-parley-domain-events:"),
            let events = lines[start...].firstIndex(of: "  events:")
        else { return [] }
        return lines[(events + 1)...].prefix { $0.hasPrefix("    ") }.compactMap { line in
            line.split(separator: ":").first.map { $0.trimmingCharacters(in: .whitespaces) }
        }
    }

    /// Each message's `name` and the events its `x-parley-events` names.
    static func producedBy(_ document: String) -> [String: Set<String>] {
        var out: [String: Set<String>] = [:]
        var name: String?
        for line in document.split(separator: "\n") {
            if line.hasPrefix("      name: ") { name = String(line.dropFirst("      name: ".count)) }
            if line.hasPrefix("      x-parley-events: ["), let name {
                let list = line.drop { $0 != "[" }.dropFirst().prefix { $0 != "]" }
                out[name] = Set(list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
            }
        }
        return out
    }

    /// The message names each channel's `oneOf` refers to (through `components/messages`).
    static func channelMessages(_ document: String) -> [String: Set<String>] {
        var names: [String: String] = [:]
        var key: String?
        for line in document.split(separator: "\n") {
            if line.hasPrefix("    "), !line.hasPrefix("     "), line.hasSuffix(":") {
                key = String(line.dropFirst(4).dropLast())
            }
            if line.hasPrefix("      name: "), let key { names[key] = String(line.dropFirst("      name: ".count)) }
        }
        var out: [String: Set<String>] = [:]
        var channel: String?
        for line in document.split(separator: "\n") {
            if line.hasPrefix("  "), !line.hasPrefix("   "), line.hasSuffix(":") {
                channel = String(line.dropFirst(2).dropLast())
            }
            if let channel, let ref = line.range(of: "#/components/messages/") {
                let key = line[ref.upperBound...].prefix { $0 != "\"" }
                if let name = names[String(key)] { out[channel, default: []].insert(name) }
            }
        }
        return out
    }

    static func type(_ event: String) throws -> String {
        struct Typed: Decodable { let type: String }
        return try JSONDecoder().decode(Typed.self, from: Data(event.utf8)).type
    }
}
