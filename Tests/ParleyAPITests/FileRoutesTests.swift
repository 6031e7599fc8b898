import Crypto
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import ParleyCore
import ParleyMedia
import ParleyPostgres
import ParleyRedis
import ParleyTestSupport
import ParleyWorker
import Testing

@testable import ParleyAPI

/// Upload, metadata, access and Range delivery, over both blob stores.
struct FileRoutesTests {
    struct Answer {
        let status: HTTPResponse.Status
        let headers: HTTPFields
        let body: [UInt8]
        /// A refusal (problem+json).
        var problem: ProblemDetails? { try? JSONCoding.decoder.decode(ProblemDetails.self, from: Data(body)) }
        /// The file object, as the API writes it.
        var file: FileObject? { try? JSONCoding.decoder.decode(FileObject.self, from: Data(body)) }
    }

    static func bytes(_ count: Int, seed: Int = 1) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: ($0 &* 31 &+ seed &* 17) ^ ($0 >> 8)) }
    }

    /// A PNG signature followed by filler: enough for the type check.
    static let png = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + bytes(3_000)

    func send(
        _ client: any TestClientProtocol, _ method: HTTPRequest.Method, _ uri: String, token: String? = nil,
        headers extra: [HTTPField.Name: String] = [:], body: [UInt8]? = nil
    ) async throws -> Answer {
        var headers = HTTPFields()
        if let token { headers[.authorization] = "Bearer \(token)" }
        for (name, value) in extra { headers[name] = value }
        return try await client.execute(
            uri: uri, method: method, headers: headers, body: body.map { ByteBuffer(bytes: $0) }
        ) { response in
            Answer(status: response.status, headers: response.headers, body: Array(response.body.readableBytesView))
        }
    }

    func upload(
        _ client: any TestClientProtocol, token: String, _ content: [UInt8], type: String = "application/octet-stream",
        query: String = "name=data.bin"
    ) async throws -> Answer {
        try await send(client, .post, "/v1/files?\(query)", token: token, headers: [.contentType: type], body: content)
    }

    static func multipart(boundary: String, fileName: String, type: String, content: [UInt8], protected: String?)
        -> [UInt8]
    {
        var body = Array("--\(boundary)\r\n".utf8)
        if let protected {
            body += Array(
                "Content-Disposition: form-data; name=\"protected\"\r\n\r\n\(protected)\r\n--\(boundary)\r\n".utf8)
        }
        body += Array(
            "Content-Disposition: form-data; name=\"file\"; filename=\"\(fileName)\"\r\nContent-Type: \(type)\r\n\r\n"
                .utf8)
        body += content
        body += Array("\r\n--\(boundary)--\r\n".utf8)
        return body
    }

    @Test(arguments: APIHarness.Store.allCases)
    func aRawUploadIsStoredWithItsChecksumAndServedWithRanges(_ store: APIHarness.Store) async throws {
        try await APIHarness.make(store: store).run { client in
            let user = try await client.signUp()
            let content = Self.bytes(200_000)
            let created = try await upload(client, token: token(user), content)
            #expect(created.status == .created)
            let file = try #require(created.file)
            let id = file.id
            let hex = SHA256Hex.of(content)
            #expect(file.checksum == "sha256:\(hex)")
            #expect(file.size == 200_000)
            #expect(file.name == "data.bin")
            #expect(file.extension == "bin")
            #expect(file.protected == true)
            #expect(file.url.contains("signature="))
            #expect(file.thumbnails.small == nil && file.thumbnails.large == nil)
            #expect(file.uploadedById == userID(user))

            let path = "/v1/files/\(id)/content"
            let whole = try await send(client, .get, path, token: token(user))
            #expect(whole.status == .ok)
            #expect(whole.body == content)
            #expect(whole.headers[.contentLength] == "200000")
            #expect(whole.headers[.acceptRanges] == "bytes")
            #expect(whole.headers[.eTag] == "\"\(hex)\"")
            #expect(whole.headers[.lastModified] != nil)
            #expect(whole.headers[HTTPField.Name("X-Content-Type-Options")!] == "nosniff")
            #expect(whole.headers[.contentDisposition]?.hasPrefix("attachment;") == true)

            let cases: [(String, Range<Int>)] = [
                ("bytes=0-99", 0..<100), ("bytes=1000-", 1000..<200_000), ("bytes=-500", 199_500..<200_000),
                ("bytes=70000-70000", 70_000..<70_001), ("bytes=199990-300000", 199_990..<200_000),
            ]
            for (range, expected) in cases {
                let part = try await send(client, .get, path, token: token(user), headers: [.range: range])
                #expect(part.status == .partialContent, "\(range)")
                #expect(part.body == Array(content[expected]), "\(range)")
                #expect(
                    part.headers[.contentRange]
                        == "bytes \(expected.lowerBound)-\(expected.upperBound - 1)/200000", "\(range)")
                #expect(part.headers[.contentLength] == "\(expected.count)", "\(range)")
            }

            let beyond = try await send(client, .get, path, token: token(user), headers: [.range: "bytes=200000-"])
            #expect(beyond.status == .rangeNotSatisfiable)
            #expect(beyond.headers[.contentRange] == "bytes */200000")

            let two = try await send(client, .get, path, token: token(user), headers: [.range: "bytes=0-9,100-109"])
            #expect(two.status == .partialContent)
            let type = try #require(two.headers[.contentType])
            #expect(type.hasPrefix("multipart/byteranges; boundary="))
            let boundary = String(type.split(separator: "=").last ?? "")
            let text = String(decoding: two.body, as: UTF8.self)
            #expect(
                text.contains(
                    "--\(boundary)\r\nContent-Type: application/octet-stream\r\nContent-Range: bytes 0-9/200000"))
            #expect(text.contains("Content-Range: bytes 100-109/200000"))
            #expect(text.hasSuffix("\r\n--\(boundary)--\r\n"))
            #expect(two.headers[.contentLength] == "\(two.body.count)")
            #expect(
                Self.contains(two.body, Array(content[0..<10])) && Self.contains(two.body, Array(content[100..<110])))
        }
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count else { return false }
        return (0...(haystack.count - needle.count)).contains { Array(haystack[$0..<$0 + needle.count]) == needle }
    }

    @Test func conditionalRequestsAnswer304AndIfRangeFallsBackToTheWholeFile() async throws {
        try await APIHarness.make().run { client in
            let user = try await client.signUp()
            let content = Self.bytes(1_000)
            let id = try #require(try await upload(client, token: token(user), content).file?.id)
            let path = "/v1/files/\(id)/content"
            let first = try await send(client, .get, path, token: token(user))
            let tag = try #require(first.headers[.eTag])
            let modified = try #require(first.headers[.lastModified])

            let cached = try await send(client, .get, path, token: token(user), headers: [.ifNoneMatch: tag])
            #expect(cached.status == .notModified)
            #expect(cached.body.isEmpty)
            #expect(cached.headers[.eTag] == tag)
            let byDate = try await send(client, .get, path, token: token(user), headers: [.ifModifiedSince: modified])
            #expect(byDate.status == .notModified)
            let changed = try await send(client, .get, path, token: token(user), headers: [.ifNoneMatch: "\"stale\""])
            #expect(changed.status == .ok)

            let sameTag = try await send(
                client, .get, path, token: token(user), headers: [.range: "bytes=0-9", .ifRange: tag])
            #expect(sameTag.status == .partialContent)
            #expect(sameTag.body == Array(content[0..<10]))
            let otherTag = try await send(
                client, .get, path, token: token(user), headers: [.range: "bytes=0-9", .ifRange: "\"stale\""])
            #expect(otherTag.status == .ok)
            #expect(otherTag.body == content)
            let sameDate = try await send(
                client, .get, path, token: token(user), headers: [.range: "bytes=0-9", .ifRange: modified])
            #expect(sameDate.status == .partialContent)
        }
    }

    @Test(arguments: APIHarness.Store.allCases)
    func anUploadOverTheLimitIs413AndStoresNothing(_ store: APIHarness.Store) async throws {
        let harness = try await APIHarness.make(store: store, uploadLimit: 50_000)
        try await harness.run { client in
            let user = try await client.signUp()
            let tooBig = try await upload(client, token: token(user), Self.bytes(50_001))
            #expect(tooBig.status == .contentTooLarge)
            #expect(tooBig.problem?.code == "too-large")
            let exact = try await upload(client, token: token(user), Self.bytes(50_000))
            #expect(exact.status == .created)

            let database = harness.database.client
            #expect(try await database.query("SELECT count(*) FROM cloud.file", logger: .quiet).single(Int.self) == 1)
            if store == .postgres {
                let blobs = try await database.query("SELECT count(*) FROM cloud.blob", logger: .quiet).single(Int.self)
                #expect(blobs == 1)
            }
            if let root = (harness.blobStore as? FilesystemBlobStore)?.root {
                #expect(try FileManager.default.contentsOfDirectory(atPath: "\(root)/incoming").isEmpty)
            }
        }
    }

    @Test func aMultipartUploadKeepsOnlyASafeNameAndAPublicFileNeedsNothing() async throws {
        try await APIHarness.make().run { client in
            let user = try await client.signUp()
            let boundary = "parley-test-boundary"
            let body = Self.multipart(
                boundary: boundary, fileName: "../../etc/\u{7}pass\u{200B}wd.PNG", type: "image/png",
                content: Self.png, protected: "false")
            let created = try await send(
                client, .post, "/v1/files", token: token(user),
                headers: [.contentType: "multipart/form-data; boundary=\(boundary)"], body: body)
            #expect(created.status == .created)
            let file = try #require(created.file)
            #expect(file.name == "passwd.PNG")
            #expect(file.extension == "png")
            #expect(file.mimeType == "image/png")
            #expect(file.protected == false)
            #expect(file.checksum == "sha256:\(SHA256Hex.of(Self.png))")
            let url = file.url
            #expect(url.hasPrefix("/v1/public/files/"))

            let open = try await send(client, .get, url)
            #expect(open.status == .ok)
            #expect(open.body == Self.png)
            #expect(open.headers[.contentDisposition]?.hasPrefix("inline;") == true)
            let partial = try await send(client, .get, url, headers: [.range: "bytes=-8"])
            #expect(partial.body == Array(Self.png.suffix(8)))
            let wrongName = try await send(client, .get, url.replacingOccurrences(of: "passwd", with: "other"))
            #expect(wrongName.status == .notFound)
        }
    }

    @Test(arguments: APIHarness.Store.allCases)
    func aRefusedMultipartUploadLeavesNothingBehind(_ store: APIHarness.Store) async throws {
        let harness = try await APIHarness.make(store: store)
        try await harness.run { client in
            let user = try await client.signUp()
            let boundary = "b0undary"
            let type = [HTTPField.Name.contentType: "multipart/form-data; boundary=\(boundary)"]
            let badFlag = Self.multipart(
                boundary: boundary, fileName: "a.bin", type: "application/octet-stream", content: Self.bytes(5_000),
                protected: "maybe")
            let refused = try await send(client, .post, "/v1/files", token: token(user), headers: type, body: badFlag)
            #expect(refused.status == .badRequest)
            #expect(refused.problem?.field == "protected")

            // Endless headers before any file are cut off, not collected.
            let endless =
                Array("--\(boundary)\r\nX-Padding: ".utf8) + Array(repeating: UInt8(ascii: "a"), count: 100_000)
            let cut = try await send(client, .post, "/v1/files", token: token(user), headers: type, body: endless)
            #expect(cut.status == .badRequest)

            let database = harness.database.client
            #expect(try await database.query("SELECT count(*) FROM cloud.file", logger: .quiet).single(Int.self) == 0)
            if store == .postgres {
                let blobs = try await database.query("SELECT count(*) FROM cloud.blob", logger: .quiet).single(Int.self)
                #expect(blobs == 0)
            }
            if let root = (harness.blobStore as? FilesystemBlobStore)?.root {
                let left = FileManager.default.enumerator(atPath: root)?.allObjects.compactMap { $0 as? String } ?? []
                #expect(left.filter { !$0.hasPrefix("incoming") }.isEmpty, "\(left)")
                #expect(try FileManager.default.contentsOfDirectory(atPath: "\(root)/incoming").isEmpty)
            }
        }
    }

    @Test func anImageWhoseMediaJobCannotBeQueuedIs503AndStoresNothing() async throws {
        var unreachable = try TestServices.shared().redis()
        unreachable.port = 1
        let queue = RedisJobQueue(name: "media", pool: RedisConnectionPool(configuration: unreachable, logger: .quiet))
        let harness = try await APIHarness.make(mediaJobs: queue)
        try await harness.run { client in
            let user = try await client.signUp()
            let refused = try await upload(client, token: token(user), Self.png, type: "image/png")
            #expect(refused.status == .serviceUnavailable)
            #expect(refused.problem?.code == "unavailable")
            let plain = try await upload(client, token: token(user), Self.bytes(100))
            #expect(plain.status == .created, "a file that needs no media job does not wait for Redis")

            let database = harness.database.client
            #expect(try await database.query("SELECT count(*) FROM cloud.file", logger: .quiet).single(Int.self) == 1)
            let root = try #require((harness.blobStore as? FilesystemBlobStore)?.root)
            let left = FileManager.default.enumerator(atPath: root)?.allObjects.compactMap { $0 as? String } ?? []
            #expect(left.filter { !$0.hasPrefix("incoming") && $0.contains("/") }.count == 1, "\(left)")
        }
    }

    @Test func contentThatContradictsItsTypeIsRefused() async throws {
        try await APIHarness.make().run { client in
            let user = try await client.signUp()
            let fake = try await upload(
                client, token: token(user), Array("<html>not a png</html>".utf8), type: "image/png")
            #expect(fake.status == .badRequest)
            #expect(fake.problem?.field == "file")
            let sniffed = try await upload(client, token: token(user), Self.png, query: "name=x")
            #expect(sniffed.file?.mimeType == "image/png")
            let html = try await upload(client, token: token(user), Array("<html></html>".utf8), type: "text/html")
            let id = try #require(html.file?.id)
            let served = try await send(client, .get, "/v1/files/\(id)/content", token: token(user))
            #expect(served.headers[.contentDisposition]?.hasPrefix("attachment;") == true)
            #expect(served.headers[HTTPField.Name("X-Content-Type-Options")!] == "nosniff")
        }
    }

    @Test func accessIsTheUploaderOrAReaderOfARoomWhereAMessageCarriesTheFile() async throws {
        try await APIHarness.make().run { client in
            let (roomID, users) = try await client.roomOfThree()
            let outsider = try await client.signUp()
            let created = try await upload(
                client, token: token(users[0]), Self.png, type: "image/png", query: "name=a.png")
            let id = try #require(created.file?.id)
            let path = "/v1/files/\(id)/content"
            // Before any message carries it, only the uploader sees it.
            #expect(try await send(client, .get, "/v1/files/\(id)", token: token(users[0])).status == .ok)
            #expect(try await send(client, .get, "/v1/files/\(id)", token: token(users[1])).status == .notFound)
            #expect(try await send(client, .get, path, token: token(users[1])).status == .notFound)

            // Someone else's upload cannot be attached.
            let stolen = try await client.json(
                .post, "/v1/rooms/\(roomID)/messages", token: token(users[1]),
                body: #"{"content":"mine","uid":"f-0","fileId":\#(id)}"#)
            #expect(stolen.status == .badRequest)
            #expect(stolen.problem?.code == "file-unavailable")

            let sent = try await client.decoded(
                Message.self, .post, "/v1/rooms/\(roomID)/messages", token: token(users[0]),
                body: #"{"content":"look","uid":"f-1","fileId":\#(id)}"#)
            let attached = try #require(sent.file)
            #expect(attached.id == id && sent.fileId == id)
            #expect(attached.mimeType == "image/png")

            #expect(try await send(client, .get, "/v1/files/\(id)", token: token(users[2])).status == .ok)
            #expect(try await send(client, .get, path, token: token(users[2])).body == Self.png)
            #expect(try await send(client, .get, path, token: token(outsider)).status == .notFound)
            #expect(try await send(client, .get, path).status == .unauthorized)

            // Players send no headers: a query token, or the signed URL of the file object.
            #expect(try await send(client, .get, "\(path)?access_token=\(token(users[1]))").body == Self.png)
            #expect(try await send(client, .get, "\(path)?access_token=\(token(outsider))").status == .notFound)
            let signed = attached.url
            #expect(try await send(client, .get, signed).body == Self.png)
            let tampered = signed.replacingOccurrences(of: "expires=", with: "expires=9")
            #expect(try await send(client, .get, tampered).status == .forbidden)
            let otherFile = signed.replacingOccurrences(of: "/files/\(id)/", with: "/files/\(id + 1)/")
            #expect(try await send(client, .get, otherFile).status == .forbidden)

            // History and the room's file list carry the file object.
            let history = try await client.history(roomID, as: users[2])
            #expect(history.messages.last?.file?.id == id)
            let listed = try await client.decoded(
                ListPage<FileObject>.self, .get, "/v1/rooms/\(roomID)/files", token: token(users[1]))
            #expect(listed.items.map(\.id) == [id])
            #expect(
                try await client.json(.get, "/v1/rooms/\(roomID)/files", token: token(outsider)).status == .notFound)
        }
    }

    @Test func thumbnailsAreServedOnceTheMediaWorkerMadeThem() async throws {
        let harness = try await APIHarness.make()
        try await harness.run { client in
            let user = try await client.signUp()
            let directory = TestScratch.path("parley-thumbs")
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let picture = try await Subprocess.run(
                "/usr/bin/ffmpeg",
                [
                    "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=640x480", "-frames:v", "1",
                    "-f", "image2", "-update", "1", "\(directory)/p.jpg",
                ])
            #expect(picture.status == 0)
            let jpeg = try [UInt8](Data(contentsOf: URL(fileURLWithPath: "\(directory)/p.jpg")))
            let created = try await upload(client, token: token(user), jpeg, type: "image/jpeg", query: "name=p.jpg")
            let id = try #require(created.file?.id)
            let path = "/v1/files/\(id)/thumbnails/small"
            #expect(try await send(client, .get, path, token: token(user)).status == .notFound)

            let files = PostgresFileRepository(database: harness.database, logger: .quiet)
            try await MediaHandler(
                files: files, store: harness.blobStore, processor: ToolMediaProcessor(), workRoot: directory,
                logger: .quiet
            ).handle(MediaJob(fileID: Int64(id)).json())

            let object = try #require(try await send(client, .get, "/v1/files/\(id)", token: token(user)).file)
            #expect(object.width == 640 && object.height == 480)
            let signed = try #require(object.thumbnails.small)
            let thumbnail = try await send(client, .get, signed)
            #expect(thumbnail.status == .ok)
            #expect(thumbnail.headers[.contentType] == "image/jpeg")
            #expect(Array(thumbnail.body.prefix(3)) == [0xFF, 0xD8, 0xFF])
            #expect(try await send(client, .get, path, token: token(user)).body == thumbnail.body)
            let head = try await send(client, .head, signed, headers: [.range: "bytes=0-9"])
            // HEAD ignores Range (RFC 9110 §14.2): the whole representation's headers.
            #expect(head.status == .ok && head.body.isEmpty)
            #expect(head.headers[.contentLength] == "\(thumbnail.body.count)")
            // A signature for the small thumbnail opens nothing else.
            let large = signed.replacingOccurrences(of: "/small?", with: "/large?")
            #expect(try await send(client, .get, large).status == .forbidden)
        }
    }

    @Test func anExpiredSignatureDoesNotOpenTheFile() async throws {
        try await APIHarness.make().run { client in
            let user = try await client.signUp()
            let id = try #require(try await upload(client, token: token(user), Self.bytes(10)).file?.id)
            let path = "/v1/files/\(id)/content"
            let expired = APIHarness.fileLinks.signed(
                path, viewer: userID(user), now: Date().addingTimeInterval(-200_000))
            #expect(try await send(client, .get, expired).status == .forbidden)
            let valid = APIHarness.fileLinks.signed(path, viewer: userID(user))
            #expect(try await send(client, .get, valid).status == .ok)
        }
    }
}

enum SHA256Hex {
    static func of(_ bytes: [UInt8]) -> String {
        SHA256.hash(data: bytes).hexString
    }
}
