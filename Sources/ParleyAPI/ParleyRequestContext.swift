import Hummingbird
import Logging

/// The request context of every Parley route.
///
/// Later issues add an authenticated child context whose `init` throws without an identity.
public struct ParleyRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
    }
}
