import Foundation
import HTTPTypes
import HummingbirdTesting
import ParleyCore
import ParleyPostgres
import ParleyTestSupport
import Testing

@testable import ParleyAPI

/// `POST`/`GET /v1/me/export`: a ZIP of the user's data built by the job, downloaded
/// through its signed URL.
struct DataExportTests {
    @Test func anExportIsBuiltOnceAtATimeAndDownloadedThroughItsSignedURL() async throws {
        let harness = try await APIHarness.make()
        try await harness.run { client in
            let (room, users) = try await client.roomOfThree()
            let user = users[1]
            #expect(try await client.json(.get, "/v1/me/export", token: token(user)).status == .notFound)
            _ = try await client.send("my words", uid: "w-1", to: room, as: user)
            _ = try await client.send("not mine", uid: "n-1", to: room, as: users[0])
            let attached = try await AccountDeletionTests().sendWithFile(
                client, harness, room: room, as: user, uid: "f-1")

            for _ in 0..<2 {
                #expect(try await client.json(.post, "/v1/me/export", token: token(user)).status == .accepted)
            }
            #expect(harness.maintenanceJobs.count == 1)
            let pending = try await client.json(.get, "/v1/me/export", token: token(user))
            #expect(pending.json["status"] as? String == "pending")
            #expect(pending.json["url"] is NSNull && pending.json["expiresAt"] is NSNull)

            try await harness.runMaintenance()
            let ready = try await client.json(.get, "/v1/me/export", token: token(user))
            #expect(ready.json["status"] as? String == "ready")
            let url = try #require(ready.json["url"] as? String)
            let expiresAt = try #require(ready.json["expiresAt"] as? String)
            let format = ISO8601DateFormatter()
            format.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            let expiry = try #require(format.date(from: expiresAt))
            #expect(abs(expiry.timeIntervalSinceNow - 86_400) < 120)
            // The URL opens the ZIP without a token; another user's token opens nothing else.
            let zip = try await FileRoutesTests().send(client, .get, url)
            #expect(zip.status == .ok && zip.headers[.contentType] == "application/zip")
            let path = TestScratch.path("export", suffix: ".zip")
            // The upload as sent, to compare with the ZIP's copy.
            let copy = TestScratch.path("upload")
            try Data(FileRoutesTests.png).write(to: URL(fileURLWithPath: copy))
            defer { try? FileManager.default.removeItem(atPath: copy) }
            try Data(zip.body).write(to: URL(fileURLWithPath: path))
            defer { try? FileManager.default.removeItem(atPath: path) }
            let listing = try await Subprocess.run("/usr/bin/unzip", ["-Z1", path])
            let entries = Set(listing.standardOutput.split(separator: "\n").map(String.init))
            for name in ["profile.json", "devices.json", "rooms.json", "reactions.json", "files.json"] {
                #expect(entries.contains(name))
            }
            #expect(entries.contains("files/\(attached.fileID)-data.bin"))
            let rooms = try await Subprocess.run("/usr/bin/unzip", ["-p", path, "rooms.json"]).standardOutput
            #expect(rooms.contains("my words") && !rooms.contains("not mine"))
            let profile = try await Subprocess.run("/usr/bin/unzip", ["-p", path, "profile.json"]).standardOutput
            #expect(profile.contains(user.user.email ?? "?"))
            // What others see of them is theirs too.
            #expect(
                profile.contains(
                    #""privacy" : {"readReceipts" : "everyone", "typing" : "on", "presence" : "room-mates"}"#))
            let content = try await Subprocess.run(
                "/bin/sh",
                ["-c", "unzip -p \"$1\" \"$2\" | cmp - \"$3\"", "sh", path, "files/\(attached.fileID)-data.bin", copy])
            #expect(content.status == 0)

            // Expired: the ZIP goes with it.
            let fileID = try await harness.database.client.query(
                "SELECT file_id FROM cloud.data_export WHERE user_account_id = \(userID(user))", logger: .quiet
            ).single(Int64.self)
            try await harness.sweeper().sweep(now: Date().addingTimeInterval(86_400 + 60))
            #expect(
                try await harness.database.client.query(
                    "SELECT count(*) FROM cloud.file WHERE id = \(fileID)", logger: .quiet
                ).single(Int.self) == 0)
            // A new one may be asked for once the last is ready; it replaces the last, whose
            // ZIP it neither contains nor keeps.
            _ = harness.maintenanceJobs.take()
            for _ in 0..<2 {
                #expect(try await client.json(.post, "/v1/me/export", token: token(user)).status == .accepted)
                #expect(harness.maintenanceJobs.count == 1)
                try await harness.runMaintenance()
            }
            let zips = try await harness.database.client.query(
                "SELECT count(*) FROM cloud.file WHERE uploaded_by_id = \(userID(user)) AND mime_type = 'application/zip'",
                logger: .quiet
            ).single(Int.self)
            #expect(zips == 1)
            let latest = try #require(
                try await client.json(.get, "/v1/me/export", token: token(user)).json["url"] as? String)
            let again = try await FileRoutesTests().send(client, .get, latest)
            try Data(again.body).write(to: URL(fileURLWithPath: path))
            let latestEntries = try await Subprocess.run("/usr/bin/unzip", ["-Z1", path]).standardOutput
            #expect(!latestEntries.contains(".zip"))
            let listed = try await Subprocess.run("/usr/bin/unzip", ["-p", path, "files.json"]).standardOutput
            #expect(listed.contains("files/\(attached.fileID)-data.bin"))
        }
    }
}
