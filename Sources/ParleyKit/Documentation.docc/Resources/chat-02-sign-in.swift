import Foundation
import ParleyKit

let parley = ParleyClient(baseURL: URL(string: "https://chat.example.com")!)

func signIn(email: String, password: String) async throws {
    try await parley.signIn(email: email, password: password)
    // or, with the app's identity provider: try await parley.signIn(token: idToken)
    await parley.tokens?.setOnRenewal { tokens in
        // Keep them where the next launch (and a notification extension) finds them.
        Keychain.save(tokens)
    }
}
