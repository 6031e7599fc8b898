/// The account rules an operator configures.
public struct AccountPolicy: Sendable {
    public var accessTokenLifetime: Duration
    public var refreshTokenLifetime: Duration
    public var mqttTokenLifetime: Duration
    /// Whether `POST /v1/auth/register` creates accounts (otherwise administrators do).
    public var registrationOpen: Bool
    /// Whether passwords sign in at all (`PARLEY_AUTH_PASSWORD`): off, `register` and
    /// `login` are not routes (404), and only a trusted issuer's token signs in.
    public var passwordSignIn: Bool
    /// Password attempts (logins and re-checks) per minute on one account from one address.
    public var loginLimitPerEmail: Int
    /// Password attempts per minute on one account from every address that never signed in to
    /// it, together: guessing spread over many addresses stays bounded while the owner's own
    /// addresses keep their budgets.
    public var loginLimitPerAccount: Int
    /// Logins per minute from one address, whatever the account.
    public var loginLimitPerAddress: Int
    public var registerLimitPerAddress: Int
    public var rateLimitWindow: Duration
    /// Whom `GET /v1/users` finds.
    public var directory: DirectoryVisibility

    public init(
        accessTokenLifetime: Duration = .seconds(3600),
        refreshTokenLifetime: Duration = .seconds(30 * 24 * 3600),
        mqttTokenLifetime: Duration = .seconds(12 * 3600),
        registrationOpen: Bool = true,
        loginLimitPerEmail: Int = 10,
        loginLimitPerAccount: Int = 30,
        loginLimitPerAddress: Int = 50,
        registerLimitPerAddress: Int = 10,
        rateLimitWindow: Duration = .seconds(60),
        directory: DirectoryVisibility = .everyone,
        passwordSignIn: Bool = true
    ) {
        self.passwordSignIn = passwordSignIn
        self.accessTokenLifetime = accessTokenLifetime
        self.refreshTokenLifetime = refreshTokenLifetime
        self.mqttTokenLifetime = mqttTokenLifetime
        self.registrationOpen = registrationOpen
        self.loginLimitPerEmail = loginLimitPerEmail
        self.loginLimitPerAccount = loginLimitPerAccount
        self.loginLimitPerAddress = loginLimitPerAddress
        self.registerLimitPerAddress = registerLimitPerAddress
        self.rateLimitWindow = rateLimitWindow
        self.directory = directory
    }
}

/// Password length rules (bcrypt reads at most 72 bytes).
public enum PasswordRule {
    public static func validated(_ password: String, field: String = "password") throws -> String {
        guard password.count >= 8, password.utf8.count <= 72 else {
            throw ParleyError.invalidRequest("\(field) must be 8 to 72 bytes long", field: field)
        }
        return password
    }
}

extension ParleyError {
    /// Too many attempts; `retryAfter` seconds until the next is allowed.
    public static func rateLimited(retryAfter: Int) -> ParleyError {
        var error = ParleyError(.rateLimited, "Too many attempts; try again in \(retryAfter) s.")
        error.retryAfter = retryAfter
        return error
    }

    public static let unauthorized = ParleyError(.unauthorized, "A valid access token is required.")
    public static let forbidden = ParleyError(.forbidden, "This needs rights the caller does not have.")
}
