import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The terminal's input, read on a thread of its own: `readLine` blocks, and Swift
/// concurrency's few threads must not.
enum Terminal {
    /// The lines typed (or piped), until the input ends.
    static func lines() -> AsyncStream<String> {
        let (lines, input) = AsyncStream.makeStream(of: String.self)
        let reader = Thread {
            while let line = readLine() { input.yield(line) }
            input.finish()
        }
        reader.name = "parley-chat stdin"
        reader.start()
        return lines
    }

    /// Asks for the password without echoing it (before anything else runs).
    static func askPassword() -> String {
        guard let typed = getpass("Password: ") else { return "" }
        return String(cString: typed)
    }

    /// Prints a line at once, whoever prints it.
    static func say(_ line: String) {
        print(line)
        fflush(nil)  // every stream: naming stdout is not concurrency-safe
    }
}
