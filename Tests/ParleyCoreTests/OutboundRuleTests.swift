import Foundation
import ParleyCore
import Testing

/// Where Parley's own requests may go: https only, no address of the host's own networks,
/// IPv6 forms of IPv4 addresses judged as those, ranges opened only by the operator's list.
struct OutboundRuleTests {
    struct Names: AddressResolver {
        let table: [String: [String]]
        func addresses(of host: String) async throws -> [IPAddress] { (table[host] ?? []).compactMap(IPAddress.init) }
    }

    @Test(arguments: [
        "0.0.0.0", "0.1.2.3", "10.1.2.3", "100.64.0.1", "100.100.100.200", "127.0.0.1", "127.8.8.8", "169.254.169.254",
        "172.16.0.1", "172.31.255.255", "192.0.0.8", "192.0.2.1", "192.168.1.1", "198.18.0.1", "198.51.100.7",
        "203.0.113.9", "224.0.0.1", "239.255.255.250", "240.0.0.1", "255.255.255.255",
        "::", "::1", "fc00::1", "fd00:ec2::254", "fe80::1", "fec0::1", "ff02::1", "2001:db8::1", "100::1",
        "::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254", "64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe",
        "64:ff9b:1::8.8.8.8", "::127.0.0.1",
    ])
    func everyRefusedClassIsRefused(_ text: String) throws {
        let address = try #require(IPAddress(text))
        #expect(!OutboundRule().permits(address), "\(text)")
    }

    @Test(arguments: ["8.8.8.8", "1.1.1.1", "100.63.255.255", "172.32.0.1", "2606:4700::1111", "::ffff:8.8.8.8"])
    func publicAddressesArePermitted(_ text: String) throws {
        #expect(OutboundRule().permits(try #require(IPAddress(text))), "\(text)")
    }

    @Test func anAllowedRangeOpensItsOwnFamilyOnly() throws {
        let rule = OutboundRule(allowed: try AddressRange.list("127.0.0.0/8, 10.1.0.0/16").get())
        #expect(rule.permits(try #require(IPAddress("127.0.0.1"))))
        #expect(rule.permits(try #require(IPAddress("::ffff:127.0.0.1"))))
        #expect(rule.permits(try #require(IPAddress("10.1.2.3"))))
        #expect(!rule.permits(try #require(IPAddress("10.2.0.1"))))
        #expect(!rule.permits(try #require(IPAddress("::1"))))
        #expect(throws: ParleyError.self) { try AddressRange.list("127.0.0.0/33").get() }
        #expect(throws: ParleyError.self) { try AddressRange.list("localhost").get() }
    }

    @Test(arguments: [
        ("http://hooks.example.com/x", "must be https"), ("ftp://hooks.example.com/x", "must be https"),
        ("hooks.example.com/x", "absolute URL"), ("https://user:pw@hooks.example.com/", "credentials"),
    ])
    func aURLOfAnotherShapeIsRefusedNamingItsField(_ url: String, _ reason: String) {
        let refused = #expect(throws: ParleyError.self) { try OutboundRule().endpoint(url) }
        #expect(refused?.field == "url" && refused?.detail.contains(reason) == true, "\(url)")
    }

    @Test func httpIsAllowedOnlyWhenSaid() throws {
        let endpoint = try OutboundRule(allowHTTP: true).endpoint("http://[::1]:8080/hook")
        #expect(endpoint.host == "::1" && endpoint.port == 8080)
        #expect(try OutboundRule().endpoint("https://hooks.example.com/a").port == 443)
    }

    @Test func aNameIsJudgedByEveryAddressItResolvesTo() async throws {
        let names = Names(table: [
            "public.example": ["93.184.216.34"], "mixed.example": ["93.184.216.34", "10.0.0.1"],
            "inner.example": ["127.0.0.1"],
        ])
        let rule = OutboundRule()
        let target = try await rule.target(try rule.endpoint("https://public.example/h"), resolver: names)
        #expect(target.address == IPAddress("93.184.216.34") && target.endpoint.host == "public.example")
        for host in ["mixed.example", "inner.example", "nowhere.example"] {
            let refused = await #expect(throws: ParleyError.self) {
                try await rule.target(try rule.endpoint("https://\(host)/h"), resolver: names)
            }
            #expect(refused?.field == "url", "\(host)")
        }
        // A literal address is judged as itself, without a lookup.
        await #expect(throws: ParleyError.self) {
            try await rule.target(try rule.endpoint("https://169.254.169.254/latest"), resolver: names)
        }
    }
}

