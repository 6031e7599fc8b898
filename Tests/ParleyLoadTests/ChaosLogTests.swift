import Foundation
import Testing

@testable import parley_load

/// The chaos load's records are what the verifier reads: each line one JSON object.
struct ChaosLogTests {
    @Test func aDeliveryLineIsJSONWhateverItsHashHolds() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chaos-log-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let log = try ChaosLog(directory: directory)
        log.received(room: 7, uid: "c-tag-1", receiver: 3, hash: "h\"\\\n\u{1}", seq: 42)
        log.received(room: 7, uid: "c-tag-2", receiver: 4, hash: "abc", seq: nil)
        log.flush()
        let lines = try String(contentsOfFile: "\(directory)/received.jsonl", encoding: .utf8)
            .split(separator: "\n")
        #expect(lines.count == 2 && log.count("received") == 2)
        let first = try #require(
            JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: any Sendable])
        #expect(first["hash"] as? String == "h\"\\\n\u{1}")
        #expect(first["room"] as? Int == 7 && first["receiver"] as? Int == 3 && first["seq"] as? Int == 42)
        #expect(first["uid"] as? String == "c-tag-1" && first["t"] as? Int ?? 0 > 0)
        let second = try #require(
            JSONSerialization.jsonObject(with: Data(lines[1].utf8)) as? [String: any Sendable])
        #expect(second["seq"] is NSNull && second["hash"] as? String == "abc")
    }

    @Test func onlyAPayloadNamingTheRejectionTypeIsDecodedOffTheRoomTopics() {
        #expect(ChaosTraffic.mayBeRejection(Array(#"{"type":"message-rejected","data":{}}"#.utf8)))
        #expect(!ChaosTraffic.mayBeRejection(Array(#"{"type":"new-message-notification"}"#.utf8)))
        #expect(!ChaosTraffic.mayBeRejection(Array("short".utf8)))
    }
}
