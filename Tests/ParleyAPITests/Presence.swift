/// The presence event's data (`user/{id}/online`, asyncapi.yaml): the mosquitto plugin writes
/// it in C (`presence.c`) and no Swift code reads or writes it, so this is the one Swift form
/// of it, for the tests that read the event.
struct Presence: Codable, Sendable {
    let online: Bool
    let lastActivity: String
}
