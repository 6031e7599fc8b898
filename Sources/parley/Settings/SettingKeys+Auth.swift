import Foundation

extension SettingKeys {
    enum Auth {
        static let issuersFile = SettingKey(
            "auth.issuersFile",
            "JSON file of the trusted issuers: an array of {issuer, audience, jwksUrl or jwksFile, algorithms "
                + "(RS256, ES256, EdDSA), claims?}; POST /v1/auth/token exchanges their tokens. Unset: none (404).")
        static let linkVerifiedEmail = SettingKey(
            "auth.linkVerifiedEmail", default: "off",
            "Whether an issuer's new user whose token says email_verified: true signs in to the existing account "
                + "of that e-mail (on) or is refused with 409 email-taken (off).")
        static let password = SettingKey(
            "auth.password", default: "on",
            "Whether passwords sign in: off, POST /v1/auth/register and /v1/auth/login answer 404.")
        static let caFile = SettingKey(
            "auth.caFile", "Extra CA certificates (PEM bundle) trusted for issuers' jwksUrl, besides the system's.")
        static let all = [issuersFile, linkVerifiedEmail, password, caFile]
    }
}
