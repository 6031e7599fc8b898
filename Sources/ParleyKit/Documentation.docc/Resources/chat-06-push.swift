import Foundation
import ParleyKit

let parley = ParleyClient(baseURL: URL(string: "https://chat.example.com")!)

func didRegister(deviceToken: Data) async throws {
    let hex = deviceToken.map { String(format: "%02x", $0) }.joined()
    try await parley.registerPushToken(hex, provider: .apns)
}

func signOut() async {
    await parley.signOut()
}
