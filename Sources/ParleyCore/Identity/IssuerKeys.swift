import Foundation

/// Reads an issuer's key document (JWKS) from where its entry says: the port the HTTPS and
/// file readers implement.
public protocol IssuerKeyFetcher: Sendable {
    /// The document, and how long it may be kept as the source says (`Cache-Control:
    /// max-age`; nil when it says nothing).
    func fetch(_ source: TrustedIssuer.KeySource) async throws -> (document: [UInt8], maxAge: Duration?)
}

/// The trusted issuers' keys, kept between exchanges: as long as the source allows (at least
/// ``minimumAge``, at most ``maximumAge``), and read again on a key id the set does not hold
/// (a rotation), at most once per ``refreshInterval`` per issuer, so that tokens naming
/// made-up key ids cannot make Parley hammer the issuer.
///
/// Exchanges that need an issuer's keys at the same time share one read. When a read fails,
/// the keys held are used on (they were the issuer's a moment ago) and the source is not
/// asked again for ``retryAfterFailure``; with none held, the failure is thrown as
/// ``IssuerKeysUnavailable``.
public actor IssuerKeys {
    public static let minimumAge: Duration = .seconds(60)
    public static let maximumAge: Duration = .seconds(86_400)
    public static let refreshInterval: Duration = .seconds(60)
    /// How long a failed read is answered from memory before the source is asked again.
    public static let retryAfterFailure: Duration = .seconds(5)

    private struct Held: Sendable {
        let keys: JSONWebKeySet
        let fetchedAt: ContinuousClock.Instant
        let keepFor: Duration
    }

    private struct Failure {
        let at: ContinuousClock.Instant
        let error: IssuerKeysUnavailable
    }

    private let fetcher: any IssuerKeyFetcher
    private let now: @Sendable () -> ContinuousClock.Instant
    private var held: [String: Held] = [:]
    /// The read under way per issuer, which every caller meanwhile awaits.
    private var reading: [String: Task<Held, any Error>] = [:]
    private var failed: [String: Failure] = [:]

    public init(
        fetcher: any IssuerKeyFetcher, now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }
    ) {
        self.fetcher = fetcher
        self.now = now
    }

    /// The issuer's keys; with `unknownKey`, read again unless they were read within
    /// ``refreshInterval``.
    public func keys(for issuer: TrustedIssuer, unknownKey: Bool = false) async throws -> JSONWebKeySet {
        let at = now()
        let recentFailure = failed[issuer.issuer].flatMap { $0.at.duration(to: at) < Self.retryAfterFailure ? $0 : nil }
        if let current = held[issuer.issuer] {
            let age = current.fetchedAt.duration(to: at)
            let fresh = age < current.keepFor
            if fresh && (!unknownKey || age < Self.refreshInterval) { return current.keys }
            if recentFailure != nil { return current.keys }
        } else if let recentFailure {
            throw recentFailure.error
        }
        do {
            return try await read(issuer).keys
        } catch let error as IssuerKeysUnavailable {
            // The keys of a moment ago still check the tokens they signed.
            guard let current = held[issuer.issuer] else { throw error }
            return current.keys
        }
    }

    /// One read of the issuer's keys, shared by whoever asks while it runs.
    private func read(_ issuer: TrustedIssuer) async throws -> Held {
        if let running = reading[issuer.issuer] { return try await running.value }
        let fetcher = self.fetcher
        let startedAt = now()
        let task = Task { try await Self.fetch(issuer, with: fetcher, at: startedAt) }
        reading[issuer.issuer] = task
        defer { reading[issuer.issuer] = nil }
        do {
            let read = try await task.value
            held[issuer.issuer] = read
            failed[issuer.issuer] = nil
            return read
        } catch let error as IssuerKeysUnavailable {
            failed[issuer.issuer] = Failure(at: now(), error: error)
            throw error
        }
    }

    private static func fetch(
        _ issuer: TrustedIssuer, with fetcher: any IssuerKeyFetcher, at: ContinuousClock.Instant
    ) async throws -> Held {
        let document: [UInt8]
        let maxAge: Duration?
        do {
            (document, maxAge) = try await fetcher.fetch(issuer.keys)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw IssuerKeysUnavailable(issuer: issuer.issuer, reason: String(describing: error))
        }
        let keys: JSONWebKeySet
        do {
            keys = try JSONWebKeySet(json: document)
        } catch {
            throw IssuerKeysUnavailable(issuer: issuer.issuer, reason: "the document is not a JWKS ({\"keys\": [...]})")
        }
        let keepFor = min(max(maxAge ?? minimumAge, minimumAge), maximumAge)
        return Held(keys: keys, fetchedAt: at, keepFor: keepFor)
    }
}

/// An issuer's keys could not be read (its server is down, answered an error or something
/// that is no key document) and none are held: the token may well be valid, so the exchange
/// answers 503 `unavailable` rather than 401. See <doc:TokenExchange>.
public struct IssuerKeysUnavailable: DependencyError, CustomStringConvertible, Equatable {
    public let issuer: String
    /// For the log: what went wrong with the read.
    public let reason: String

    public init(issuer: String, reason: String) {
        self.issuer = issuer
        self.reason = reason
    }

    public var isUnavailability: Bool { true }
    public var description: String { "the keys of issuer \(issuer) cannot be read: \(reason)" }
}
