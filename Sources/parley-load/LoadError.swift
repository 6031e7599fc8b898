/// A benchmark that cannot run as asked: what went wrong, for the operator.
struct LoadError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) { self.description = description }
}
