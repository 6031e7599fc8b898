import ParleyPostgres
import ParleyTestSupport
import PostgresNIO
import Testing

/// What every connection of Parley's pools asks PostgreSQL at startup: generic plans for its
/// prepared statements, and no JIT compiling (which a generic plan's estimates set off at
/// 40 ms a statement that runs in under 1).
struct SessionSettingsTests {
    @Test func everyConnectionUsesGenericPlansWithoutJIT() async throws {
        let configuration = try await TestServices.shared().makeDatabase(migrated: false)
        try await PostgresPool(configuration: configuration, logger: .quiet).withRunningClient { pool in
            let settings = try await pool.client.query(
                "SELECT current_setting('jit'), current_setting('plan_cache_mode'), current_setting('application_name')",
                logger: .quiet
            ).first((String, String, String).self)
            #expect(settings?.0 == "off")
            #expect(settings?.1 == "force_generic_plan")
            #expect(settings?.2 == "parley")
        }
    }
}
