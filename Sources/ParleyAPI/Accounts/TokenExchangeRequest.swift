import ParleyCore

/// `POST /v1/auth/token`'s body: an OAuth 2.0 token exchange (RFC 8693) of a trusted
/// issuer's JWT for a Parley session, in this API's camelCase.
struct TokenExchangeRequest: Decodable {
    static let grantType = "urn:ietf:params:oauth:grant-type:token-exchange"
    static let jwtTokenType = "urn:ietf:params:oauth:token-type:jwt"

    let grantType: String?
    let subjectToken: String?
    let subjectTokenType: String?
    let device: LoginRequest.DeviceBody?

    /// The subject token, once the exchange asked for is the one this route makes.
    func validatedSubjectToken() throws -> String {
        guard grantType == Self.grantType else {
            throw ParleyError.invalidRequest("grantType must be \(Self.grantType)", field: "grantType")
        }
        guard subjectTokenType == Self.jwtTokenType else {
            throw ParleyError.invalidRequest(
                "subjectTokenType must be \(Self.jwtTokenType)", field: "subjectTokenType")
        }
        guard let subjectToken, !subjectToken.isEmpty else {
            throw ParleyError.invalidRequest("subjectToken is required", field: "subjectToken")
        }
        return subjectToken
    }
}
