import NIOCore
import ParleyKit

/// Packets of every type, valid in the version they are listed for.
enum MQTTSamples {
    static func bytes(_ text: String) -> ByteBuffer { ByteBuffer(string: text) }

    /// Valid in both versions: no property, no reason code but success.
    static let common: [MQTTPacket] = [
        .connect(.init(version: .v3_1_1, clientID: "parley-7-phone", keepAlive: 30)),
        .connect(
            .init(
                version: .v3_1_1, clientID: "", cleanStart: false, keepAlive: 0, username: "7",
                password: bytes("v1.token.signature"),
                will: .init(topic: "presence/7", payload: bytes("gone"), qos: .atLeastOnce, retain: true))),
        .connack(.init(sessionPresent: true, reasonCode: 0)),
        .connack(.init(reasonCode: 5)),
        .publish(.init(topic: "messenger/rooms/42", payload: bytes(#"{"type":"new-message"}"#))),
        .publish(
            .init(
                topic: "chat-in/42", payload: bytes("héllo ✓"), qos: .atLeastOnce, retain: true, duplicate: true,
                packetID: 65535)),
        .publish(.init(topic: "a", payload: ByteBuffer(), qos: .exactlyOnce, packetID: 1)),
        .puback(.init(packetID: 7)),
        .pubrec(.init(packetID: 8)),
        .pubrel(.init(packetID: 9)),
        .pubcomp(.init(packetID: 10)),
        .subscribe(
            .init(
                packetID: 11,
                subscriptions: [
                    .init(topicFilter: "messenger/rooms/+", qos: .atLeastOnce),
                    .init(topicFilter: "messenger-notifications/#", qos: .exactlyOnce),
                ])),
        .unsubscribe(.init(packetID: 13, topicFilters: ["messenger/rooms/1", "x/#"])),
        .pingreq,
        .pingresp,
        .disconnect(.init()),
    ]

    /// 3.1.1's own: SUBACK return codes, a bare UNSUBACK.
    static let v3Only: [MQTTPacket] = [
        .suback(.init(packetID: 12, reasonCodes: [1, 2, 0x80, 0])),
        .unsuback(.init(packetID: 14)),
    ]

    /// MQTT 5's own: properties, reason codes, AUTH.
    static let v5Only: [MQTTPacket] = [
        .connect(
            .init(
                version: .v5, clientID: "c", keepAlive: 60, password: bytes("no user name in 5"),
                will: .init(
                    topic: "w", payload: bytes("bye"), qos: .exactlyOnce,
                    properties: [.willDelayInterval(10), .contentType("text/plain"), .userProperty("k", "v")]),
                properties: [
                    .sessionExpiryInterval(3600), .receiveMaximum(20), .maximumPacketSize(1 << 20),
                    .topicAliasMaximum(5), .requestResponseInformation(1), .requestProblemInformation(0),
                    .authenticationMethod("SCRAM"), .authenticationData(bytes("nonce")),
                    .userProperty("app", "parley"), .userProperty("app", "again"),
                ])),
        .connack(
            .init(
                sessionPresent: false, reasonCode: 0x87,
                properties: [
                    .assignedClientIdentifier("auto-1"), .serverKeepAlive(20), .maximumQoS(1), .retainAvailable(0),
                    .wildcardSubscriptionAvailable(1), .subscriptionIdentifierAvailable(0),
                    .sharedSubscriptionAvailable(0), .responseInformation("r/"), .serverReference("other:1883"),
                    .reasonString("not authorized"),
                ])),
        .publish(
            .init(
                topic: "", payload: bytes("aliased"), qos: .atLeastOnce, packetID: 3,
                properties: [
                    .topicAlias(2), .payloadFormatIndicator(1), .messageExpiryInterval(60),
                    .responseTopic("reply/1"), .correlationData(bytes("id-1")), .subscriptionIdentifier(268_435_455),
                    .subscriptionIdentifier(1),
                ])),
        .puback(.init(packetID: 1, reasonCode: 0x10)),
        .puback(.init(packetID: 2, reasonCode: 0, properties: [.reasonString("ok")])),
        .pubrec(.init(packetID: 3, reasonCode: 0x80, properties: [.userProperty("a", "b")])),
        .pubrel(.init(packetID: 4, reasonCode: 0x92)),
        .pubcomp(.init(packetID: 5)),
        .subscribe(
            .init(
                packetID: 6,
                subscriptions: [
                    .init(
                        topicFilter: "messenger/rooms/9", qos: .atLeastOnce, noLocal: true, retainAsPublished: true,
                        retainHandling: 2)
                ],
                properties: [.subscriptionIdentifier(9)])),
        .suback(.init(packetID: 6, reasonCodes: [1, 0x87], properties: [.reasonString("one refused")])),
        .unsubscribe(.init(packetID: 7, topicFilters: ["a"], properties: [.userProperty("u", "p")])),
        .unsuback(.init(packetID: 7, reasonCodes: [0, 0x11])),
        .disconnect(.init(reasonCode: 0x8E, properties: [.reasonString("session taken over")])),
        .disconnect(.init(reasonCode: 4)),
        .disconnect(.init(properties: [.sessionExpiryInterval(0)])),
        .auth(.init()),
        .auth(.init(reasonCode: 0x18, properties: [.authenticationMethod("SCRAM"), .authenticationData(bytes("x"))])),
    ]

    static func valid(in version: MQTTVersion) -> [MQTTPacket] {
        // CONNECT carries its own version; the others are framed by the decoder's.
        let shared = common.filter {
            if case .connect = $0 { return version == .v3_1_1 }
            return true
        }
        return shared + (version == .v5 ? v5Only : v3Only)
    }

    static func encoded(_ packet: MQTTPacket, _ version: MQTTVersion) throws -> ByteBuffer {
        var buffer = ByteBuffer()
        try packet.write(to: &buffer, version: version)
        return buffer
    }
}
