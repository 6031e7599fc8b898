import ParleyCore
import ServiceLifecycle

@testable import parley

extension APIHarness {
    /// `parley worker`'s parts over the test's connections, with no role yet: a test sets the
    /// parts of the roles it runs, as `parley worker --roles` would.
    func workerParts() -> WorkerGraph.Parts {
        WorkerGraph.Parts(
            postgres: database, redis: redis, fileLinks: Self.fileLinks, receiptsMaxMembers: receiptsMaxMembers,
            process: "test-\(namespace)",
            logger: { _ in .quiet })
    }
}

extension WorkerGraph {
    /// The graph's services in one group, to run beside a test and stop when it ends.
    func serviceGroup() -> ServiceGroup {
        ServiceGroup(configuration: .init(services: services.map { .init(service: $0) }, logger: .quiet))
    }
}
