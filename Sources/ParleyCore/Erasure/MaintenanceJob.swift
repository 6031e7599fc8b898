import Foundation

/// Work for the maintenance queue, drained by the `maintenance` role: erasing a deleted account or
/// room, and building a data export. Every job may run more than once (at-least-once
/// delivery, a killed worker's job claimed again): each step finds what is left to do.
public struct MaintenanceJob: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable {
        case eraseAccount = "erase-account"
        case eraseRoom = "erase-room"
        case export
    }

    public let kind: Kind
    /// The account (`eraseAccount`, `export`) or the room (`eraseRoom`).
    public let id: Int64

    public init(_ kind: Kind, id: Int64) {
        self.kind = kind
        self.id = id
    }

    public func json() -> String {
        String(decoding: (try? JSONCoding.encoder.encode(self)) ?? Data(), as: UTF8.self)
    }
}
