import Foundation
import Testing

@testable import parley

/// `PARLEY_POSTGRES_REPLICAS` and its bounds: the primary's settings but for the address,
/// and a read-your-writes window no shorter than the lag a replica may have.
struct ReplicaSettingsTests {
    @Test func replicasTakeThePrimarysSettingsAndTheWindowCoversTheLag() throws {
        #expect(try Settings(environment: [:]).postgresReplicas() == nil)
        let settings = Settings(environment: [
            "PARLEY_POSTGRES_REPLICAS": "10.0.0.2:5432, replica-2:6432", "PARLEY_POSTGRES_DATABASE": "chat",
        ])
        let replicas = try #require(try settings.postgresReplicas())
        #expect(
            replicas.replicas.map { "\($0.host):\($0.port) \($0.database)" } == [
                "10.0.0.2:5432 chat", "replica-2:6432 chat",
            ])
        #expect(replicas.maxLag == .seconds(5) && replicas.window == .seconds(10))
        for bad in ["replica", "replica:", ":5432", "replica:70000", "a:1,b"] {
            #expect(throws: SettingsError.self, "\(bad)") {
                try Settings(environment: ["PARLEY_POSTGRES_REPLICAS": bad]).postgresReplicas()
            }
        }
        #expect(throws: SettingsError.self) {
            try Settings(environment: [
                "PARLEY_POSTGRES_REPLICAS": "r:5432", "PARLEY_POSTGRES_REPLICA_MAX_LAG": "9",
            ]).postgresReplicas()
        }
    }
}
