import Crypto
import ParleyCore

extension FileLinks {
    /// The tests' file-link key: fixed, so a URL signed by one repository or process of a test
    /// opens through every other, as the deployment's key makes them do.
    public static let testing = FileLinks(key: SymmetricKey(data: Array(repeating: UInt8(7), count: 32)))
}
