/// An error of an adapter that may mean its dependency (PostgreSQL, Redis, the broker) is
/// down or stopped answering, rather than that this one operation was refused.
///
/// The API answers an unavailability with 503 `unavailable` and `Retry-After`, so a client
/// retries the request later; anything else unexpected stays a 500. See
/// <doc:DependencyFailures>.
public protocol DependencyError: Error {
    /// The dependency could not be reached, its connection broke, or it did not answer in time.
    var isUnavailability: Bool { get }
}
