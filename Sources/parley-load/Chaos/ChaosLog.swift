import Foundation
import Synchronization

/// The chaos load's record, as JSON lines a verifier reads afterwards: `sent.jsonl` (every
/// acknowledged send), `received.jsonl` (every delivery of one of its messages on a room
/// topic), `errors.jsonl` (failed attempts), `reads.jsonl` (every read of history or the
/// room list, with its status: 0 when no answer came).
///
/// Lines are written on a serial queue of their own, not on the concurrency pool's threads;
/// each is written whole as it happens, so a verifier can also read a run cut short.
final class ChaosLog: Sendable {
    private let queue = DispatchQueue(label: "parley-load.chaos-log")
    private let files: [String: FileHandle]
    private let counts = Mutex<[String: Int]>([:])

    init(directory: String) throws {
        var files: [String: FileHandle] = [:]
        for name in ["sent", "received", "errors", "reads"] {
            let path = "\(directory)/\(name).jsonl"
            guard FileManager.default.createFile(atPath: path, contents: nil),
                let handle = FileHandle(forWritingAtPath: path)
            else { throw LoadError("cannot write \(path)") }
            files[name] = handle
        }
        self.files = files
    }

    static func now() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    func sent(room: Int64, uid: String, sender: Int64, via: String) {
        write("sent", ["room": room, "uid": uid, "sender": sender, "via": via, "t": Self.now()])
    }

    /// The most frequent line (every delivery to every member), written without
    /// JSONSerialization: at the full run's rate the generator shares two cores with the
    /// stack, and its own CPU is what decides whether it offers the rate it says.
    func received(room: Int64, uid: String, receiver: Int64, hash: String, seq: Int64?) {
        let seq = seq.map(String.init) ?? "null"
        let line =
            #"{"hash":\#(Self.quoted(hash)),"receiver":\#(receiver),"room":\#(room),"seq":\#(seq),"#
            + #""t":\#(Self.now()),"uid":\#(Self.quoted(uid))}"# + "\n"
        write("received", Data(line.utf8))
    }

    /// A JSON string: quotes, backslashes and control characters escaped.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    func error(uid: String, via: String, _ error: String) {
        write("errors", ["uid": uid, "via": via, "error": String(error.prefix(300)), "t": Self.now()])
    }

    func read(_ what: String, status: Int) {
        write("reads", ["what": what, "status": status, "t": Self.now()])
    }

    func count(_ name: String) -> Int { counts.withLock { $0[name] ?? 0 } }

    /// Waits until every line handed over so far is written.
    func flush() { queue.sync {} }

    private func write(_ name: String, _ fields: [String: Any]) {
        guard var line = try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys]) else { return }
        line.append(0x0A)
        write(name, line)
    }

    private func write(_ name: String, _ line: Data) {
        guard let handle = files[name] else { return }
        counts.withLock { $0[name, default: 0] += 1 }
        queue.async { handle.write(line) }
    }
}
