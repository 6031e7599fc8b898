import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import NIOEmbedded
import ParleyTestSupport
import Testing

@testable import ParleyAPI

/// Parley's own HTTP/2 stream path (``HTTP2StreamResponder``) as stock clients use it: small
/// and large request bodies, a slow reader, a request that stops arriving, and what every
/// answer carries.
struct HTTP2StreamTests {
    /// Counts a request's body as it streams in; `delay` per part makes a slow reader.
    static func countingRoute(delay: Duration = .zero) -> (Router<ParleyRequestContext>) -> Void {
        { router in
            router.post("/test/count") { request, _ -> String in
                var bytes = 0
                for try await part in request.body {
                    bytes += part.readableBytes
                    if delay > .zero { try await Task.sleep(for: delay) }
                }
                return "\(bytes)"
            }
        }
    }

    /// A file of `size` bytes for curl to send.
    func upload(_ size: Int) throws -> String {
        let path = NSTemporaryDirectory() + "parley-h2-\(UUID().uuidString)"
        try Data(repeating: 0x61, count: size).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func bodiesBelowAndAboveWhatAStreamGathersReachTheirRouteWhole() async throws {
        let server = try await LiveServer(extend: Self.countingRoute())
        let port = server.port(.cleartext)
        for size in [0, 100, HTTP2StreamResponder.gatherLimit, HTTP2StreamResponder.gatherLimit + 1, 3_000_000] {
            let file = try upload(size)
            defer { try? FileManager.default.removeItem(atPath: file) }
            let result = try await curl([
                "--http2-prior-knowledge", "--data-binary", "@\(file)", "http://127.0.0.1:\(port)/test/count",
            ])
            #expect(result.httpVersion == "2" && result.status == 200 && result.body == "\(size)", "\(size) bytes")
        }
        try await server.stop()
    }

    /// A route reading more slowly than the client sends holds the stream's reads (flow
    /// control) and still gets every byte: a gate that never reopened would hang this upload.
    @Test func aSlowReaderGetsAStreamedUploadWhole() async throws {
        let server = try await LiveServer(extend: Self.countingRoute(delay: .milliseconds(2)))
        let file = try upload(4_000_000)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let result = try await curl([
            "-k", "--http2", "--data-binary", "@\(file)", "https://localhost:\(server.port(.tls))/test/count",
        ])
        #expect(result.httpVersion == "2" && result.status == 200 && result.body == "4000000")
        try await server.stop()
    }

    /// The start of a raw HTTP/2 client in Python, for what curl cannot show: `frame` and a
    /// request's `head` (literal fields), `preface` (the connection preface and empty SETTINGS),
    /// `s`, a socket to the cleartext port in `argv[1]` that gives up after 10 s, and `frames()`,
    /// each frame it receives as (length, type, flags, stream).
    static let rawClient = #"""
        import socket, struct, sys, time
        def frame(kind, flags, stream, payload):
            return struct.pack('>I', len(payload))[1:] + bytes([kind, flags]) + struct.pack('>I', stream) + payload
        def field(name, value):
            return bytes([0, len(name)]) + name.encode() + bytes([len(value)]) + value.encode()
        def head(method, path):
            return field(':method', method) + field(':scheme', 'http') + field(':path', path) + field(':authority', 'x')
        preface = b'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n' + frame(4, 0, 0, b'')
        s = socket.create_connection(('127.0.0.1', int(sys.argv[1])))
        s.settimeout(10)
        def frames():
            pending = b''
            while True:
                data = s.recv(65536)
                if not data: sys.exit('closed')
                pending += data
                while len(pending) >= 9 and len(pending) >= 9 + int.from_bytes(pending[:3], 'big'):
                    size = int.from_bytes(pending[:3], 'big')
                    yield size, pending[3], pending[4], int.from_bytes(pending[5:9], 'big') & 0x7fffffff
                    pending = pending[9 + size:]

        """#

    /// A request whose body stops arriving is reset after the idle timeout; its connection's
    /// next stream is answered. (A raw client: curl blocked on its input sees no reset.)
    @Test func aRequestThatStopsArrivingIsResetAfterTheIdleTimeout() async throws {
        let server = try await LiveServer(idleTimeout: .seconds(1), extend: Self.countingRoute())
        let client =
            Self.rawClient + #"""
                s.sendall(preface + frame(1, 4, 1, head('POST', '/test/count')) + frame(0, 0, 1, b'some of the body'))
                start = time.time()
                for size, kind, flags, stream in frames():
                    if kind == 3 and stream == 1:
                        print(int((time.time() - start) * 1000))
                        s.sendall(frame(1, 5, 3, head('GET', '/health/live')))
                    if kind == 1 and stream == 3:
                        print('answered'); sys.exit(0)
                """#
        let answer = try await Subprocess.run(
            "/usr/bin/python3", ["-c", client, "\(server.port(.cleartext))"], timeLimit: .seconds(20))
        let lines = answer.standardOutput.split(separator: "\n")
        let resetAfter = Int(lines.first ?? "") ?? -1
        #expect(resetAfter >= 900 && resetAfter < 5_000, "reset after \(resetAfter) ms: \(answer.standardError)")
        #expect(lines.last == "answered")
        try await server.stop()
    }

    /// An answer ends its stream on its last frame: a body's DATA frame, or the HEADERS of an
    /// answer without one (HEAD), never an empty DATA frame after them. A client on NIO sends a
    /// WINDOW_UPDATE for a stream left open after its body (<doc:LeanHTTP2Streams>).
    @Test func anAnswerEndsItsStreamOnItsLastFrame() async throws {
        let server = try await LiveServer()
        let client =
            Self.rawClient + #"""
                s.sendall(preface + frame(1, 5, 1, head('GET', '/health/live')) + frame(1, 5, 3, head('HEAD', '/health/live')))
                ended = set()
                for size, kind, flags, stream in frames():
                    if stream in (1, 3):
                        print(stream, {0: 'DATA', 1: 'HEADERS'}.get(kind, kind), size if kind == 0 else '-', 'end' if flags & 1 else '')
                        if flags & 1: ended.add(stream)
                    if ended == {1, 3}: break
                """#
        let answer = try await Subprocess.run(
            "/usr/bin/python3", ["-c", client, "\(server.port(.cleartext))"], timeLimit: .seconds(20))
        let frames = answer.standardOutput.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(frames.filter { $0.hasPrefix("1 ") } == ["1 HEADERS -", "1 DATA 17 end"], "\(answer.standardError)")
        #expect(frames.filter { $0.hasPrefix("3 ") } == ["3 HEADERS - end"], "\(answer.standardError)")
        try await server.stop()
    }

    /// A connection error (here more CONTINUATION frames than NIO allows in a row) ends the
    /// connection after its GOAWAY, as RFC 9113 asks: left open, every byte the client went on
    /// sending gathered unparsed in `serve`'s memory. Other connections are still served.
    @Test func aConnectionErrorClosesTheConnectionAfterItsGoAway() async throws {
        let server = try await LiveServer()
        let port = server.port(.cleartext)
        let client =
            Self.rawClient + #"""
                try:
                    s.sendall(preface + frame(1, 1, 1, head('GET', '/health/live')))
                    for n in range(20):
                        s.sendall(frame(9, 0, 1, field('x-flood-%d' % n, 'a' * 100)))
                except ConnectionError:
                    pass
                try:
                    for size, kind, flags, stream in frames():
                        if kind == 7: print('GOAWAY')
                except TimeoutError:
                    print('still open')
                except (SystemExit, ConnectionError):
                    print('closed')
                """#
        let answer = try await Subprocess.run("/usr/bin/python3", ["-c", client, "\(port)"], timeLimit: .seconds(20))
        let lines = answer.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines == ["GOAWAY", "closed"], "\(answer.standardError)")
        let result = try await curl(["--http2-prior-knowledge", "http://127.0.0.1:\(port)/health/live"])
        #expect(result.httpVersion == "2" && result.status == 200)
        try await server.stop()
    }

    /// Over TLS, a connection `serve` ends is gone a second after its close_notify even when the
    /// client never answers it: NIOSSL's wait (5 s by default) kept every such connection, its
    /// buffers and pipeline, in memory that long, and a flood of them held hundreds of MiB.
    @Test func aTLSConnectionServeEndsIsClosedASecondAfterItsCloseNotify() async throws {
        let server = try await LiveServer()
        let client =
            Self.rawClient + #"""
                import os, select, ssl
                tls = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
                tls.check_hostname, tls.verify_mode = False, ssl.CERT_NONE
                tls.set_alpn_protocols(['h2'])
                s = tls.wrap_socket(s, server_hostname='localhost')
                # One CONTINUATION frame more than NIO allows in a row, and then nothing: a byte
                # more after serve's close_notify would end the wait at once.
                flood = b''.join(frame(9, 0, 1, field('x-flood-%d' % n, 'a' * 100)) for n in range(6))
                s.sendall(preface + frame(1, 1, 1, head('GET', '/health/live')) + flood)
                for size, kind, flags, stream in frames():
                    if kind == 7:
                        print('GOAWAY')
                        break
                start = time.time()
                try:
                    while s.recv(65536): pass
                    print('close_notify')
                except (ssl.SSLError, ConnectionError):
                    print('no close_notify')
                # Not answered: the TCP connection ends when serve stops waiting.
                if select.select([s.fileno()], [], [], 10)[0]:
                    try:
                        os.read(s.fileno(), 1)
                    except ConnectionError:
                        pass
                waited = time.time() - start
                print('closed within 3 s' if waited < 3 else 'closed after %.1f s' % waited)
                """#
        let answer = try await Subprocess.run(
            "/usr/bin/python3", ["-c", client, "\(server.port(.tls))"], timeLimit: .seconds(30))
        let lines = answer.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines == ["GOAWAY", "close_notify", "closed within 3 s"], "\(answer.standardError)")
        try await server.stop()
    }

    /// Only a GOAWAY for an error ends the connection: not a graceful shutdown's (NO_ERROR), nor
    /// any other frame.
    @Test func onlyAGoAwayForAnErrorEndsTheConnection() {
        func frame(type: UInt8, payload: [UInt8]) -> ByteBuffer {
            ByteBuffer(bytes: [0, 0, UInt8(payload.count), type, 0, 0, 0, 0, 0] + payload)
        }
        let lastStream: [UInt8] = [0x7f, 0xff, 0xff, 0xff]
        #expect(CloseAfterConnectionError.isErrorGoAway(frame(type: 7, payload: lastStream + [0, 0, 0, 0xb])))
        #expect(CloseAfterConnectionError.isErrorGoAway(frame(type: 7, payload: lastStream + [0, 0, 0, 1])))
        #expect(!CloseAfterConnectionError.isErrorGoAway(frame(type: 7, payload: lastStream + [0, 0, 0, 0])))
        #expect(!CloseAfterConnectionError.isErrorGoAway(frame(type: 3, payload: [0, 0, 0, 1])))
        #expect(!CloseAfterConnectionError.isErrorGoAway(frame(type: 0, payload: lastStream + [0, 0, 0, 1])))
    }

    /// Every answer on a stream carries `Date` and `Server`, as HTTP/1.1's do.
    @Test func anHTTP2AnswerCarriesDateAndServer() async throws {
        let server = try await LiveServer()
        let result = try await Subprocess.run(
            "/usr/bin/curl",
            [
                "-sS", "-D", "-", "-o", "/dev/null", "--http2-prior-knowledge",
                "http://127.0.0.1:\(server.port(.cleartext))/health/live",
            ])
        let headers = result.standardOutput.lowercased()
        #expect(headers.hasPrefix("http/2 200"))
        #expect(headers.contains("server: parley"))
        #expect(
            headers.range(of: #"date: [a-z]{3}, \d\d [a-z]{3} \d{4} \d\d:\d\d:\d\d gmt"#, options: .regularExpression)
                != nil)
        try await server.stop()
    }

    @Test func theDateHeaderIsAnIMFFixdate() {
        #expect(HTTPDateHeader.format(784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDateHeader.format(0) == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(HTTPDateHeader.format(1_796_000_000) == "Mon, 30 Nov 2026 00:53:20 GMT")
    }

    /// An error no middleware answered is a bare 500, with the headers every answer has.
    @Test func anErrorThatEscapesTheRouterIsA500() async throws {
        struct Unanswered: Error {}
        let responder = RouterResponder(
            CallbackResponder<ParleyRequestContext> { _, _ in throw Unanswered() }, serverName: "Parley",
            logger: .quiet)
        let channel = NIOAsyncTestingChannel()
        let response = await responder.response(
            to: Request(
                head: HTTPRequest(method: .get, scheme: "https", authority: "x", path: "/"),
                body: .init(buffer: .init())),
            channel: channel)
        #expect(response.status == .internalServerError)
        #expect(response.headers[.server] == "Parley")
        #expect(response.headers[.date] != nil)
    }
}
