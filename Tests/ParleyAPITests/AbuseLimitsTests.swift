import Foundation
import HTTPTypes
import HummingbirdTesting
import ParleyCore
import ParleyPostgres
import ParleyWorker
import Testing

@testable import ParleyAPI

/// The limits against abuse over REST, on real Redis: messages per user, rooms per hour and
/// members per request, each 429 with Retry-After (or 400 before any id is looked up).
struct AbuseLimitsTests {
    /// A harness whose users may send `burst` messages (then one each 5 s) and create
    /// `roomsPerHour` rooms, adding at most five members a request.
    func harness(burst: Int, roomsPerHour: Int) async throws -> APIHarness {
        var harness = try await APIHarness.make()
        harness.abuseLimits = AbuseLimits(
            messages: RateBucket(perSecond: 0.2, burst: burst), roomsPerHour: roomsPerHour, membersPerRequest: 5,
            membersPerHour: 1_000)
        return harness
    }

    @Test func messagesBeyondTheBurstAndRoomsBeyondTheHourAre429() async throws {
        try await harness(burst: 3, roomsPerHour: 1).run { client in
            let (room, users) = try await client.roomOfThree()
            let writer = users[1]
            for index in 0..<3 { _ = try await client.send("m", uid: "b-\(index)", to: room, as: writer) }
            let refused = try await client.json(
                .post, "/v1/rooms/\(room)/messages", token: token(writer), body: #"{"content":"m","uid":"b-3"}"#)
            #expect(refused.status == .tooManyRequests && refused.problem?.code == "rate-limited")
            #expect(Int(refused.headers[.retryAfter] ?? "") ?? 0 >= 1)
            // A retry of a stored message is answered as stored, whatever the budget.
            let retried = try await client.json(
                .post, "/v1/rooms/\(room)/messages", token: token(writer), body: #"{"content":"m","uid":"b-0"}"#)
            #expect(retried.status == .ok && retried.json["seq"] as? Int == 2, "\(retried.text)")
            // Another user's budget is their own; their sends at once, sharing group commits,
            // spend it exactly: the burst goes, the rest is refused.
            let newcomer = try await client.signUp()
            #expect(
                try await client.json(
                    .put, "/v1/rooms/\(room)/members/\(userID(newcomer))", token: token(users[0]),
                    body: #"{"role":"writer"}"#
                ).status.code < 300)
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for index in 0..<6 {
                    group.addTask {
                        try await client.json(
                            .post, "/v1/rooms/\(room)/messages", token: token(newcomer),
                            body: #"{"content":"m","uid":"n-\#(index)"}"#
                        ).status
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == .created }.count == 3, "\(statuses)")
            #expect(statuses.filter { $0 == .tooManyRequests }.count == 3, "\(statuses)")
            _ = try await client.send("m", uid: "o-1", to: room, as: users[0])

            // roomOfThree's room was the admin's one room this hour.
            let another = try await client.json(
                .post, "/v1/rooms", token: token(users[0]),
                body:
                    #"{"name":"Two","members":[{"userId":\#(userID(users[1])),"role":"writer"},{"userId":\#(userID(users[2])),"role":"writer"}]}"#
            )
            #expect(another.status == .tooManyRequests && another.headers[.retryAfter] != nil, "\(another.text)")

            // More members than one request may add: 400 naming members, whoever they are.
            let many = (1...6).map { #"{"userId":\#(1_000_000 + $0),"role":"reader"}"# }.joined(separator: ",")
            let tooMany = try await client.json(
                .post, "/v1/rooms", token: token(users[2]), body: #"{"name":"Many","members":[\#(many)]}"#)
            #expect(tooMany.status == .badRequest && tooMany.problem?.field == "members", "\(tooMany.text)")
        }
    }

    /// A sender with no lease takes a quarter of the burst ahead (``LeasedTokenBuckets``), on
    /// real Redis: the budget is still spent exactly, the ninth send of eight refused.
    @Test func aBudgetLeasedAheadIsSpentExactly() async throws {
        try await harness(burst: 8, roomsPerHour: 10).run { client in
            let (room, users) = try await client.roomOfThree()
            for index in 0..<8 { _ = try await client.send("m", uid: "l-\(index)", to: room, as: users[1]) }
            let refused = try await client.json(
                .post, "/v1/rooms/\(room)/messages", token: token(users[1]), body: #"{"content":"m","uid":"l-8"}"#)
            #expect(refused.status == .tooManyRequests && refused.problem?.code == "rate-limited", "\(refused.text)")
        }
    }

    @Test func uploadsBeyondTheDayAre429AndBeyondTheQuota413() async throws {
        var harness = try await APIHarness.make()
        harness.abuseLimits = AbuseLimits(uploadsPerDay: 3, storageQuotaBytes: 1_000)
        try await harness.run { client in
            let user = token(try await client.signUp())
            let files = FileRoutesTests()
            #expect(try await files.upload(client, token: user, Array(repeating: 1, count: 600)).status == .created)
            let over = try await files.upload(client, token: user, Array(repeating: 2, count: 600))
            #expect(over.status == .contentTooLarge)
            #expect(String(decoding: over.body, as: UTF8.self).contains("quota-exceeded"))
            #expect(try await files.upload(client, token: user, Array(repeating: 3, count: 100)).status == .created)
            // Another user's quota and day are their own.
            let other = token(try await client.signUp())
            #expect(try await files.upload(client, token: other, Array(repeating: 4, count: 900)).status == .created)
            let tooMany = try await files.upload(client, token: user, Array(repeating: 5, count: 10))
            #expect(tooMany.status == .tooManyRequests && tooMany.headers[.retryAfter] != nil)
        }
    }

    @Test func aPublicUploadNoMessageTookGoesWithinTheHour() async throws {
        let harness = try await APIHarness.make()
        try await harness.run { client in
            let user = token(try await client.signUp())
            let files = FileRoutesTests()
            let publicFile = try await files.upload(
                client, token: user, Array(repeating: 1, count: 50), query: "name=p.bin&protected=false")
            let protectedFile = try await files.upload(client, token: user, Array(repeating: 2, count: 50))
            let ids = try [publicFile, protectedFile].map { try #require($0.file?.id) }
            // Two hours on: the public one is gone, the protected one waits out its day.
            let removed = try await OrphanSweeper(
                files: PostgresFileRepository(database: harness.database, logger: .quiet), store: harness.blobStore,
                logger: .quiet
            ).sweep(now: Date().addingTimeInterval(2 * 3_600))
            #expect(removed == 1)
            #expect(try await client.json(.get, "/v1/files/\(ids[0])", token: user).status == .notFound)
            #expect(try await client.json(.get, "/v1/files/\(ids[1])", token: user).status == .ok)
        }
    }
}
