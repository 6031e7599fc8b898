import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// An MQTT 5 broker that accepts one client's CONNECT and then acknowledges nothing: for the
/// client's acknowledgement timeout. Its socket calls block, on a thread of its own.
public final class MuteBroker: Sendable {
    private let listener: SilentListener
    public var port: Int { listener.port }

    public init() throws {
        listener = try SilentListener()
        let descriptor = listener.descriptor
        let thread = Thread {
            let connection = accept(descriptor, nil, nil)
            guard connection >= 0 else { return }
            defer { Glibc.close(connection) }
            var buffer = [UInt8](repeating: 0, count: 4096)
            guard read(connection, &buffer, buffer.count) > 0 else { return }
            // CONNACK: no session present, success, no properties.
            let connack: [UInt8] = [0x20, 0x03, 0x00, 0x00, 0x00]
            guard write(connection, connack, connack.count) == connack.count else { return }
            while read(connection, &buffer, buffer.count) > 0 {}
        }
        thread.name = "parley-test-mute-broker"
        thread.start()
    }

    /// Stops listening; a connected client is disconnected when it closes its side.
    public func close() { listener.close() }
}
