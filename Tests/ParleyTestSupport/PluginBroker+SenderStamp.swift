import Foundation
import ParleyCore

extension PluginBroker {
    /// The key a test broker's plugin signs its chat-in sender stamps with (`plugin_opt_stamp_key`).
    public static let stampKeyBase64 = "ICEiIyQlJicoKSorLC0uLzAxMjM0NTY3ODk6Ozw9Pj8="

    /// The same key, for an ingest that verifies the stamps.
    public static var stampKey: SenderStampKey {
        // 32 fixed bytes: the initialiser cannot fail.
        try! SenderStampKey(bytes: Array(Data(base64Encoded: stampKeyBase64)!))
    }
}
