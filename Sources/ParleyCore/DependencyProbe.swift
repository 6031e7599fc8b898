/// A check that one external dependency (a database, a queue, a broker) answers now.
///
/// Readiness runs every probe with a timeout; a probe throws when its dependency is unusable.
public protocol DependencyProbe: Sendable {
    /// The dependency's name as reported by readiness (`postgres`, `redis`, `mqtt`).
    var name: String { get }
    func probe() async throws
}