/// Signatures as the Standard Webhooks specification computes them.
struct WebhookSignatureTests {
    @Test func theSpecificationsExampleSignsAlike() throws {
        let signer = try #require(WebhookSignature(secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"))
        let signature = signer.signature(
            id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1_614_265_330, body: Data(#"{"test": 2432232314}"#.utf8))
        #expect(signature == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
    }

    @Test func aGeneratedSecretIsItsKey() throws {
        let (key, secret) = WebhookSignature.generate()
        #expect(key.count == 32 && secret.hasPrefix("whsec_"))
        let body = Data("{}".utf8)
        #expect(
            WebhookSignature(key: key).signature(id: "a", timestamp: 1, body: body)
                == WebhookSignature(secret: secret)?.signature(id: "a", timestamp: 1, body: body))
        #expect(WebhookSignature(secret: "pk_nope") == nil)
    }
}

/// Retries double from five seconds with jitter; a delivery dies after a day, a webhook after
/// three days of failures.
struct WebhookRetryPolicyTests {
    let policy = WebhookRetryPolicy()
    let start = Date(timeIntervalSince1970: 1_000_000)

    @Test func retriesDoubleWithinTheirJitterUpToAnHour() {
        for (attempt, base) in [(1, 5.0), (2, 10.0), (3, 20.0), (12, 3600.0)] {
            for jitter in [-0.2, 0.0, 0.2] {
                let next = policy.afterFailure(
                    attempt: attempt, firstAttemptAt: start, failingSince: start, now: start, jitter: jitter)
                #expect(next == .retry(at: start.addingTimeInterval(base * (1 + jitter))), "\(attempt) \(jitter)")
            }
        }
    }

    @Test func aDeliveryDiesAfterADayAndItsWebhookAfterThree() {
        let day = 86_400.0
        #expect(
            policy.afterFailure(
                attempt: 30, firstAttemptAt: start, failingSince: start, now: start.addingTimeInterval(day), jitter: 0)
                == .failed(disable: false))
        #expect(
            policy.afterFailure(
                attempt: 2, firstAttemptAt: start.addingTimeInterval(3 * day - 10), failingSince: start,
                now: start.addingTimeInterval(3 * day), jitter: 0) == .failed(disable: true))
    }
}

/// What webhooks hear of each domain event.
struct WebhookEventTests {
    @Test func aMembershipChangeIsToldAsWhoWasAddedAndWhoRemoved() throws {
        let events = WebhookEvent.of(
            .membersChanged(MembersChanged(roomId: 7, byId: 0, serial: 1, addedIds: [2, 3], removedIds: [4])))
        #expect(events.map(\.kind) == [.memberAdded, .memberRemoved])
        #expect(events.allSatisfy { $0.roomID == 7 })
        let added = try JSONCoding.decoder.decode(WebhookEvent.RoomAction.self, from: Data(events[0].data.utf8))
        #expect(added.userIds == [2, 3] && added.chatRoomId == 7 && added.byId == 0)
        #expect(!events[0].data.contains("serial"))
        #expect(
            WebhookEvent.of(
                .membersChanged(MembersChanged(roomId: 7, byId: 1, serial: 2, addedIds: [], removedIds: []))
            ).isEmpty)
    }

    @Test func sessionsEndingIsTheServersOwnBusiness() {
        #expect(WebhookEvent.of(.sessionsEnded(SessionsEnded(sessionIds: [1], clientIds: ["c"]))).isEmpty)
    }

    @Test func everyKindButTheWebhooksOwnComesOfADomainEvent() {
        let told: Set<WebhookEvent.Kind> = [
            .messageCreated, .messageEdited, .messageDeleted, .reactionChanged, .readMarkerMoved, .receiptChanged,
            .roomCreated,
            .roomChanged, .roomDeleted, .memberAdded, .memberRemoved, .invitationCreated, .userBlocked,
            .userUnblocked, .reportFiled,
        ]
        #expect(told.union([.webhookPing, .webhookDisabled]) == Set(WebhookEvent.Kind.allCases))
    }
}
