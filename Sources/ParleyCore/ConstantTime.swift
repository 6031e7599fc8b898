/// Comparisons of secrets and of codes made from them.
enum ConstantTime {
    /// Equal without an early exit, so the time taken says nothing of where a guess went wrong
    /// (only whether its length was right).
    static func equal(_ lhs: some Collection<UInt8>, _ rhs: some Collection<UInt8>) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for (left, right) in zip(lhs, rhs) { difference |= left ^ right }
        return difference == 0
    }
}
