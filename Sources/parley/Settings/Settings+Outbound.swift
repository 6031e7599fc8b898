import Foundation
import ParleyCore
import ParleyOutbound

extension Settings {
    /// Where webhooks may go (`PARLEY_OUTBOUND_ALLOW_HTTP`, `PARLEY_OUTBOUND_ALLOW`).
    func outboundRule() throws -> OutboundRule {
        switch AddressRange.list(string(SettingKeys.Outbound.allow) ?? "") {
        case .success(let ranges):
            return OutboundRule(allowHTTP: try bool(SettingKeys.Outbound.allowHTTP), allowed: ranges)
        case .failure:
            throw SettingsError.invalid(SettingKeys.Outbound.allow, expected: "comma-separated CIDR ranges")
        }
    }

    /// The message hook (`PARLEY_MESSAGE_HOOK_URL`), its requests bound by the outbound rule;
    /// nil when none is set.
    func messageHook() throws -> MessageHookGate? {
        guard let url = string(SettingKeys.MessageHook.url) else { return nil }
        let rule = try outboundRule()
        do {
            _ = try rule.endpoint(url)
        } catch {
            throw SettingsError.invalid(SettingKeys.MessageHook.url, expected: "an https URL (\(error.detail))")
        }
        guard let secret = string(SettingKeys.MessageHook.secret) else {
            throw SettingsError.missing(SettingKeys.MessageHook.secret)
        }
        guard let signature = WebhookSignature(secret: secret) else {
            throw SettingsError.invalid(SettingKeys.MessageHook.secret, expected: "whsec_ and the base64 of its key")
        }
        let milliseconds = try required(
            try int(SettingKeys.MessageHook.timeoutMilliseconds, in: 10...60_000),
            SettingKeys.MessageHook.timeoutMilliseconds)
        guard let failure = MessageHookGate.Failure(rawValue: string(SettingKeys.MessageHook.failure) ?? "") else {
            throw SettingsError.invalid(SettingKeys.MessageHook.failure, expected: "allow or reject")
        }
        let client = OutboundHTTPClient(
            rule: rule, resolver: SystemAddressResolver(), caFile: string(SettingKeys.Outbound.caFile))
        return MessageHookGate(
            hook: HTTPMessageHook(url: url, signature: signature, timeout: .milliseconds(milliseconds), client: client),
            failure: failure)
    }
}
