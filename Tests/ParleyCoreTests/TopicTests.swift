import Foundation
import ParleyCore
import Testing

/// Every topic of the contract, built and read in one place, and the broker plugin's C
/// prefixes the same as Swift's.
struct TopicTests {
    let uid = "AbCdEfGhIjKlMnOpQrStUv"

    @Test func eachTopicReadsBackAsItself() {
        let topics: [Topic] = [
            .room(uid: uid), .chatIn(uid: uid), .chatInAs(uid: uid, userID: 42), .notifications(userID: 42),
            .presence(userID: 42),
        ]
        #expect(
            topics.map(\.name) == [
                "chat-room/\(uid)", "chat-in/\(uid)", "chat-in/\(uid)/42", "messenger-notifications/42",
                "user/42/online",
            ])
        for topic in topics { #expect(Topic(topic.name) == topic) }
        #expect(
            Topic.ingestSubscriptions == ["$share/parley-ingest/chat-in/+", "$share/parley-ingest/chat-in/+/+"])
    }

    @Test func anythingOutsideTheContractIsNoTopic() {
        for name in [
            "chat-room/short", "chat-room/\(uid)/extra", "chat-in/\(uid)/", "chat-in/+", "chat-room/#",
            "chat-in/\(uid)/x", "chat-in/\(uid)/007", "chat-in/\(uid)/0", "chat-in/\(uid)/7/x", "chat-in/short/7",
            "messenger-notifications/007", "messenger-notifications/-1", "messenger-notifications/x",
            "user/42/offline", "user/42", "user/+7/online", "$SYS/broker", "/chat-room/\(uid)", "other/\(uid)", "",
            "chat-room/\(uid)\u{1}",
        ] {
            #expect(Topic(name) == nil, "\(name)")
        }
    }

    @Test func theIngestsShortcutReadsChatInAsTheParserDoes() {
        for name in [
            "chat-in/\(uid)", "chat-in/\(uid)/", "chat-in/\(uid)/x", "chat-in/+", "chat-in/#", "chat-in/short",
            "chat-in/\(uid)\u{1}", "chat-in/\(String(repeating: "a", count: 65))", "chat-in/", "chat-room/\(uid)",
            "$share/parley-ingest/chat-in/\(uid)", "/chat-in/\(uid)", "chat-in/\(uid)é", "chat-in/\(uid)/7",
            "chat-in/\(uid)/07", "chat-in/\(uid)/-7", "chat-in/\(uid)/7/", "chat-in/\(uid)/7/8", "chat-in/short/7",
        ] {
            let parsed: String? =
                switch Topic(name) {
                case .chatIn(let uid): uid
                case .chatInAs(let uid, let sender): "\(uid) \(sender)"
                default: nil
                }
            let shortcut = Topic.chatIn(parsing: name).map { parts in
                parts.sender.map { "\(parts.uid) \($0)" } ?? parts.uid
            }
            #expect(shortcut == parsed, "\(name)")
        }
        #expect(Topic.chatIn(parsing: "chat-in/\(uid)/7")?.sender == 7)
    }

    @Test func theBrokerPluginAsksAboutExactlyTheContractsTopics() throws {
        let header = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Sources/CParleyMosquittoPlugin/plugin_internal.h")
        let text = try String(contentsOf: header, encoding: .utf8)
        func define(_ name: String) -> String? {
            text.split(separator: "\n").first { $0.hasPrefix("#define \(name) ") }
                .flatMap { $0.split(separator: "\"").dropFirst().first.map(String.init) }
        }
        #expect(
            ["TOPIC_ROOM_PREFIX", "TOPIC_CHAT_IN_PREFIX", "TOPIC_NOTIFICATIONS_PREFIX", "TOPIC_PRESENCE_PREFIX"]
                .compactMap(define) == Topic.prefixes)
        #expect(
            define("TOPIC_PRESENCE_PREFIX").map { "\($0)7\(define("TOPIC_PRESENCE_SUFFIX") ?? "")" }
                == Topic.presence(7))
        #expect(define("CONTROL_TOPIC") == BrokerControl.topic)
        #expect(define("INGEST_PROGRESS_TOPIC") == IngestProgress.topic)
    }
}
