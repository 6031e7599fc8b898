import Logging
import ParleyCore
import ParleyIdentity
import ParleyMedia
import ParleyPostgres
import ParleyPush
import ParleyRedis
import ParleyRuntime

/// The adapters chosen by configuration, built for the graphs (``ServeGraph``,
/// ``WorkerGraph``): the settings say which and with what, these say how.
enum Adapters {
    typealias PushSenders = [PushProvider: any PushSender]

    static func blobStore(_ choice: Settings.BlobStoreChoice, database: PostgresPool) throws -> any BlobStore {
        switch choice {
        case .filesystem(let directory):
            do {
                return try FilesystemBlobStore(root: directory)
            } catch {
                throw SettingsError.invalid(
                    SettingKeys.Files.directory, expected: "a directory Parley can create and write")
            }
        case .postgres:
            return PostgresBlobStore(database: database, logger: Runtime.logger("files"))
        }
    }

    /// The HTTPS reader of the issuers' keys, when one of them has a `jwksUrl`; a CA file
    /// that holds no certificate stops the start.
    static func issuerKeyFetcher(for issuers: [TrustedIssuer], caFile: String?, rule: OutboundRule) throws
        -> HTTPSKeyFetcher?
    {
        let byURL = issuers.contains { if case .url = $0.keys { true } else { false } }
        guard byURL else { return nil }
        do {
            return try HTTPSKeyFetcher(caFile: caFile, rule: rule)
        } catch let error as IssuerKeyReadError {
            throw SettingsError.invalid(SettingKeys.Auth.caFile, expected: "a PEM bundle of certificates (\(error))")
        }
    }

    /// A sender per configured provider, over one HTTP client.
    static func pushSenders(_ providers: Settings.PushProviders, client: PushHTTPClient) -> PushSenders {
        var senders: PushSenders = [:]
        if let apns = providers.apns { senders[.apns] = APNsSender(configuration: apns, client: client) }
        if let fcm = providers.fcm { senders[.fcm] = FCMSender(configuration: fcm, client: client) }
        if let webhook = providers.webhook { senders[.webhook] = WebhookSender(configuration: webhook, client: client) }
        return senders
    }

    /// The room service's budgets (sends, rooms' changes): asked once per batch of sends, so a
    /// quiet key leases ahead for a while (<doc:AbuseLimits>), in `serve` and the ingest alike.
    static func roomBuckets(_ store: RedisTokenBuckets) -> LeasedTokenBuckets {
        LeasedTokenBuckets(store: store, idleLease: LeasedTokenBuckets.defaultIdleLease)
    }
}

/// What both graphs' parts hold to build the room and message adapters, built alike by each.
protocol RoomStoreParts {
    var postgres: PostgresPool { get }
    var fileLinks: FileLinks { get }
    /// `PARLEY_RECEIPTS_MAX_MEMBERS`.
    var receiptsMaxMembers: Int { get }
}

extension RoomStoreParts {
    func rooms(_ logger: Logger) -> PostgresRoomRepository {
        PostgresRoomRepository(
            database: postgres, logger: logger, fileLinks: fileLinks, receiptsMaxMembers: receiptsMaxMembers)
    }

    /// - Parameters:
    ///   - receiptsInAnswers: whether a send's answer carries its receipts (the REST API's; the
    ///     ingest's reach no client).
    ///   - localRelay: the outbox relay of this process, which its sends wake directly.
    func messages(
        _ logger: Logger, receiptsInAnswers: Bool = true, localRelay: LocalRelay? = nil
    ) -> PostgresMessageRepository {
        PostgresMessageRepository(
            database: postgres, logger: logger, fileLinks: fileLinks, receiptsMaxMembers: receiptsMaxMembers,
            receiptsInAnswers: receiptsInAnswers, localRelay: localRelay)
    }
}

extension ServeGraph.Parts: RoomStoreParts {}
extension WorkerGraph.Parts: RoomStoreParts {}

extension Adapters {
    /// Delivery receipts as `serve` and the ingest take them: the service over the store, and
    /// the coalescer in front of it (a service the process runs, and stops after what feeds it).
    static func receipts(rooms: RoomService, database: PostgresPool, logger: Logger) -> (
        service: ReceiptService, coalescer: Coalescer<RoomUser>
    ) {
        let store = PostgresReceiptRepository(database: database, logger: logger)
        let coalescer = Coalescer<RoomUser>(
            onFailure: { error in logger.warning("delivery receipts not stored", metadata: ["error": "\(error)"]) },
            write: ReceiptService.write(to: store))
        return (ReceiptService(rooms: rooms, receipts: store, marks: coalescer), coalescer)
    }
}
