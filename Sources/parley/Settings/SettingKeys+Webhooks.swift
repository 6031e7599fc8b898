import Foundation

extension SettingKeys {
    /// Requests Parley makes to other servers: webhooks (``ParleyCore/OutboundRule``).
    enum Outbound {
        static let allowHTTP = SettingKey(
            "outbound.allowHttp", default: "off",
            "Whether webhook URLs may be http (on) as well as https (off: https only).")
        static let allow = SettingKey(
            "outbound.allow",
            "Comma-separated address ranges (CIDR, e.g. 127.0.0.0/8) that webhooks, the message hook and issuers' "
                + "jwksUrl may reach although they are loopback, private, link-local or otherwise refused. Unset: none."
        )
        static let caFile = SettingKey(
            "outbound.caFile", "Extra CA certificates (PEM bundle) trusted for webhook URLs, besides the system's.")
        static let all = [allowHTTP, allow, caFile]
    }

    /// The app's backend asked about every message before it is stored (``ParleyCore/MessageHookGate``).
    enum MessageHook {
        static let url = SettingKey(
            "message.hookUrl",
            "URL asked about every new message and edit before it is stored (a batch per request): allow, reject "
                + "or replace. Unset: no hook.")
        static let secret = SettingKey(
            "message.hookSecret", secret: true,
            "The hook's signing secret (whsec_ and the base64 of 32 bytes), as webhooks are signed.")
        static let timeoutMilliseconds = SettingKey(
            "message.hookTimeoutMilliseconds", default: "300", "Milliseconds the hook has to answer a batch.")
        static let failure = SettingKey(
            "message.hookFailure", default: "allow",
            "What a hook that does not answer in time (or answers otherwise) means: allow (the messages are stored) "
                + "or reject (rejected-by-policy).")
        static let all = [url, secret, timeoutMilliseconds, failure]
    }
}
